package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// TestProbitHMCInvariance checks that the exact HMC move on the Probit
// auxiliaries leaves the posterior invariant: states drawn from the joint
// distribution (scalars and tree from the prior, locations by the
// diffusion, u = Z + ε, Y = 1{u > 0}) are posterior states given their own
// Y, so after a few moves the statistics of u must keep their law. It
// compares the mean change of each statistic over independent replicates
// with 4 standard errors, for the test priors and with the precision
// clamped small (σ² = 20, where the walls bind: the regime of the animals
// posterior). A velocity drawn without the unit noise, a reflection by the
// identity instead of K, or C without the tree's shared times shift the
// statistics by many standard errors.
func TestProbitHMCInvariance(t *testing.T) {
	t.Parallel()
	const n, d, reps, moves = 6, 3, 20000, 2
	for _, c := range []struct {
		name string
		sets map[string]float64
	}{
		{"test priors", nil},
		{"prec = 0.05", map[string]float64{"prec": 0.05}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := compileSource(t, "probit.pydt", []byte(probitModel),
				map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, c.sets)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			h, ok := probitHMC(m, 0)
			if !ok {
				t.Fatal("no hmc(u) move")
			}
			stats := func(ch *Chain) []float64 {
				var sq, abs, pair, sum2, near, spread float64
				for dim := range d {
					var s float64
					for i := range n {
						u := ch.trees[0].aux[i*d+dim]
						sq += u * u
						abs += math.Abs(u)
						s += u
						if math.Abs(u) < 0.5 {
							near++
						}
					}
					lo, hi := math.Inf(1), math.Inf(-1)
					for i := range n {
						lo, hi = min(lo, ch.trees[0].aux[i*d+dim]), max(hi, ch.trees[0].aux[i*d+dim])
					}
					spread += hi - lo
					pair += ch.trees[0].aux[dim] * ch.trees[0].aux[d+dim]
					sum2 += s * s
				}
				return []float64{sq / (n * d), abs / (n * d), pair / d, sum2 / (n * d), near / (n * d), spread / d}
			}
			names := []string{"mean u²", "mean |u|", "u1·u2", "(Σu)²/n", "P(|u| < ½)", "range"}
			rng := rand.New(rand.NewPCG(51, 52))
			diffs := make([][]float64, len(names))
			var moved float64
			for range reps {
				ch := jointProbitState(t, m, sched, rng)
				before := stats(ch)
				for range moves {
					if err := h.update(ch); err != nil {
						t.Fatal(err)
					}
				}
				after := stats(ch)
				for i := range before {
					diffs[i] = append(diffs[i], after[i]-before[i])
				}
				moved += math.Abs(after[0] - before[0])
			}
			checkMeanChanges(t, names, diffs)
			if moved == 0 {
				t.Error("the move never changed u")
			}
		})
	}
}
