package predict

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// probitIS estimates, given the tree, P(y* = q) for each query q (binary
// entries, NaN missing) under the posterior given the binary data y by
// self-normalised importance sampling from the generative process: the
// node locations from the prior given the tree (bp with no evidence), the
// new point by newPoint, weights p(y | Z) = Π Φ(±Z) over the observed
// entries, and P(q | the new point's divergence at (t, x)) =
// Π Φ(±x/√(1+σ²(1−t))). It returns the estimates and their delta-method
// standard errors.
func probitIS(tr *pydt.Tree, d int, p Params, y []float64, queries [][]float64, draws int, seed uint64) (est, se []float64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	prior := bp.New(tr, d)
	if err := prior.SetVariance(p.Variance); err != nil {
		panic(err)
	}
	x := make([]float64, tr.Cap()*d)
	loc := make([]float64, d)
	ws := make([]float64, draws)
	fs := make([][]float64, len(queries))
	for q := range fs {
		fs[q] = make([]float64, draws)
	}
	for s := range draws {
		if err := prior.SampleLocations(rng, x); err != nil {
			panic(err)
		}
		var lw float64
		for k, v := range y {
			if math.IsNaN(v) {
				continue
			}
			z := x[k] // leaf i is node i: x[i*d+k'] = x[k]
			if v == 0 {
				z = -z
			}
			lw += stdlib.LogNormCDF(z)
		}
		t := newPoint(rng, tr, p, x, loc)
		ws[s] = math.Exp(lw)
		for q, yq := range queries {
			f := 1.0
			for k, v := range yq {
				if math.IsNaN(v) {
					continue
				}
				z := loc[k] / math.Sqrt(1+p.Variance*t.OneMinus())
				if v == 0 {
					z = -z
				}
				f *= math.Exp(stdlib.LogNormCDF(z))
			}
			fs[q][s] = f
		}
	}
	var sw float64
	for _, w := range ws {
		sw += w
	}
	est, se = make([]float64, len(queries)), make([]float64, len(queries))
	for q := range queries {
		var swf float64
		for s, w := range ws {
			swf += w * fs[q][s]
		}
		r := swf / sw
		var ss float64
		for s, w := range ws {
			e := w * (fs[q][s] - r)
			ss += e * e
		}
		est[q], se[q] = r, math.Sqrt(ss)/sw
	}
	return est, se
}

// TestProbitGibbsAgainstImportanceSampling compares the probability of a
// new row's binary vector from ProbitGibbs (refreshing the auxiliary
// variables with the tree fixed) with independent importance sampling from
// the generative process given the tree.
func TestProbitGibbsAgainstImportanceSampling(t *testing.T) {
	cases := []struct {
		name string
		p    Params
		n, d int
		y    []float64
	}{
		{"N=4, D=2", Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 1}, Variance: 2}, 4, 2,
			[]float64{1, 1, 1, 0, 0, 0, 0, math.NaN()}},
		{"N=4, D=3, c/(1-t)^2", Params{Alpha: -0.2, Beta: 0.4, Div: pydt.DivInvSq{C: 0.7}, Variance: 3}, 4, 3,
			[]float64{1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci+21), 3))
			tr, _, err := sim.Draw(rng, c.n, sim.Params{Alpha: c.p.Alpha, Beta: c.p.Beta, Div: c.p.Div, Variance: c.p.Variance, Dims: c.d})
			if err != nil {
				t.Fatal(err)
			}
			// Queries: every binary vector, and some with missing entries.
			var queries [][]float64
			for b := range 1 << c.d {
				q := make([]float64, c.d)
				for k := range q {
					q[k] = float64(b >> k & 1)
				}
				queries = append(queries, q)
			}
			nan := math.NaN()
			queries = append(queries, append([]float64{1}, make([]float64, c.d-1)...))
			for k := 1; k < c.d; k++ {
				queries[len(queries)-1][k] = nan
			}
			queries = append(queries, append([]float64{nan, 0}, make([]float64, c.d-2)...))

			// Gibbs: per-draw probabilities, batch means for the error.
			const burn, batches = 20, 30
			draws := 3000
			if testing.Short() {
				draws = 1500
			}
			vals := make([][]float64, len(queries))
			lik := bp.New(tr, c.d)
			err = ProbitGibbs(rand.New(rand.NewPCG(uint64(ci), 9)), lik, c.p, c.y, burn, draws, Options{Nodes: 32}, func(mx *Mixture) error {
				var total float64
				for q, x := range queries {
					v := math.Exp(mx.LogProbBinary(x, nil))
					vals[q] = append(vals[q], v)
					if q < 1<<c.d {
						total += v
					}
				}
				if !(math.Abs(total-1) <= 1e-9) {
					t.Errorf("probabilities of the %d binary vectors sum to %v", 1<<c.d, total)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			isDraws := 200000
			if testing.Short() {
				isDraws = 80000
			}
			est, se := probitIS(tr, c.d, c.p, c.y, queries, isDraws, uint64(ci+50))
			tols := make([]float64, len(queries))
			for q, x := range queries {
				var mean float64
				for _, v := range vals[q] {
					mean += v
				}
				mean /= float64(len(vals[q]))
				bm := make([]float64, batches)
				per := len(vals[q]) / batches
				for b := range bm {
					for _, v := range vals[q][b*per : (b+1)*per] {
						bm[b] += v / float64(per)
					}
				}
				gse := Summarize(bm).SE
				tol := 4 * math.Sqrt(se[q]*se[q]+gse*gse)
				tols[q] = tol + 1e-4
				if d := math.Abs(mean - est[q]); !(d <= tol+1e-4) {
					t.Errorf("P(y* = %v): Gibbs %.5f ± %.2g, importance sampling %.5f ± %.2g", x, mean, gse, est[q], se[q])
				}
				t.Logf("P(y* = %v): Gibbs %.5f ± %.2g, importance sampling %.5f ± %.2g", x, mean, gse, est[q], se[q])
			}
			// Power: the prior predictive given the tree (the data
			// ignored) is told apart from the posterior one.
			none := make([]float64, len(c.y))
			for k := range none {
				none[k] = math.NaN()
			}
			far := 0.0
			err = ProbitGibbs(rand.New(rand.NewPCG(uint64(ci), 10)), lik, c.p, none, 0, 1, Options{Nodes: 32}, func(mx *Mixture) error {
				for q, x := range queries {
					far = max(far, math.Abs(math.Exp(mx.LogProbBinary(x, nil))-est[q])/tols[q])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the prior predictive given the tree is %.1f tolerances away", far)
			if far < 1.5 {
				t.Errorf("the prior predictive is within %.2f tolerances of the posterior one: the test has no power", far)
			}
		})
	}
}

const probitSrc = `dim N, D
data X : binary[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
for i in 1:N, d in 1:D {
  X[i, d] ~ Probit(Z[i, d])
}
`

// TestPredictRunProbit runs a Probit model and predicts binary rows: the
// probabilities of all binary vectors sum to one, a missing entry's
// imputed probability is the ratio of the joint probabilities, the result
// depends only on the seed, and non-binary rows are refused.
func TestPredictRunProbit(t *testing.T) {
	y := []float64{1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}
	x := &dataset.Matrix{Rows: 8, Cols: 2, Data: y, Source: "y.csv"}
	m := compile(t, probitSrc, x)
	dir := t.TempDir()
	if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 20, Chains: 2, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	test := [][]float64{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, nan}, {nan, nan}}
	opt := RunOptions{Trees: 4, ProbitBurn: 5, ProbitDraws: 3, Seed: 7}
	res, err := PredictRun(m, dir, test, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Binary || res.Trees != 4 {
		t.Fatalf("Binary %v, Trees %d", res.Binary, res.Trees)
	}
	var total float64
	for _, l := range res.LogDensity[:4] {
		total += math.Exp(l)
	}
	if !(math.Abs(total-1) <= 1e-9) {
		t.Errorf("probabilities of the four binary rows sum to %v", total)
	}
	p1 := math.Exp(res.LogDensity[2]) + math.Exp(res.LogDensity[3])
	if d := math.Exp(res.LogDensity[4]) - p1; !(math.Abs(d) <= 1e-9) {
		t.Errorf("P(y1 = 1) = %v, sum of joints %v", math.Exp(res.LogDensity[4]), p1)
	}
	if want := math.Exp(res.LogDensity[3]) / p1; !(math.Abs(res.Imputed[4][1]-want) <= 1e-9) || res.Imputed[4][0] != 1 {
		t.Errorf("imputed %v, P(y2 = 1 | y1 = 1) = %v", res.Imputed[4], want)
	}
	if !(math.Abs(res.LogDensity[5]) <= 1e-12) {
		t.Errorf("an all-missing row has log probability %v", res.LogDensity[5])
	}
	again, err := PredictRun(m, dir, test, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Seed = 8
	other, err := PredictRun(m, dir, test, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range test {
		if again.LogDensity[i] != res.LogDensity[i] {
			t.Errorf("row %d: %v then %v with the same seed", i, res.LogDensity[i], again.LogDensity[i])
		}
	}
	if other.LogDensity[0] == res.LogDensity[0] {
		t.Errorf("another seed gave the same log probability %v", res.LogDensity[0])
	}
	if _, err := PredictRun(m, dir, [][]float64{{0.5, 1}}, opt); err == nil || !strings.Contains(err.Error(), "0 or 1") {
		t.Errorf("non-binary row: error %v", err)
	}
}

func TestAccuracy(t *testing.T) {
	nan := math.NaN()
	test := [][]float64{{nan, 1}, {nan, nan}}
	prob := [][]float64{{0.7, 1}, {0.2, 0.5}}
	truth := [][]float64{{1, 1}, {1, 0}}
	acc, n := Accuracy(test, prob, truth)
	if n != 3 || !(math.Abs(acc-1.0/3) <= 1e-15) {
		t.Errorf("accuracy %v over %d, want 1/3 over 3", acc, n)
	}
}

// TestThresholdSide checks that the binary predictive reads which side of
// the threshold a value says through the likelihood's Side
// (stdlib.ThresholdLeaf), not through its being 0 or 1: a leaf whose Side
// is 1 − 2y, given the flipped data 1 − y and queried at flipped rows,
// gives exactly Probit's answers for the original data and rows.
func TestThresholdSide(t *testing.T) {
	p := Params{Alpha: 0.5, Beta: 0.3, Div: pydt.DivInv{C: 1}, Variance: 2}
	rng := rand.New(rand.NewPCG(4, 4))
	tr, _, err := sim.Draw(rng, 4, sim.Params{Alpha: p.Alpha, Beta: p.Beta, Div: p.Div, Variance: p.Variance, Dims: 2})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	y := []float64{1, 1, 1, 0, 0, 0, 0, nan}
	flip := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for k, x := range v {
			out[k] = 1 - x
		}
		return out
	}
	flipped := func(y float64) float64 { return 1 - 2*y }
	a, err := probitMixture(rand.New(rand.NewPCG(1, 2)), bp.New(tr, 2), p, y, probitSide, 5, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := probitMixture(rand.New(rand.NewPCG(1, 2)), bp.New(tr, 2), p, flip(y), flipped, 5, 3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float64{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, nan}} {
		if la, lb := a.LogProbBinary(q, nil), b.logProbBinary(flip(q), flipped, nil); la != lb {
			t.Errorf("row %v: Probit %v, flipped side %v", q, la, lb)
		}
	}
	if _, err := probitMixture(rng, bp.New(tr, 2), p, []float64{2, 1, 1, 0, 0, 0, 0, 0}, probitSide, 1, 1, Options{}); err == nil {
		t.Error("a value on neither side: no error")
	}
}
