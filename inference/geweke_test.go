package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The priors keep divergence times where float64 represents them: with a
// large alpha or a small c, data drawn from the model can have leaves whose
// split lies closer to t = 1 than float64 resolves, so that two data rows
// are bitwise identical; the model's posterior for identical rows is
// degenerate (their split runs to t = 1), which no sampler can follow.
//
// TestGeweke is Geweke's (2004) joint-distribution test of the whole
// sampler: draws of (tree, hyperparameters, data) from the prior
// (marginal-conditional) must agree with a chain that alternates the
// sampler's sweep with fresh draws of the data given everything else
// (successive-conditional). Means of the statistics are compared with
// their combined Monte Carlo standard error (batch means for the chain).
func TestGeweke(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	const model = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 4)
beta ~ Beta(2, 3)
c ~ Gamma(4, 2)
prec ~ Gamma(3, 3)
X ~ PYDT(alpha, beta, c, 1 / prec)
`
	names := []string{"internal nodes", "root time", "root degree", "sum of times"}
	cases := []struct{ n, d int }{{4, 1}, {5, 2}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("N=%d,D=%d", c.n, c.d), func(t *testing.T) {
			m := compileModel(t, model, c.n, c.d, nil)
			for _, v := range m.Scalars() {
				names = append(names[:4:4], v.Name)
			}
			allNames := []string{"internal nodes", "root time", "root degree", "sum of times"}
			for _, v := range m.Scalars() {
				allNames = append(allNames, v.Name)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			const draws = 20000
			prior := make([][]float64, len(allNames))
			for range draws {
				st, err := m.SamplePrior(rng)
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range treeStats(m, st.Env, st.Tree) {
					prior[i] = append(prior[i], s)
				}
			}
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			// Independent successive-conditional chains: the spread of
			// their means gives an honest standard error even when the
			// sampler mixes slowly (batch means underestimate it then).
			const chains, burn, iters = 8, 1000, 6000
			chainMeans := make([][]float64, len(allNames))
			for k := range chains {
				ch, err := NewChain(m, sched, 3, uint64(100+k))
				if err != nil {
					t.Fatal(err)
				}
				redrawData(t, ch)
				sums := make([]float64, len(allNames))
				for it := range burn + iters {
					if err := ch.Sweep(); err != nil {
						t.Fatal(err)
					}
					redrawData(t, ch)
					if it < burn {
						continue
					}
					for i, s := range treeStats(m, ch.st.Env, ch.Tree) {
						sums[i] += s
					}
				}
				for i := range sums {
					chainMeans[i] = append(chainMeans[i], sums[i]/iters)
				}
			}
			for i, name := range allNames {
				pm, pse := meanSE(prior[i])
				cm, cse := meanSE(chainMeans[i])
				z := (cm - pm) / math.Hypot(pse, cse)
				t.Logf("%-15s prior %.4f ± %.4f  chain %.4f ± %.4f  z = %+.2f", name, pm, pse, cm, cse, z)
				if math.Abs(z) > 4 {
					t.Errorf("%s: successive-conditional mean %.4f differs from the prior mean %.4f (z = %.1f)", name, cm, pm, z)
				}
			}
		})
	}
}

// TestAllMissingRecoversPrior runs the sampler with every data value
// missing: the likelihood is flat, so the tree posterior is the prior and the
// N = 3 three-way split has the exact probability of the generative process,
// h1/(h1+h2) (alpha+2 beta)/(2+alpha) with h1 = Γ(1-β)/Γ(2+α) and
// h2 = h1 (1-β)/(2+α).
func TestAllMissingRecoversPrior(t *testing.T) {
	nan := math.NaN()
	rows := [][]float64{{nan}, {nan}, {nan}}
	alpha, beta := 1.5, 0.3
	m := compileWithData(t, gaussianModel, rows, map[string]float64{"alpha": alpha, "beta": beta, "c": 1, "prec": 1})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 7, 8)
	if err != nil {
		t.Fatal(err)
	}
	const iters = 20000
	var three []float64
	for range iters {
		if err := ch.Sweep(); err != nil {
			t.Fatal(err)
		}
		x := 0.0
		if ch.Tree.NumInternal() == 1 {
			x = 1
		}
		three = append(three, x)
	}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	h1 := math.Exp(lg(1-beta) - lg(2+alpha))
	h2 := h1 * (1 - beta) / (2 + alpha)
	want := h1 / (h1 + h2) * (alpha + 2*beta) / (2 + alpha)
	got, _ := meanSE(three)
	se := batchSE(three)
	if math.Abs(got-want) > 4*se+1e-3 {
		t.Errorf("P(three-way split) = %.4f ± %.4f, exact %.4f", got, se, want)
	}
}
