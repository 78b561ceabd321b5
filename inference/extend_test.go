package inference

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// summaryWithoutWall returns summary.json with its wall time removed: the
// one output that differs between runs of the same seed.
func summaryWithoutWall(t *testing.T, dir string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dir, SummaryFile))), &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "wall_time_seconds")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResumeToExtendsExactly checks the claim of ResumeTo: a run of 40
// sweeps (burn-in 20) extended to 60 — finished, stopped during its
// sweeps, or extended in two steps — writes bit for bit the files of a run
// started with 60 sweeps and burn-in 20, for the Gaussian and the Probit
// models (whose checkpoints carry the auxiliary variables).
func TestResumeToExtendsExactly(t *testing.T) {
	y := &dataset.Matrix{Rows: 4, Cols: 2, Data: []float64{1, 0, 1, math.NaN(), 0, 0, 0, 1}, Source: "y.csv"}
	for _, c := range []struct {
		name string
		m    *Model
	}{
		{"gaussian", compileWithData(t, gaussianModel, smallData, nil)},
		{"probit", compileProbit(t, y)},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			outputs := []string{TraceFile, TreesFile(1), TreesFile(2), ImputeFile, SummaryTreeFile, MEAFile, ConsensusFile, CoclustFile, RunFile}
			if m.Trees[0].Augmented() == nil {
				outputs = append(outputs, MapFile)
			}
			base := Config{Burn: 20, Thin: 2, Chains: 2, Seed: 5, CheckpointEvery: 7, Impute: true}
			want := base
			want.Iters, want.Out = 60, t.TempDir()
			if _, err := Run(context.Background(), m, want); err != nil {
				t.Fatal(err)
			}
			ref, refSummary := readAll(t, want.Out, outputs...), summaryWithoutWall(t, want.Out)
			check := func(name, dir string) {
				t.Helper()
				if got := readAll(t, dir, outputs...); got != ref {
					t.Errorf("%s: the extended run's files differ from those of a run of 60 sweeps", name)
				}
				if got := summaryWithoutWall(t, dir); got != refSummary {
					t.Errorf("%s: summary.json differs:\n%s\n%s", name, got, refSummary)
				}
			}

			// A finished run of 40 sweeps, extended to 60.
			short := base
			short.Iters, short.Out = 40, t.TempDir()
			if _, err := Run(context.Background(), m, short); err != nil {
				t.Fatal(err)
			}
			if _, err := ResumeTo(context.Background(), m, short.Out, 60, nil); err != nil {
				t.Fatal(err)
			}
			check("finished", short.Out)

			// Stopped at sweep 33 of 40, extended to 60.
			short.Out = t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			stopped := short
			stopped.Progress = func(done, _ int, _ float64) {
				if done == 33 {
					cancel()
				}
			}
			if _, err := Run(ctx, m, stopped); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stop: %v", err)
			}
			cancel()
			if _, err := ResumeTo(context.Background(), m, short.Out, 60, nil); err != nil {
				t.Fatal(err)
			}
			check("stopped", short.Out)

			// 40, then 50, then a plain Resume of a run extended to 60 but
			// stopped at 55 (run.json records 60).
			short.Out = t.TempDir()
			if _, err := Run(context.Background(), m, short); err != nil {
				t.Fatal(err)
			}
			if _, err := ResumeTo(context.Background(), m, short.Out, 50, nil); err != nil {
				t.Fatal(err)
			}
			ctx, cancel = context.WithCancel(context.Background())
			if _, err := ResumeTo(ctx, m, short.Out, 60, func(done, _ int, _ float64) {
				if done == 55 {
					cancel()
				}
			}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stop at 55: %v", err)
			}
			cancel()
			if _, err := Resume(context.Background(), m, short.Out, nil); err != nil {
				t.Fatal(err)
			}
			check("two steps", short.Out)

			// Errors: fewer sweeps than done, not more than the burn-in.
			if _, err := ResumeTo(context.Background(), m, short.Out, 45, nil); err == nil {
				t.Error("45 sweeps after 60 done: no error")
			}
			if _, err := ResumeTo(context.Background(), m, short.Out, 20, nil); err == nil {
				t.Error("20 sweeps with a burn-in of 20: no error")
			}
		})
	}
}
