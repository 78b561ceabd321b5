package treemove

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// TestParallelChainIdentical runs the same chain (tree sweeps with a full
// pass after a change of the diffusion variance in every sweep, as the
// engine's Gibbs update of the precision makes) with one worker on one
// core and with two workers on two, and compares the traces (log
// likelihood and the whole tree with its times after every sweep) byte for
// byte.
func TestParallelChainIdentical(t *testing.T) {
	run := func(procs, workers int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		rng := rand.New(rand.NewPCG(21, 22))
		s := dataSampler(t, priorCase{"pydt", 0.5, 0.3, benchCase.div}, 300, 3, rng)
		m := s.Model()
		m.SetWorkers(workers)
		var b strings.Builder
		for sweep := range 15 {
			if err := m.SetVariance(1 + 0.05*float64(sweep%3)); err != nil {
				t.Fatal(err)
			}
			if err := m.Recompute(); err != nil {
				t.Fatal(err)
			}
			if err := s.Sweep(); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d %x\n%s\n", sweep, math.Float64bits(m.LogLik()), s.Tree().Newick())
		}
		return b.String()
	}
	one, two := run(1, 1), run(2, 2)
	if one != two {
		a, b := strings.Split(one, "\n"), strings.Split(two, "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("traces differ at line %d:\none worker, one core: %.200s\ntwo workers, two cores: %.200s", i, a[i], b[i])
			}
		}
		t.Fatalf("traces differ in length: %d and %d lines", len(a), len(b))
	}
}
