package inference

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTimeScaleGaussianInvariance checks that the scale move on c and the
// times, scale(c, times), leaves the posterior of the Gaussian model (data
// at the leaves) invariant, exactly and in isolation: states drawn from the
// joint distribution (scalars and tree from the prior, X by the diffusion)
// are states of the posterior given their own X, so after a few moves the
// statistics must have the same law as before. The test compares the mean
// change of each statistic over independent replicates with 4 standard
// errors of that mean; a wrong Jacobian (K·δ replaced by (K-1)·δ, or log c
// dropped) shifts log c and the sum of s = -log(1-t) by many (checked by
// hand). It runs for the DDT (alpha = beta = 0 clamped, the set-up of the
// mixing benchmark) and for a PYDT with alpha and beta free.
//
// The Gaussian model's schedule does not run the move (NewSchedule adds it
// only with a latent leaf layer): measured at N = 1000, D = 2 it cost 16%
// per sweep and gave no more effective samples per second
// (docs/benchmarks.md). The test keeps it exact for the day it is.
func TestTimeScaleGaussianInvariance(t *testing.T) {
	t.Parallel()
	const n, d, reps, moves = 6, 2, 3000, 3
	for _, tc := range []struct {
		name string
		sets map[string]float64
	}{
		{"ddt", map[string]float64{"alpha": 0, "beta": 0}},
		{"pydt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compileModel(t, "dim N, D\ndata X : real[N, D]\n"+gewekePriors+"X ~ PYDT(alpha, beta, c, 1 / prec)\n", n, d, tc.sets)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			ts, ok := timeScale(m, 0)
			if !ok {
				t.Fatal("no scale move on c and the times")
			}
			cv, _ := m.G.Lookup("c")
			stats := func(ch *Chain) []float64 {
				var sum float64
				for _, b := range ch.trees[0].Tree.PreOrder(nil) {
					if !ch.trees[0].Tree.IsLeaf(b) {
						sum -= ch.trees[0].Tree.Time(b).LogOneMinus()
					}
				}
				return []float64{math.Log(ch.get(cv)), sum, -ch.trees[0].Tree.Time(ch.trees[0].Tree.Root()).LogOneMinus(), ch.trees[0].lik.LogLik()}
			}
			names := []string{"log c", "sum of s", "root s", "log lik"}
			rng := rand.New(rand.NewPCG(41, 42))
			diffs := make([][]float64, len(names))
			moved := 0
			for k := range reps {
				// A prior draw (NewChain would spread the tree), with
				// distinct placeholder data until redrawData.
				st, err := m.SamplePrior(rng)
				if err != nil {
					t.Fatal(err)
				}
				for i := range st.Env.Values[m.Data.ID] {
					st.Env.Values[m.Data.ID][i] = rng.NormFloat64()
				}
				ch, err := newChainFrom(m, sched, st, rand.NewPCG(rng.Uint64(), uint64(k)))
				if err != nil {
					t.Fatal(err)
				}
				redrawData(t, ch)
				before := stats(ch)
				for range moves {
					if err := ts.update(ch); err != nil {
						t.Fatal(err)
					}
				}
				after := stats(ch)
				if after[0] != before[0] {
					moved++
				}
				for i := range before {
					diffs[i] = append(diffs[i], after[i]-before[i])
				}
			}
			if moved < reps/2 {
				t.Fatalf("the move changed c in %d of %d replicates", moved, reps)
			}
			checkMeanChanges(t, names, diffs)
		})
	}
}
