package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestProbitSubtreeInvariance checks that ghk(tree, u) leaves the posterior
// invariant: states drawn from the joint distribution (tree, prec, u, Y)
// are posterior states given their own Y, so after two updates (N
// proposals each, any subtree size) the statistics of the tree and of u must
// keep their law: the mean change within 4 standard errors of 0. The tree's
// statistics are the number of branch points, the time of the lowest common
// ancestor of leaves 1 and 2, and that time times the agreement of the two
// leaves' signs (a function of Y, which the move keeps: it tests that the
// tree still depends on Y); those of u are mean u², mean |u|, (Σu)²/n per
// column and u₁u₂. Cases: the test priors (σ² ≈ 1), prec ~ Gamma(4, 80)
// (σ² ≈ 20, where the orthant's walls bind, the regime of animals), and a
// quarter of Y missing (columns with their own factors). The mutations of
// docs/probit-mixing.md (the Φ ratio dropped, S's leaves not last, a wrong
// outside variance) fail it.
func TestProbitSubtreeInvariance(t *testing.T) {
	const n, d, moves = 6, 8, 2
	reps := 6000
	if testing.Short() {
		reps = 3000
	}
	for _, c := range []struct {
		name, prior string
		missing     float64
	}{
		{"test priors", "prec ~ Gamma(3, 3)", 0},
		{"sigma2 near 20", "prec ~ Gamma(4, 80)", 0},
		{"missing entries", "prec ~ Gamma(3, 3)", 0.25},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(probitModel, "prec ~ Gamma(3, 3)", c.prior, 1)
			m := compileSource(t, "probit.pydt", []byte(src),
				map[string]*dataset.Matrix{"Y": {Rows: n, Cols: d, Data: make([]float64, n*d), Source: "y.csv"}}, nil)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			u, ok := probitSubtree(m, 0)
			if !ok {
				t.Fatal("no ghk(tree, u) step")
			}
			step := u.(*probitSubtreeStep)
			step.maxLeaves = n // every subtree
			stats := func(ch *Chain) []float64 {
				tr := ch.trees[0].Tree
				y := ch.st.Env.Values[m.Data.ID]
				var sq, abs, sum2, u12, agree, nobs, npair float64
				for dim := range d {
					var s float64
					for i := range n {
						if math.IsNaN(y[i*d+dim]) {
							continue
						}
						nobs++
						v := ch.trees[0].aux[i*d+dim]
						sq += v * v
						abs += math.Abs(v)
						s += v
					}
					sum2 += s * s
					if !math.IsNaN(y[dim]) && !math.IsNaN(y[d+dim]) {
						a, b := ch.trees[0].aux[dim], ch.trees[0].aux[d+dim]
						u12 += a * b
						agree += math.Copysign(1, a) * math.Copysign(1, b)
						npair++
					}
				}
				lca := tr.Time(lowestCommon(tr, 0, 1)).T()
				if npair > 0 {
					u12, agree = u12/npair, agree/npair
				}
				return []float64{float64(tr.NumInternal()), lca, lca * agree, sq / nobs, abs / nobs, sum2 / nobs, u12}
			}
			names := []string{"branch points", "t(lca(1,2))", "t(lca)·agree", "mean u²", "mean |u|", "(Σu)²/n", "u₁u₂"}
			rng := rand.New(rand.NewPCG(71, 72))
			diffs := make([][]float64, len(names))
			var moved int
			for range reps {
				ch := jointProbitState(t, m, sched, rng)
				if c.missing > 0 {
					y := ch.st.Env.Values[m.Data.ID]
					for k := range y {
						if rng.Float64() < c.missing {
							y[k] = math.NaN()
							if err := ch.trees[0].lik.SetEvidence(pydt.NodeID(k/d), k%d, 0, 0); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				before := stats(ch)
				for range moves {
					if err := step.update(ch); err != nil {
						t.Fatal(err)
					}
				}
				after := stats(ch)
				for i := range before {
					diffs[i] = append(diffs[i], after[i]-before[i])
				}
				if after[1] != before[1] || after[0] != before[0] {
					moved++
				}
				// The evidence is the state's u.
				for k, a := range ch.trees[0].aux {
					mean, prec := ch.trees[0].lik.Evidence(pydt.NodeID(k/d), k%d)
					if y := ch.st.Env.Values[m.Data.ID][k]; !math.IsNaN(y) && (mean != a || prec != 1) {
						t.Fatalf("entry %d: u = %g, evidence %g with precision %g", k, a, mean, prec)
					}
				}
			}
			checkMeanChanges(t, names, diffs)
			t.Logf("the tree's shape changed in %d of %d replicates", moved, reps)
			if moved < reps/10 {
				t.Errorf("the tree changed in only %d of %d replicates", moved, reps)
			}
		})
	}
}
