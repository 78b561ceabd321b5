package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/graph"
)

// TestSetCollapse: the schedule collapses the tree step of a PYDT whose c
// gibbs(c) draws, and puts gibbs(c) right after it (after the collapsed
// moves c must be drawn before any update that conditions on it: here
// slice(alpha) and slice(beta), which NewSchedule puts between them); a c
// that is not the constant of a linear divergence function, or that has no
// conjugate update, is not collapsed.
func TestSetCollapse(t *testing.T) {
	cases := []struct {
		div       string
		collapsed int
	}{
		{"c", 1},
		{"DivInvSq(c)", 1},
		{"DivNeal(0.4, c, 0.3)", 0},
	}
	for _, tc := range cases {
		t.Run(tc.div, func(t *testing.T) {
			src := strings.Replace(gaussianModel, "PYDT(alpha, beta, c,", "PYDT(alpha, beta, "+tc.div+",", 1)
			m := compileWithData(t, src, [][]float64{{1}, {2}, {4}}, nil)
			s, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			before := s.Explain()
			if got := s.SetCollapse(); got != tc.collapsed {
				t.Fatalf("SetCollapse collapsed %d tree steps, want %d; schedule:\n%s", got, tc.collapsed, s.Explain())
			}
			if tc.collapsed == 0 {
				if s.Explain() != before {
					t.Errorf("the schedule changed:\n%s\nwas\n%s", s.Explain(), before)
				}
				return
			}
			i := -1
			for k, st := range s.Steps {
				if ts, ok := st.(treeStep); ok {
					i = k
					if ts.collapse == nil {
						t.Errorf("the tree step is not collapsed")
					}
				}
			}
			if i < 0 || i+1 >= len(s.Steps) || s.Steps[i+1].Name() != "gibbs(c)" {
				t.Errorf("gibbs(c) does not follow the tree step:\n%s", s.Explain())
			}
			if !strings.Contains(s.Explain(), "c integrated out") {
				t.Errorf("Explain does not say that c is integrated out:\n%s", s.Explain())
			}
		})
	}
}

// TestGewekeCollapsed is TestGeweke with the subtree, local and position
// moves targeting the tree prior with c integrated out (Schedule.SetCollapse)
// and c drawn right after the tree step.
func TestGewekeCollapsed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long")
	}
	gewekePYDT(t, func(t *testing.T) gewekeSetup {
		return gewekeSetup{priorSeed: [2]uint64{11, 12}, chainSeed: 13, firstStream: 200, chains: 8, burn: 1000, iters: 6000,
			edit: func(s *Schedule) {
				if s.SetCollapse() != 1 {
					t.Fatal("SetCollapse collapsed no tree step")
				}
			}}
	})
}

// TestAllMissingCollapsed: with every value missing, alpha and beta clamped
// and c free, the collapsed schedule's N = 3 topologies have the exact law
// of the generative process (which does not depend on c), and c its prior
// mean. The chains start from a fixed tree (topology (1,2),3, its times
// late) and c = 30, far in the tail of its Gamma(3, 2) prior: a c or tree
// sampler that does not move keeps them, far from the prior law, instead
// of keeping a prior draw; the moves are watched as in the Geweke tests
// (stepWatch).
func TestAllMissingCollapsed(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	rows := [][]float64{{nan}, {nan}, {nan}}
	alpha, beta := 1.5, 0.3
	m := compileWithData(t, gaussianModel, rows, map[string]float64{"alpha": alpha, "beta": beta, "prec": 1})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	if sched.SetCollapse() != 1 {
		t.Fatal("SetCollapse collapsed no tree step")
	}
	var cv *graph.Var
	for _, v := range m.Scalars() {
		if v.Name == "c" {
			cv = v
		}
	}
	prior, ok := constGammaPrior(cv)
	if !ok {
		t.Fatal("c has no constant Gamma prior")
	}
	want := topology3Law(alpha, beta)
	want["c"] = prior.Mean()
	watch := watchSchedule(m, sched)
	const chains, burn, iters, start = 8, 100, 4000, "((1:0.9,2:0.9):0.05,3:0.95):0.05;"
	draws := map[string][][]float64{}
	for k := range chains {
		ch := newChainFixed(t, m, sched, 17, uint64(k), map[*graph.Var]float64{cv: 30}, start)
		if got := topology3(ch.trees[0].Tree); got != "(1,2),3" || ch.get(cv) != 30 {
			t.Fatalf("the chain starts from %s, c = %v", got, ch.get(cv))
		}
		for name := range want {
			draws[name] = append(draws[name], make([]float64, 0, iters))
		}
		for it := range burn + iters {
			if err := ch.Sweep(); err != nil {
				t.Fatal(err)
			}
			if it < burn {
				continue
			}
			top := topology3(ch.trees[0].Tree)
			for name := range want {
				x := indicator(top == name)
				if name == "c" {
					x = ch.get(cv)
				}
				draws[name][k] = append(draws[name][k], x)
			}
		}
	}
	watch.check(t)
	for name, p := range want {
		got, se := chainSE(draws[name])
		if !(math.Abs(got-p) <= 4*se) {
			t.Errorf("%s = %.4f ± %.4f, exact %.4f (z = %.1f)", name, got, se, p, (got-p)/se)
		}
	}
}

// newChainFixed starts a chain, as NewChain, from a draw of the prior with
// the scalars of sets set to their values and the first tree given by the
// Newick text tree.
func newChainFixed(t *testing.T, m *Model, sched *Schedule, seed, stream uint64, sets map[*graph.Var]float64, tree string) *Chain {
	t.Helper()
	pcg := rand.NewPCG(seed, stream)
	st, err := m.SamplePrior(rand.New(pcg))
	if err != nil {
		t.Fatal(err)
	}
	for v, x := range sets {
		st.Env.Values[v.ID][0] = x
	}
	if err := m.Refresh(st.Env); err != nil {
		t.Fatal(err)
	}
	if err := m.startFrom(st, []string{tree}); err != nil {
		t.Fatal(err)
	}
	ch, err := newChainFrom(m, sched, st, pcg)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
