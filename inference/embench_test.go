package inference

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/cputime"
	"github.com/pydtlang/pydtlang/internal/synth"
)

// benchRunEM runs `run --method em` (RunEM with the command's defaults:
// K = 10, 50 EM iterations per tree, patience 30) on n points of the
// four-cluster mixture of internal/synth in d dimensions
// (`go run ./examples/gen-synthetic -n N -d D` writes the same data), for
// at most rounds search rounds and the time budget (0: none). It reports
// the best bound, the rounds done and the CPU seconds of the process
// (the machine is shared; wall time is not the cost). N = 10⁵ is skipped
// unless PYDT_BENCH_LARGE is set. Measured figures: docs/em.md, "Scale".
func benchRunEM(b *testing.B, n, d, rounds int, budget time.Duration) {
	benchRunEMConfig(b, n, d, EMConfig{Rounds: rounds, Time: budget})
}

// benchRunEMIters is benchRunEM with no time budget and at most iters EM
// iterations per tree.
func benchRunEMIters(b *testing.B, n, d, rounds, iters int) {
	benchRunEMConfig(b, n, d, EMConfig{Rounds: rounds, EMIters: iters})
}

// benchRunEMConfig is benchRunEM with the search's configuration (Seed
// and Out are set here).
func benchRunEMConfig(b *testing.B, n, d int, cfg EMConfig) {
	if n >= 100000 && os.Getenv("PYDT_BENCH_LARGE") == "" {
		b.Skip("N = 10⁵: set PYDT_BENCH_LARGE=1 to run")
	}
	x, _, err := synth.Mixture(n, d, 4, 2011)
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]*dataset.Matrix{"X": {Rows: n, Cols: d, Data: x, Source: "synth"}}
	m := compileSource(b, "gaussian.pydt", src, data, nil)
	for b.Loop() {
		cpu := cputime.Process().Seconds()
		cfg.Seed, cfg.Out = 1, b.TempDir()
		res, err := RunEM(context.Background(), m, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(cputime.Process().Seconds()-cpu, "cpu-s")
		b.ReportMetric(res.Bound, "bound")
		b.ReportMetric(float64(res.Rounds), "rounds")
	}
}

// EM and the search: 100 rounds at N = 10³; the time budgets of the
// targets (30 s at N = 10⁴, 5 minutes at 10⁵) at larger N.
func BenchmarkRunEM1e3D2(b *testing.B)  { benchRunEM(b, 1000, 2, 100, 0) }
func BenchmarkRunEM1e3D10(b *testing.B) { benchRunEM(b, 1000, 10, 100, 0) }
func BenchmarkRunEM1e4D2(b *testing.B)  { benchRunEM(b, 10000, 2, 100, 25*time.Second) }
func BenchmarkRunEM1e4D10(b *testing.B) { benchRunEM(b, 10000, 10, 100, 25*time.Second) }
func BenchmarkRunEM1e5D2(b *testing.B)  { benchRunEM(b, 100000, 2, 100, 4*time.Minute) }
func BenchmarkRunEM1e5D10(b *testing.B) { benchRunEM(b, 100000, 10, 100, 4*time.Minute) }

// The initial tree alone, with one EM iteration (the budget is spent
// before the first fit): the construction's cost inside RunEM.
func BenchmarkRunEMInit1e4D10(b *testing.B) { benchRunEM(b, 10000, 10, 1, time.Nanosecond) }
func BenchmarkRunEMInit1e5D10(b *testing.B) { benchRunEM(b, 100000, 10, 1, time.Nanosecond) }

// BenchmarkRunEMBoundVsTime reports the best bound reached within
// increasing time budgets (N = 10⁴, D = 10): the bound against wall time.
// summary.json's bound_trace and bound_time_seconds give the same curve
// for any run.
func BenchmarkRunEMBoundVsTime(b *testing.B) {
	for _, s := range []int{5, 10, 20, 40} {
		b.Run(fmt.Sprintf("%ds", s), func(b *testing.B) { benchRunEM(b, 10000, 10, 1000, time.Duration(s)*time.Second) })
	}
}

// The default command's initial trees (every start built, none skipped
// by a time budget), each fitted for one EM iteration, and one round.
func BenchmarkRunEMStarts1e4D10(b *testing.B) { benchRunEMIters(b, 10000, 10, 1, 1) }
func BenchmarkRunEMStarts1e5D10(b *testing.B) { benchRunEMIters(b, 100000, 10, 1, 1) }
