package treemove

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// priorCase is a set of prior parameters for the invariance tests.
type priorCase struct {
	name        string
	alpha, beta float64
	div         pydt.Divergence
}

func (c priorCase) params() sim.Params {
	return sim.Params{Alpha: c.alpha, Beta: c.beta, Div: c.div, Variance: 1, Dims: 1}
}

// newSampler returns a sampler on tr with no evidence (constant likelihood).
func newSampler(t testing.TB, tr *pydt.Tree, c priorCase, dims int, rng *rand.Rand) *Sampler {
	t.Helper()
	m := bp.New(tr, dims)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	s, err := New(m, c.alpha, c.beta, c.div, rng)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dataSampler draws a tree of n leaves and its data in dims dimensions from
// the model (sim.Draw) and returns a sampler on that tree observing the data.
func dataSampler(t *testing.T, c priorCase, n, dims int, rng *rand.Rand) *Sampler {
	t.Helper()
	p := c.params()
	p.Dims = dims
	tr, x, err := sim.Draw(rng, n, p)
	if err != nil {
		t.Fatal(err)
	}
	s := newSampler(t, tr, c, dims, rng)
	if err := s.Model().ObserveMatrix(x[:n*dims]); err != nil {
		t.Fatal(err)
	}
	return s
}

// topology returns a canonical Newick-like string of the tree's structure
// with 1-based leaf names and no times, e.g. "((1,2),3)".
func topology(tr *pydt.Tree) string {
	var rec func(v pydt.NodeID) string
	rec = func(v pydt.NodeID) string {
		if tr.IsLeaf(v) {
			return fmt.Sprint(int(v) + 1)
		}
		var parts []string
		for c := range tr.Children(v) {
			parts = append(parts, rec(c))
		}
		sort.Strings(parts)
		return "(" + strings.Join(parts, ",") + ")"
	}
	return rec(tr.Root())
}

// treeStats are the statistics the invariance tests compare.
type treeStats struct {
	internal int
	rootTime float64
	rootDeg  int
	sumTimes float64
	topo     string // N = 3 only
}

func statsOf(tr *pydt.Tree) treeStats {
	root := tr.Root()
	st := treeStats{internal: tr.NumInternal(), rootTime: tr.Time(root).T(), rootDeg: tr.Degree(root)}
	for id := tr.NumLeaves(); id < tr.Cap(); id++ {
		if v := pydt.NodeID(id); tr.InUse(v) {
			st.sumTimes += tr.Time(v).T()
		}
	}
	if tr.NumLeaves() == 3 {
		st.topo = "(1,2,3)"
		if st.rootDeg == 2 {
			for c := range tr.Children(root) {
				if tr.IsLeaf(c) {
					st.topo = threeTopologies[2-int(c)]
				}
			}
		}
	}
	return st
}

// series holds the values of named scalar statistics over draws.
type series map[string][]float64

// statKeys caches the names of the statistics for n leaves.
var statKeys = map[int][2][]string{}

func (s series) add(st treeStats, n int) {
	keys, ok := statKeys[n]
	if !ok {
		for k := 1; k < n; k++ {
			keys[0] = append(keys[0], fmt.Sprintf("P(internal=%d)", k))
		}
		for k := 2; k <= n; k++ {
			keys[1] = append(keys[1], fmt.Sprintf("P(rootdeg=%d)", k))
		}
		statKeys[n] = keys
	}
	for k := 1; k < n; k++ {
		s[keys[0][k-1]] = append(s[keys[0][k-1]], b2f(st.internal == k))
	}
	for k := 2; k <= n; k++ {
		s[keys[1][k-2]] = append(s[keys[1][k-2]], b2f(st.rootDeg == k))
	}
	s["E(root time)"] = append(s["E(root time)"], st.rootTime)
	s["E(sum of times)"] = append(s["E(sum of times)"], st.sumTimes)
	if n == 3 {
		for i, tp := range threeTopologies {
			k := threeKeys[i]
			s[k] = append(s[k], b2f(st.topo == tp))
		}
	}
}

// reserve gives every statistic of s room for n values in all: a long
// chain's series then grows without copying (a fifth of the chain tests'
// time went to growing them).
func (s series) reserve(n int) {
	for k, v := range s {
		if cap(v) < n {
			s[k] = append(make([]float64, 0, n), v...)
		}
	}
}

var threeKeys = []string{"P(((1,2),3))", "P(((1,3),2))", "P(((2,3),1))", "P((1,2,3))"}

// threeTopologies lists the N = 3 topologies; the pair ones are indexed by
// 2 - (the 0-based leaf that is not in the pair).
var threeTopologies = []string{"((1,2),3)", "((1,3),2)", "((2,3),1)", "(1,2,3)"}

// threeLaw returns the exact topology probabilities for N = 3, derived from
// the generative process: the third point leaves the root edge with
// probability h2/(h1+h2) (A(t_root) ~ Exp(h1) and the hazard there is h2),
// otherwise at the root starts a new branch with (α+2β)/(2+α) or follows one
// of the two with (1-β)/(2+α) each; (1-β)/(2+α) = h2/h1, so only that
// ratio r enters: h2/(h1+h2) = r/(1+r), h1/(h1+h2) = 1/(1+r).
func threeLaw(alpha, beta float64) map[string]float64 {
	r := (1 - beta) / (2 + alpha) // h2/h1
	pair := r / (1 + r)
	return map[string]float64{
		"P(((1,2),3))": pair, "P(((1,3),2))": pair, "P(((2,3),1))": pair,
		"P((1,2,3))": 1 / (1 + r) * (alpha + 2*beta) / (2 + alpha),
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// meanSE returns the mean of x and its standard error by batch means over
// 50 batches (independent draws are the special case of batches of any
// length), which accounts for autocorrelation in a chain.
func meanSE(x []float64) (mean, se float64) {
	const nb = 50
	n := len(x) / nb * nb
	var bm [nb]float64
	for i := range n {
		bm[i*nb/n] += x[i]
	}
	for i := range bm {
		bm[i] /= float64(n / nb)
		mean += bm[i]
	}
	mean /= nb
	var ss float64
	for _, b := range bm {
		ss += (b - mean) * (b - mean)
	}
	return mean, math.Sqrt(ss / (nb - 1) / nb)
}

// compare checks every statistic of got against ref (independent draws from
// the generative process), and the N = 3 topology against its exact law,
// with a tolerance of tol combined standard errors.
func compare(t *testing.T, label string, got, ref series, exact map[string]float64, tol float64) {
	t.Helper()
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		gm, gs := meanSE(got[k])
		var rm, rs float64
		if p, ok := exact[k]; ok {
			rm = p
		} else {
			rm, rs = meanSE(ref[k])
		}
		se := math.Hypot(gs, rs)
		if math.IsNaN(gm) || math.IsNaN(rm) || math.IsNaN(se) {
			t.Errorf("%s: %s = %.4f ± %.4f, want %.4f ± %.4f: not a number", label, k, gm, gs, rm, rs)
			continue
		}
		if se == 0 {
			if gm != rm {
				t.Errorf("%s: %s = %.4f, want %.4f (no variance)", label, k, gm, rm)
			}
			continue
		}
		if z := (gm - rm) / se; !(math.Abs(z) <= tol) {
			t.Errorf("%s: %s = %.4f ± %.4f, want %.4f ± %.4f (z = %.1f)", label, k, gm, gs, rm, rs, z)
		}
	}
}

// referenceSeries draws n trees from the generative process.
func referenceSeries(t *testing.T, c priorCase, nLeaves, draws int, seed uint64) series {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	ref := series{}
	for i := range draws {
		if i == 1 {
			ref.reserve(draws)
		}
		tr, err := sim.DrawTree(rng, nLeaves, c.params())
		if err != nil {
			t.Fatal(err)
		}
		st := statsOf(tr)
		if nLeaves == 3 && st.topo != topology(tr) {
			t.Fatalf("statsOf topology %s, tree %s", st.topo, topology(tr))
		}
		ref.add(st, nLeaves)
	}
	return ref
}
