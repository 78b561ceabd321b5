package plot

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/internal/densetest"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

const directModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(alpha, beta, c, 1 / prec)
`

const noiseModel = `
dim N, D
data X : real[N, D]
param Z : real[N, D]
alpha ~ Gamma(2, 0.5)
beta ~ Beta(1, 1)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
noise ~ Gamma(1, 1)
Z ~ PYDT(alpha, beta, c, 1 / prec)
X ~ Normal(Z, 1 / sqrt(noise))
`

// testModel compiles src with the CSV data bound to X.
func testModel(t *testing.T, src, csv string) *inference.Model {
	t.Helper()
	return testModelData(t, src, "X", csv)
}

// testModelData compiles src with the CSV data bound to the data variable
// name.
func testModelData(t *testing.T, src, name, csv string) *inference.Model {
	t.Helper()
	f, err := lang.Parse("m.pydt", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x, err := dataset.Read("x.csv", strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Data: map[string]*dataset.Matrix{name: x}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := inference.NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const fiveRows = "name,x,y\na,0.1,0.2\nb,0.3,-0.1\nc,1.5,1.0\nd,1.2,0.7\ne,-1.0,0.4\n"

// denseMeans computes E[x_v | data] for every node of tr by conditioning
// the joint Gaussian of Brownian motion from 0 at t = 0 (Cov(x_u, x_v) =
// sigma2 · t of their lowest common ancestor) on the leaves' data observed
// with noise variance tau (0: exactly), one dimension at a time.
func denseMeans(tr *pydt.Tree, x []float64, d int, sigma2, tau float64) []float64 {
	nodes := tr.PostOrder(nil)
	idx := map[pydt.NodeID]int{}
	for i, v := range nodes {
		idx[v] = i
	}
	n := tr.NumLeaves()
	k := len(nodes)
	all := mat.NewDense(k, n, nil) // Cov(node, leaf)
	ll := mat.NewSymDense(n, nil)
	for i, v := range nodes {
		for j := range n {
			all.Set(i, j, sigma2*densetest.LCATime(tr, v, pydt.NodeID(j)).T())
		}
	}
	for i := range n {
		for j := i; j < n; j++ {
			c := sigma2 * densetest.LCATime(tr, pydt.NodeID(i), pydt.NodeID(j)).T()
			if i == j {
				c += tau
			}
			ll.SetSym(i, j, c)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(ll) {
		panic("not positive definite")
	}
	out := make([]float64, tr.Cap()*d)
	for i := range out {
		out[i] = math.NaN()
	}
	for dim := range d {
		y := mat.NewVecDense(n, nil)
		for j := range n {
			y.SetVec(j, x[j*d+dim])
		}
		var w, m mat.VecDense
		if err := chol.SolveVecTo(&w, y); err != nil {
			panic(err)
		}
		m.MulVec(all, &w)
		for _, v := range nodes {
			out[int(v)*d+dim] = m.AtVec(idx[v])
		}
	}
	return out
}

// TestMeanLocations checks the belief-propagation means against Gaussian
// conditioning of the dense joint covariance, for data observed exactly and
// with Normal noise, on a tree with a multifurcation.
func TestMeanLocations(t *testing.T) {
	const newick = "((a:0.5,b:0.5,(c:0.1,d:0.1):0.4):0.3,e:0.8):0.2;"
	vals := map[string]float64{"alpha": 1, "beta": 0.2, "c": 1, "prec": 2, "noise": 4}
	value := func(name string) (float64, bool) { x, ok := vals[name]; return x, ok }
	for _, tc := range []struct {
		name, src string
		tau       float64
	}{
		{"direct", directModel, 0},
		{"normal noise", noiseModel, 1.0 / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testModel(t, tc.src, fiveRows)
			tr, err := pydt.ParseNewick(newick, m.Labels)
			if err != nil {
				t.Fatal(err)
			}
			got, err := MeanLocations(m, tr, value)
			if err != nil {
				t.Fatal(err)
			}
			x := []float64{0.1, 0.2, 0.3, -0.1, 1.5, 1.0, 1.2, 0.7, -1.0, 0.4}
			want := denseMeans(tr, x, 2, 1.0/2, tc.tau)
			for _, v := range tr.PostOrder(nil) {
				for d := range 2 {
					g, w := got[int(v)*2+d], want[int(v)*2+d]
					if !(math.Abs(g-w) <= 1e-10) {
						t.Errorf("node %d, dim %d: %v, want %v", v, d, g, w)
					}
				}
			}
		})
	}
}

func TestMeanLocationsErrors(t *testing.T) {
	m := testModel(t, directModel, fiveRows)
	tr, err := pydt.ParseNewick("((a:0.5,b:0.5):0.3,c:0.8):0.2;", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := func(string) (float64, bool) { return 1, true }
	if _, err := MeanLocations(m, tr, all); err == nil || !strings.Contains(err.Error(), "3 leaves") {
		t.Errorf("tree of the wrong size: %v", err)
	}
	tr5, err := pydt.ParseNewick("(a:0.5,b:0.5,c:0.5,d:0.5,e:0.5):0.5;", m.Labels)
	if err != nil {
		t.Fatal(err)
	}
	// Leaves in another order than the data's rows.
	other, err := pydt.ParseNewick("(a:0.5,b:0.5,c:0.5,d:0.5,e:0.5):0.5;", nil)
	if err != nil {
		t.Fatal(err)
	}
	other.Labels = []string{"b", "a", "c", "d", "e"}
	if _, err := MeanLocations(m, other, all); err == nil || !strings.Contains(err.Error(), "data row 1") {
		t.Errorf("leaves not in the data's order: %v", err)
	}
	none := func(string) (float64, bool) { return 0, false }
	if _, err := MeanLocations(m, tr5, none); err == nil || !strings.Contains(err.Error(), "no value") {
		t.Errorf("no values: %v", err)
	}
}

// TestObserved: the data of a Normal noise model in the data's units (after
// Standardize too); nil when the data are the leaves.
func TestObserved(t *testing.T) {
	want := []float64{0.1, 0.2, 0.3, -0.1, 1.5, 1.0, 1.2, 0.7, -1.0, 0.4}
	if x := Observed(testModel(t, directModel, fiveRows)); x != nil {
		t.Errorf("direct link: %v, want nil", x)
	}
	m := testModel(t, noiseModel, fiveRows)
	if _, err := m.Standardize(); err != nil {
		t.Fatal(err)
	}
	got := Observed(m)
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= 1e-12) {
			t.Fatalf("Observed = %v, want %v", got, want)
		}
	}
}
