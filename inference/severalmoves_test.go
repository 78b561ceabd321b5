package inference

import (
	"os"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// twoTreesExample returns the source of examples/two-trees.pydt with the
// replacements r (old, new pairs, each of which must occur).
func twoTreesExample(t testing.TB, r ...[2]string) string {
	t.Helper()
	b, err := os.ReadFile("../examples/two-trees.pydt")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, r := range r {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("examples/two-trees.pydt has no %q", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	return src
}

// ownScale gives Z's tree of examples/two-trees.pydt a scale cZ of its own
// (with the example's prior of c), so that the time-scale move of Z's tree
// applies.
var ownScale = [][2]string{
	{"Z ~ PYDT(alpha, beta, c,", "Z ~ PYDT(alpha, beta, cZ,"},
	{"c ~ Gamma(1, 1)", "c ~ Gamma(1, 1)\ncZ ~ Gamma(1, 1)"},
}

// gewekeTreePriors replaces the priors that X's tree of
// examples/two-trees.pydt reads with those of TestGeweke (gewekePriors):
// under the examples' priors, leaves observed without noise are drawn into
// bitwise identical rows (see the note in geweke_examples_test.go), which
// Geweke's test of the noise-free model cannot pass; Z's tree (a Probit
// layer, whose auxiliaries carry noise) keeps the example's precZ and cZ.
var gewekeTreePriors = [][2]string{
	{"alpha ~ Gamma(2, 0.5)", "alpha ~ Gamma(2, 4)"},
	{"beta ~ Beta(1, 1)", "beta ~ Beta(2, 3)"},
	{"c ~ Gamma(1, 1)", "c ~ Gamma(4, 2)"},
	{"prec ~ Gamma(1, 1)", "prec ~ Gamma(3, 3)"},
}

// perdimSecondTree has a second PYDT, W's, with a variance per dimension:
// its precisions get the conjugate update per dimension and the ridge move
// of W's tree. (TestGeweke's priors: both trees' leaves are observed
// without noise.)
const perdimSecondTree = `
dim N, D, M, E
data X : real[N, D]
data W : real[M, E]
param precW : pos[E]
` + gewekePriors + `precW ~ Gamma(3, 3)
X ~ PYDT(alpha, beta, c, 1 / prec)
W ~ PYDT(alpha, beta, c, 1 / precW)
`

// scheduleNames returns the names of s's steps, space-separated.
func scheduleNames(s *Schedule) string {
	var names []string
	for _, st := range s.Steps {
		names = append(names, st.Name())
	}
	return strings.Join(names, " ")
}

// TestSecondTreeMoves checks that every PYDT, not only the first, gets the
// moves its parameters allow, each named with its tree.
func TestSecondTreeMoves(t *testing.T) {
	tests := []struct {
		name, src string
		data      map[string]*dataset.Matrix
		want      string
	}{
		{"two-trees example", twoTreesExample(t), map[string]*dataset.Matrix{"X": zeros(3, 1), "Y": zeros(3, 2)},
			"tree(X) tree(Z) slice(alpha) slice(beta) gibbs(c) gibbs(prec) slice(precZ) ridge(prec, times of X) ridge(precZ, times of Z) " +
				"scale(precZ, u of Y) orbit(precZ, times of Z, u of Y) locations scale(precZ, locations of Z) probit-aux(Y) ghk(precZ, u of Y) hmc(u of Y)"},
		{"own c", twoTreesExample(t, ownScale...), map[string]*dataset.Matrix{"X": zeros(3, 1), "Y": zeros(3, 2)},
			"tree(X) tree(Z) slice(alpha) slice(beta) gibbs(c) gibbs(cZ) gibbs(prec) slice(precZ) ridge(prec, times of X) ridge(precZ, times of Z) " +
				"scale(precZ, u of Y) orbit(precZ, times of Z, u of Y) scale(cZ, times of Z) locations scale(precZ, locations of Z) probit-aux(Y) ghk(precZ, u of Y) hmc(u of Y)"},
		{"per-dimension second tree", perdimSecondTree, map[string]*dataset.Matrix{"X": zeros(3, 1), "W": zeros(3, 2)},
			"tree(X) tree(W) gibbs(precW[d]) slice(alpha) slice(beta) gibbs(c) gibbs(prec) ridge(prec, times of X) ridge(precW[d], times of W)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := compileSource(t, "two.pydt", []byte(tc.src), tc.data, nil)
			s, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := scheduleNames(s); got != tc.want {
				t.Errorf("schedule\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

func zeros(n, d int) *dataset.Matrix {
	return &dataset.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d), Source: "zeros.csv"}
}

// redrawSeveral draws every tree's data given its tree and variance: the
// leaf locations where they are observed directly, and for a Probit leaf
// the auxiliaries u = Z + ε and Y = 1 where u > 0.
func redrawSeveral(t testing.TB, ch *Chain) {
	for _, tc := range ch.trees {
		b := tc.b
		free := bp.New(tc.Tree, b.D)
		if err := free.SetVariances(tc.lik.Variances()); err != nil {
			t.Fatal(err)
		}
		if err := free.Recompute(); err != nil {
			t.Fatal(err)
		}
		locs := make([]float64, tc.Tree.Cap()*b.D)
		if err := free.SampleLocations(ch.rng, locs); err != nil {
			t.Fatal(err)
		}
		switch {
		case b.Leaf == nil:
			copy(ch.st.Env.Values[b.Leaves.ID], locs[:b.N*b.D])
		case b.Threshold() != nil:
			y := ch.st.Env.Values[b.Data.ID]
			for k := range b.N * b.D {
				u := locs[k] + ch.rng.NormFloat64()
				tc.aux[k] = u
				y[k] = 0
				if u > 0 {
					y[k] = 1
				}
			}
		default:
			t.Fatalf("no redraw for the leaf factor of %s", b.Leaves.Name)
		}
	}
	if err := ch.syncEvidence(); err != nil {
		t.Fatal(err)
	}
}

// severalStats are, per tree, the number of internal nodes, the root's
// degree and s = -log(1-t) statistics (sStats: kept finite near t = 1
// under the examples' priors), the number of ones of binary data, and
// every traced value (scalars and vector elements).
func severalStats(m *Model, st *State) []float64 {
	var out []float64
	for k, tr := range st.Trees {
		out = append(out, float64(tr.NumInternal()), float64(tr.Degree(tr.Root())))
		out = append(out, sStats(tr)...)
		if b := m.Trees[k]; b.Threshold() != nil {
			var ones float64
			for _, y := range st.Env.Values[b.Data.ID] {
				ones += y
			}
			out = append(out, ones)
		}
	}
	for _, c := range m.Traced() {
		out = append(out, st.Env.Values[c.Var.ID][c.Off])
	}
	return out
}

func severalStatNames(m *Model) []string {
	var names []string
	for _, b := range m.Trees {
		v := b.Leaves.Name
		names = append(names, v+": internal nodes", v+": root degree", v+": P(root s > 745)", v+": E log(1+s_root)")
		if b.Threshold() != nil {
			names = append(names, b.Data.Name+": number of ones")
		}
	}
	for _, c := range m.Traced() {
		names = append(names, c.Name)
	}
	return names
}

// gewekeSeveral is Geweke's joint-distribution test for a model with
// several PYDTs: prior draws from SampleJoint against successive-
// conditional chains (a sweep, then redrawSeveral).
func gewekeSeveral(t *testing.T, m *Model, setup gewekeSetup) {
	t.Helper()
	names := severalStatNames(m)
	stats := func(st *State) []float64 { return severalStats(m, st) }
	prior, chains := gewekeStates(t, m, setup, len(names), stats, m.SampleJoint, func(ch *Chain) { redrawSeveral(t, ch) })
	compareMeans(t, names, prior, chains)
}

// TestGewekeSecondTreeMoves is the joint-distribution test of the moves
// that act on one tree and its parameters, on the second PYDT of a model
// on examples/two-trees.pydt with Z's own scale cZ (ridge, both Probit
// scale moves and the time-scale move of Z's tree; the example's priors
// for Z's own parameters, TestGeweke's for those X's tree reads, see
// gewekeTreePriors), and on a second tree with a variance per dimension
// (its conjugate update per dimension and its ridge move).
func TestGewekeSecondTreeMoves(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	t.Run("probit second tree", func(t *testing.T) {
		m := compileSource(t, "two.pydt", []byte(twoTreesExample(t, append(ownScale, gewekeTreePriors...)...)),
			map[string]*dataset.Matrix{"X": zeros(3, 1), "Y": zeros(3, 2)}, nil)
		gewekeSeveral(t, m, gewekeSetup{priorSeed: [2]uint64{61, 62}, chainSeed: 63, firstStream: 300, chains: 6, burn: 300, iters: 2000})
	})
	t.Run("per-dimension second tree", func(t *testing.T) {
		m := compileSource(t, "two.pydt", []byte(perdimSecondTree),
			map[string]*dataset.Matrix{"X": zeros(3, 1), "W": zeros(3, 2)}, nil)
		gewekeSeveral(t, m, gewekeSetup{priorSeed: [2]uint64{71, 72}, chainSeed: 74, firstStream: 500, chains: 16, burn: 500, iters: 3000})
	})
}
