package inference

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/logsumexp"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ghkLogLik estimates log p(Y | tree, σ²) of the probit model by the GHK
// simulator (Geweke-Hajivassiliou-Keane), independently of EP: per column
// d the latent u = z + ε of the N leaves is N(0, σ² C + I), C_ij the time
// of the leaves' lowest common ancestor (C_ii = 1), and p(Y_d) is the
// probability of the orthant sign(u_j) = 2 y_jd − 1. y is N×D in {0, 1}
// (NaN rows of a column are left out of that column). It returns the
// estimate and its Monte Carlo standard error (delta method, summed over
// columns in quadrature).
func ghkLogLik(tr *pydt.Tree, s2 float64, y []float64, n, d, draws int, rng *rand.Rand) (float64, float64) {
	cov := make([]float64, n*n)
	for i := range n {
		for j := range n {
			cov[i*n+j] = s2 * bruteLCATime(tr, i, j)
			if i == j {
				cov[i*n+j] = s2 + 1
			}
		}
	}
	var total, se2 float64
	e := make([]float64, n)
	lw := make([]float64, draws)
	for col := range d {
		var rows []int
		for i := range n {
			if !math.IsNaN(y[i*d+col]) {
				rows = append(rows, i)
			}
		}
		k := len(rows)
		sym := mat.NewSymDense(k, nil)
		for a, i := range rows {
			for b, j := range rows {
				si, sj := 2*y[i*d+col]-1, 2*y[j*d+col]-1
				sym.SetSym(a, b, si*sj*cov[i*n+j])
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			panic("covariance not positive definite")
		}
		var l mat.TriDense
		ch.LTo(&l)
		for m := range draws {
			var w float64
			for a := range k {
				var mu float64
				for b := range a {
					mu += l.At(a, b) * e[b]
				}
				lo := -mu / l.At(a, a) // need e_a > lo
				lp := math.Log(distuv.UnitNormal.Survival(lo))
				w += lp
				// −e_a is N(0, 1) truncated above at −lo.
				e[a] = -distuv.UnitNormal.Quantile(rng.Float64() * math.Exp(lp))
				if math.IsInf(e[a], 0) {
					e[a] = lo
				}
			}
			lw[m] = w
		}
		lm := logsumexp.Of(lw) - math.Log(float64(draws))
		var v float64
		for _, x := range lw {
			r := math.Exp(x - lm)
			v += (r - 1) * (r - 1)
		}
		v /= float64(draws - 1)
		total += lm
		se2 += v / float64(draws)
	}
	return total, math.Sqrt(se2)
}

// TestEMAnimalsStudy is the experiment of docs/em.md, "The animals data":
// for each tree of PYDT_ANIMALS_STUDY (comma-separated Newick files) it
// fits EM with EP on the animals data (examples/binary.pydt) for 50, 200
// and 1000 iterations and prints the EP value, the hyperparameters, and
// EP's log p(Y | T, times, σ²) beside an independent GHK estimate at the
// fitted times and σ²; then the same with σ² held at 1 and 4. Not part of
// the test suite (minutes of CPU).
func TestEMAnimalsStudy(t *testing.T) {
	spec := os.Getenv("PYDT_ANIMALS_STUDY")
	if spec == "" {
		t.Skip("set PYDT_ANIMALS_STUDY=tree.nwk,... to run the animals study")
	}
	y, err := dataset.ReadFile("../examples/data/animals.csv")
	if err != nil {
		t.Fatal(err)
	}
	m := compileExampleFile(t, "binary.pydt", map[string]*dataset.Matrix{"Y": y})
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Trees[0]
	yv := p.env.Values[b.Data.ID]
	draws := 2000
	iters := []int{50, 200, 1000}
	if s := os.Getenv("PYDT_ANIMALS_ITERS"); s == "short" {
		iters = []int{50}
	}
	for _, fixed := range []float64{0, 1, 4} {
		q := *p
		if fixed > 0 {
			q.Opt.PrecPrior = nil
			q.Opt.Variance = fixed
		}
		for _, file := range strings.Split(spec, ",") {
			for _, it := range iters {
				tr, err := pydt.ParseNewick(string(must(os.ReadFile(file))), y.RowLabels)
				if err != nil {
					t.Fatal(err)
				}
				et, err := q.fitTree(tr, nil, it)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				h := et.hyper
				epl, err := em.EPLogLik(et.Tree, h.Variance, yv, b.D, em.Probit{})
				if err != nil {
					t.Fatal(err)
				}
				g, se := ghkLogLik(et.Tree, h.Variance, yv, b.N, b.D, draws, rand.New(rand.NewPCG(1, 2)))
				t.Logf("σ² fixed %v | %s | iters %d (%d done): value %.2f | σ² %.3f c %.3f α %.3f β %.3f | structure %.2f | log p(Y|T,t,σ²): EP %.2f, GHK %.2f ± %.2f, EP − GHK %.2f",
					fixed, file, it, h.Iters, et.Bound, h.Variance, h.C, h.Alpha, h.Beta, pydt.LogStructure(et.Tree, h.Alpha, h.Beta), epl, g, se, epl-g)
			}
		}
	}
}
