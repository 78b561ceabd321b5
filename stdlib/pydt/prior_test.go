package pydt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ---------------------------------------------------------------------------
// Independent reference: the density of the sequential generative process of
// Section 2, point by point in a given order. It uses only the tree, the
// divergence function and log-gammas; it does not call prior.go or the
// Harmonic table.

// seqRate is h_m = Gamma(m-beta)/Gamma(m+1+alpha), computed directly.
func seqRate(m int, alpha, beta float64) float64 {
	a, _ := math.Lgamma(float64(m) - beta)
	b, _ := math.Lgamma(float64(m) + 1 + alpha)
	return math.Exp(a - b)
}

// seqLogDensity returns the log density of generating tr's structure and
// times by adding its leaves in the given order.
func seqLogDensity(tr *Tree, order []NodeID, alpha, beta float64, div Divergence) float64 {
	cnt := make([]int, tr.Cap()) // earlier points below each node
	logp := 0.0
	var path []NodeID
	for j, leaf := range order {
		if j > 0 {
			// d: the deepest ancestor of leaf with an earlier point below.
			d := tr.Parent(leaf)
			for cnt[d] == 0 {
				d = tr.Parent(d)
			}
			path = path[:0]
			for v := d; v != NoNode; v = tr.Parent(v) {
				path = append(path, v)
			}
			// Walk down from the root (path is d..root).
			for i := len(path) - 1; i >= 0; i-- {
				v := path[i]
				m := cnt[v]
				// Not diverging on the segment into v.
				dA := div.Cumulative(tr.Time(v)) - div.Cumulative(tr.ParentTime(v))
				logp -= dA * seqRate(m, alpha, beta)
				k := 0 // branches of the earlier points at v
				for c := tr.FirstChild(v); c != NoNode; c = tr.NextSibling(c) {
					if cnt[c] > 0 {
						k++
					}
				}
				if i > 0 {
					if k >= 2 { // an existing branch point: follow branch path[i-1]
						logp += math.Log((float64(cnt[path[i-1]]) - beta) / (float64(m) + alpha))
					}
					continue
				}
				if k >= 2 { // new branch at an existing branch point
					logp += math.Log((alpha + beta*float64(k)) / (float64(m) + alpha))
				} else { // divergence in the middle of a segment
					logp += div.LogRate(tr.Time(v)) + math.Log(seqRate(m, alpha, beta))
				}
			}
		}
		for v := leaf; v != NoNode; v = tr.Parent(v) {
			cnt[v]++
		}
	}
	return logp
}

// ---------------------------------------------------------------------------
// Tree builders.

// priorRandomTree builds a random multifurcating tree by attaching leaves at
// uniformly chosen nodes: at a branch point with probability pAtNode, else on
// the edge above it at a random time.
func priorRandomTree(rng *rand.Rand, n int, pAtNode float64) *Tree {
	tr := New(n)
	tr.Plant(0)
	var nodes []NodeID
	for i := 1; i < n; i++ {
		nodes = tr.PreOrder(nodes[:0])
		u := nodes[rng.IntN(len(nodes))]
		if !tr.IsLeaf(u) && rng.Float64() < pAtNode {
			tr.Attach(NodeID(i), Position{Node: u, AtNode: true})
			continue
		}
		lo, hi := tr.ParentTime(u).T(), tr.Time(u).T()
		tr.Attach(NodeID(i), Position{Node: u, Time: TimeAt(lo + (hi-lo)*(0.05+0.9*rng.Float64()))})
	}
	return tr
}

// priorSampleTree draws a tree from the PYDT generative process itself,
// following each new point down the tree (O(depth) a point).
func priorSampleTree(rng *rand.Rand, n int, alpha, beta float64, div Divergence) *Tree {
	tr := New(n)
	tr.Plant(0)
	for i := 1; i < n; i++ {
		v, start := tr.Root(), Origin
		for {
			m := tr.Count(v)
			td := div.Advance(start, rng.ExpFloat64()/seqRate(m, alpha, beta))
			if start.Before(td) && td.Before(tr.Time(v)) {
				tr.Attach(NodeID(i), Position{Node: v, Time: td})
				break
			}
			u := rng.Float64() * (float64(m) + alpha)
			next := NoNode
			for c := tr.FirstChild(v); c != NoNode; c = tr.NextSibling(c) {
				u -= float64(tr.Count(c)) - beta
				if u < 0 {
					next = c
					break
				}
			}
			if next == NoNode {
				tr.Attach(NodeID(i), Position{Node: v, AtNode: true})
				break
			}
			start, v = tr.Time(v), next
		}
	}
	return tr
}

// threeWayTree is ((0,1)@0.6, 2, (3,4,5)@0.7, 6)@0.2 with a nested binary
// split: a four-way root, a three-way split and binary nodes.
func threeWayTree() *Tree {
	tr := New(7)
	r := tr.NewInternal(TimeAt(0.2))
	a := tr.NewInternal(TimeAt(0.6))
	b := tr.NewInternal(TimeAt(0.7))
	c := tr.NewInternal(TimeFromOneMinus(1e-3))
	tr.AddChild(a, 0)
	tr.AddChild(a, 1)
	tr.AddChild(c, 3)
	tr.AddChild(c, 4)
	tr.AddChild(b, c)
	tr.AddChild(b, 5)
	tr.AddChild(b, 6)
	tr.AddChild(r, a)
	tr.AddChild(r, 2)
	tr.AddChild(r, b)
	tr.SetRoot(r)
	tr.Recount()
	return tr
}

func maxDegree(tr *Tree) int {
	k := 0
	for _, v := range tr.PreOrder(nil) {
		k = max(k, tr.Degree(v))
	}
	return k
}

func closeLog(got, want, tol float64) bool {
	if math.IsInf(want, -1) || math.IsInf(got, -1) {
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

var priorDivs = []Divergence{DivInv{C: 1.3}, DivInvSq{C: 0.6}, DivNeal{C0: 0.5, C1: 0.8, C2: 0.3}}

// ---------------------------------------------------------------------------

// TestPriorPaperExample checks the N = 4 example of Section 3 of the paper:
// root a with children b = (1, 3), 2 and 4.
func TestPriorPaperExample(t *testing.T) {
	tr := New(4)
	a := tr.NewInternal(TimeAt(0.3))
	b := tr.NewInternal(TimeAt(0.55))
	tr.AddChild(b, 0)
	tr.AddChild(b, 2)
	tr.AddChild(a, b)
	tr.AddChild(a, 1)
	tr.AddChild(a, 3)
	tr.SetRoot(a)
	tr.Recount()
	h := mustHarmonic(t, 0, 0)
	for _, p := range []struct{ alpha, beta float64 }{{1, 0}, {0.7, 0.3}, {-0.4, 0.45}, {3, 0.9}} {
		for _, div := range priorDivs {
			al, be := p.alpha, p.beta
			g := func(m float64) float64 { return math.Exp(lgamma(m-be) - lgamma(m+1+al)) }
			Aa, Ab := div.Cumulative(tr.Time(a)), div.Cumulative(tr.Time(b))
			want := -Aa*g(1) + div.LogRate(tr.Time(a)) + math.Log(g(1)) +
				-Aa*g(2) + math.Log((1-be)/(2+al)) - (Ab-Aa)*g(1) + div.LogRate(tr.Time(b)) + math.Log(g(1)) +
				-Aa*g(3) + math.Log((al+2*be)/(3+al))
			got := LogPrior(tr, al, be, div, h)
			if !closeLog(got, want, 1e-12) {
				t.Errorf("alpha=%v beta=%v %v: LogPrior = %.15g, paper's example gives %.15g", al, be, div, got, want)
			}
		}
	}
}

// TestPriorSequential checks the closed form against the point-by-point
// density of the generative process, in several orders of the points.
func TestPriorSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type tcase struct {
		name string
		tr   *Tree
	}
	var trees []tcase
	trees = append(trees, tcase{"threeway", threeWayTree()})
	for i := range 12 {
		n := 2 + i%8
		tr := priorRandomTree(rng, n, 0.4)
		trees = append(trees, tcase{fmt.Sprintf("random%d_n%d_k%d", i, n, maxDegree(tr)), tr})
	}
	for i := range 4 {
		tr := priorSampleTree(rng, 10, 1.5, 0.4, DivInv{C: 1})
		trees = append(trees, tcase{fmt.Sprintf("pydt%d_k%d", i, maxDegree(tr)), tr})
	}
	multi := 0
	for _, tc := range trees {
		if maxDegree(tc.tr) > 2 {
			multi++
		}
	}
	if multi < len(trees)/3 {
		t.Fatalf("only %d of %d test trees multifurcate", multi, len(trees))
	}
	params := []struct{ alpha, beta float64 }{
		{0.5, 0.3}, {2.5, 0.1}, {-0.5, 0.4}, {0, 0.7}, {1, 0}, {8, 0.95},
	}
	h := mustHarmonic(t, 0, 0)
	for _, tc := range trees {
		if err := tc.tr.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n := tc.tr.NumLeaves()
		for _, p := range params {
			for _, div := range priorDivs {
				got := LogPrior(tc.tr, p.alpha, p.beta, div, h)
				if math.IsInf(got, 0) || math.IsNaN(got) {
					t.Errorf("%s alpha=%v beta=%v %v: LogPrior = %v", tc.name, p.alpha, p.beta, div, got)
					continue
				}
				first := math.NaN()
				for range 4 {
					order := make([]NodeID, n)
					for i, j := range rng.Perm(n) {
						order[i] = NodeID(j)
					}
					want := seqLogDensity(tc.tr, order, p.alpha, p.beta, div)
					if !closeLog(got, want, 1e-9) {
						t.Errorf("%s alpha=%v beta=%v %v order %v: LogPrior = %.15g, sequential = %.15g",
							tc.name, p.alpha, p.beta, div, order, got, want)
					}
					if math.IsNaN(first) {
						first = want
					} else if !closeLog(want, first, 1e-9) {
						t.Errorf("%s alpha=%v beta=%v %v: order %v gives %.15g, another order %.15g",
							tc.name, p.alpha, p.beta, div, order, want, first)
					}
				}
			}
		}
	}
}

// TestPriorBoundary: at alpha = -2 beta only binary trees are possible.
func TestPriorBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	h := mustHarmonic(t, 0, 0)
	for _, beta := range []float64{0, 0.25, 0.6} {
		alpha := -2 * beta
		for range 6 {
			multi := priorRandomTree(rng, 7, 0.7)
			binary := priorRandomTree(rng, 7, 0)
			for _, div := range priorDivs {
				order := []NodeID{3, 0, 6, 1, 5, 2, 4}
				gb := LogPrior(binary, alpha, beta, div, h)
				wb := seqLogDensity(binary, order, alpha, beta, div)
				if math.IsInf(gb, 0) || math.IsNaN(gb) || !closeLog(gb, wb, 1e-9) {
					t.Errorf("beta=%v: binary tree: LogPrior = %v, sequential = %v", beta, gb, wb)
				}
				gm := LogPrior(multi, alpha, beta, div, h)
				wm := seqLogDensity(multi, order, alpha, beta, div)
				if maxDegree(multi) > 2 {
					if !math.IsInf(gm, -1) || !math.IsInf(wm, -1) {
						t.Errorf("beta=%v: multifurcating tree: LogPrior = %v, sequential = %v, want -Inf", beta, gm, wm)
					}
				}
			}
		}
	}
}

// TestPriorDDT: alpha = beta = 0 gives the Dirichlet diffusion tree:
// harmonic numbers, a(t) (b1-1)! (b2-1)! / (m-1)! per node.
func TestPriorDDT(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	harm := func(n int) float64 {
		s := 0.0
		for i := n; i >= 1; i-- {
			s += 1 / float64(i)
		}
		return s
	}
	fact := func(n int) float64 { return math.Gamma(float64(n) + 1) }
	h := mustHarmonic(t, 0, 0)
	for i := range 10 {
		tr := priorRandomTree(rng, 3+i, 0)
		for _, div := range priorDivs {
			want := 0.0
			for _, b := range tr.PreOrder(nil) {
				if tr.IsLeaf(b) {
					continue
				}
				c1 := tr.FirstChild(b)
				b1, b2, m := tr.Count(c1), tr.Count(tr.NextSibling(c1)), tr.Count(b)
				want += div.LogRate(tr.Time(b)) + math.Log(fact(b1-1)*fact(b2-1)/fact(m-1))
				want += (div.Cumulative(tr.ParentTime(b)) - div.Cumulative(tr.Time(b))) * harm(m-1)
			}
			if got := LogPrior(tr, 0, 0, div, h); !closeLog(got, want, 1e-12) {
				t.Errorf("DDT n=%d %v: LogPrior = %.15g, want %.15g", 3+i, div, got, want)
			}
		}
		multi := priorRandomTree(rng, 6, 0.8)
		if maxDegree(multi) > 2 {
			if got := LogPrior(multi, 0, 0, DivInv{C: 1}, h); !math.IsInf(got, -1) {
				t.Errorf("DDT: multifurcating tree has LogPrior %v, want -Inf", got)
			}
		}
	}
}

// TestPriorDecompositions checks the per-node forms, the structure part, the
// AlphaBetaStats form and the sharing of one table across parameters.
func TestPriorDecompositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	shared := mustHarmonic(t, 0, 0)
	params := []struct{ alpha, beta float64 }{{0.5, 0.3}, {3, 0.1}, {-0.5, 0.4}, {0.2, 0.9}}
	for i := range 8 {
		tr := priorRandomTree(rng, 5+3*i, 0.4)
		for _, div := range priorDivs {
			stats := NewAlphaBetaStats(tr, div)
			for _, p := range params {
				fresh := mustHarmonic(t, p.alpha, p.beta)
				want := LogPrior(tr, p.alpha, p.beta, div, fresh)
				// The shared table last held other parameters.
				if got := LogPrior(tr, p.alpha, p.beta, div, shared); got != want {
					t.Errorf("LogPrior with a reused table = %v, with a fresh one %v", got, want)
				}
				var node, edge, times float64
				for _, b := range tr.PreOrder(nil) {
					if tr.IsLeaf(b) {
						continue
					}
					node += NodeLogPrior(tr, b, p.alpha, p.beta, div, shared)
					edge += NodeEdgeLogPrior(tr, b, p.alpha, p.beta, div, shared)
					times += div.LogRate(tr.Time(b)) - div.Cumulative(tr.Time(b))*NodeJ(tr, b, p.alpha, p.beta, shared)
				}
				str := LogStructure(tr, p.alpha, p.beta)
				for name, got := range map[string]float64{
					"sum NodeLogPrior":     node,
					"sum NodeEdgeLogPrior": edge,
					"LogStructure + times": str + times,
					"AlphaBetaStats":       stats.LogPrior(p.alpha, p.beta, shared),
				} {
					if !closeLog(got, want, 1e-11) {
						t.Errorf("tree %d %v alpha=%v beta=%v: %s = %.15g, LogPrior = %.15g", i, div, p.alpha, p.beta, name, got, want)
					}
				}
				if got := stats.LogStructure(p.alpha, p.beta); !closeLog(got, str, 1e-11) {
					t.Errorf("AlphaBetaStats.LogStructure = %v, LogStructure = %v", got, str)
				}
			}
		}
	}
}

// TestNodeLogPriorIsTimeLocal: moving one branch point's time changes
// LogPrior by exactly the change of that node's NodeLogPrior.
func TestNodeLogPriorIsTimeLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	h := mustHarmonic(t, 0, 0)
	const alpha, beta = 0.8, 0.35
	for range 10 {
		tr := priorRandomTree(rng, 12, 0.3)
		div := priorDivs[rng.IntN(len(priorDivs))]
		for _, b := range tr.PreOrder(nil) {
			if tr.IsLeaf(b) {
				continue
			}
			lo := tr.ParentTime(b).T()
			hi := 1.0
			for c := range tr.Children(b) {
				hi = math.Min(hi, tr.Time(c).T())
			}
			before, nb := LogPrior(tr, alpha, beta, div, h), NodeLogPrior(tr, b, alpha, beta, div, h)
			old := tr.Time(b)
			tr.SetTime(b, TimeAt(lo+(hi-lo)*rng.Float64()))
			after, na := LogPrior(tr, alpha, beta, div, h), NodeLogPrior(tr, b, alpha, beta, div, h)
			if !(math.Abs((after-before)-(na-nb)) <= 1e-10*math.Max(1, math.Abs(after))) {
				t.Errorf("moving node %d: LogPrior changed by %v, NodeLogPrior by %v", b, after-before, na-nb)
			}
			tr.SetTime(b, old)
		}
	}
}

// TestCStats: with a(t) = c u(t), log prior(c1) - log prior(c2) =
// I log(c1/c2) - (c1 - c2) S.
func TestCStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	h := mustHarmonic(t, 0, 0)
	for range 6 {
		tr := priorRandomTree(rng, 15, 0.3)
		for _, p := range []struct{ alpha, beta float64 }{{0.5, 0.3}, {0, 0}, {2, 0.6}} {
			for _, fam := range []struct {
				unit Divergence
				mk   func(c float64) Divergence
			}{
				{DivInv{C: 1}, func(c float64) Divergence { return DivInv{C: c} }},
				{DivInvSq{C: 1}, func(c float64) Divergence { return DivInvSq{C: c} }},
			} {
				var internal int
				var s float64
				if _, ok := fam.unit.(DivInv); ok {
					internal, s = CStats(tr, p.alpha, p.beta, h)
				} else {
					internal, s = CStatsFor(tr, p.alpha, p.beta, fam.unit, h)
				}
				if internal != tr.NumInternal() || !(s >= 0) {
					t.Errorf("CStats = (%d, %v), want (%d, >= 0)", internal, s, tr.NumInternal())
				}
				if p.alpha == 0 && p.beta == 0 && maxDegree(tr) > 2 {
					continue
				}
				c1, c2 := 0.7, 2.9
				got := LogPrior(tr, p.alpha, p.beta, fam.mk(c1), h) - LogPrior(tr, p.alpha, p.beta, fam.mk(c2), h)
				want := float64(internal)*math.Log(c1/c2) - (c1-c2)*s
				if !closeLog(got, want, 1e-10) {
					t.Errorf("%v alpha=%v beta=%v: prior ratio %v, from CStats %v", fam.unit, p.alpha, p.beta, got, want)
				}
			}
		}
	}
}

// TestPriorImpossible: zero-density inputs give -Inf, never NaN.
func TestPriorImpossible(t *testing.T) {
	h := mustHarmonic(t, 0, 0)
	tr := threeWayTree()
	div := DivInv{C: 1}
	for _, c := range []struct {
		name        string
		alpha, beta float64
		div         Divergence
	}{
		{"beta=1", 1, 1, div},
		{"beta<0", 1, -0.2, div},
		{"alpha<-2beta", -0.9, 0.4, div},
		{"alpha NaN", math.NaN(), 0.4, div},
		{"c=0", 1, 0.5, DivInv{C: 0}},
		{"c<0", 1, 0.5, DivInvSq{C: -1}},
		{"nil divergence", 1, 0.5, nil},
	} {
		if got := LogPrior(tr, c.alpha, c.beta, c.div, h); !math.IsInf(got, -1) {
			t.Errorf("%s: LogPrior = %v, want -Inf", c.name, got)
		}
		if err := CheckPrior(c.alpha, c.beta, c.div); err == nil {
			t.Errorf("%s: CheckPrior accepted it", c.name)
		}
		if c.div != nil && c.div.Check() == nil {
			if got := NewAlphaBetaStats(tr, c.div).LogPrior(c.alpha, c.beta, h); !math.IsInf(got, -1) {
				t.Errorf("%s: AlphaBetaStats.LogPrior = %v, want -Inf", c.name, got)
			}
			if got := LogStructure(tr, c.alpha, c.beta); !math.IsInf(got, -1) {
				t.Errorf("%s: LogStructure = %v, want -Inf", c.name, got)
			}
		}
	}
	if err := CheckPrior(0.5, 0.5, div); err != nil {
		t.Errorf("CheckPrior of valid parameters: %v", err)
	}
	// Child before parent.
	bad := threeWayTree()
	root := bad.Root()
	bad.SetTime(root, TimeAt(0.65)) // after child a at 0.6
	if got := LogPrior(bad, 1, 0.5, div, h); !math.IsInf(got, -1) {
		t.Errorf("child before parent: LogPrior = %v, want -Inf", got)
	}
	if got := NewAlphaBetaStats(bad, div).LogPrior(1, 0.5, h); !math.IsInf(got, -1) {
		t.Errorf("child before parent: AlphaBetaStats.LogPrior = %v, want -Inf", got)
	}
	// Empty tree.
	if got := LogPrior(New(3), 1, 0.5, div, h); !math.IsInf(got, -1) {
		t.Errorf("empty tree: LogPrior = %v, want -Inf", got)
	}
	// A single leaf has density 1.
	one := New(1)
	one.Plant(0)
	if got := LogPrior(one, 1, 0.5, div, h); got != 0 {
		t.Errorf("single leaf: LogPrior = %v, want 0", got)
	}
}

// BenchmarkLogPrior evaluates the log prior of trees drawn from the PYDT.
func BenchmarkLogPrior(b *testing.B) {
	const alpha, beta = 0.5, 0.2
	var div Divergence = DivInv{C: 1}
	for _, n := range []int{100, 1000, 10_000, 100_000} {
		tr := priorSampleTree(rand.New(rand.NewPCG(uint64(n), 7)), n, alpha, beta, div)
		h := mustHarmonic(b, alpha, beta)
		h.Grow(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			LogPrior(tr, alpha, beta, div, h) // fills the table's caches
			b.ReportAllocs()
			for b.Loop() {
				LogPrior(tr, alpha, beta, div, h)
			}
		})
		b.Run(fmt.Sprintf("AlphaBetaStats/N=%d", n), func(b *testing.B) {
			stats := NewAlphaBetaStats(tr, div)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				// A new (alpha, beta) each call: the table is rebuilt.
				i++
				stats.LogPrior(alpha+0.001*float64(i%2), beta, h)
			}
		})
	}
}

// TestPriorBeyondFloat64 checks LogPrior on trees whose times lie beyond the
// float64 range of 1-t (s = -log(1-t) from 800 to 1e6) against an
// independent computation in the coordinate s: the sequential process, in
// which a point that m earlier points preceded on a segment diverges with
// hazard h_m dA/ds in s. The densities differ by the Jacobian: log p_t =
// log p_s + Σ_b s_b. Only differences of s enter the reference.
func TestPriorBeyondFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	type sDiv struct {
		div   Divergence
		rateS func(s float64) float64      // dA/ds
		dA    func(s1, s2 float64) float64 // A(s2) - A(s1)
	}
	divs := []sDiv{
		{DivInv{C: 0.01}, func(float64) float64 { return 0.01 }, func(a, b float64) float64 { return 0.01 * (b - a) }},
		{DivNeal{C0: 2, C1: 0.3, C2: 0},
			func(s float64) float64 { return 2*math.Exp(-s) + 0.3 },
			func(a, b float64) float64 { return 2*(math.Exp(-a)-math.Exp(-b)) + 0.3*(b-a) }},
	}
	for rep := range 12 {
		n := 2 + rep%6
		tr := New(n)
		tr.Plant(0)
		for i := 1; i < n; i++ {
			nodes := tr.PreOrder(nil)
			u := nodes[rng.IntN(len(nodes))]
			if !tr.IsLeaf(u) && rng.IntN(3) == 0 {
				tr.Attach(NodeID(i), Position{Node: u, AtNode: true})
				continue
			}
			lo, hi := tr.ParentTime(u).S(), tr.Time(u).S()
			if lo == 0 {
				lo = 800
			}
			if math.IsInf(hi, 1) {
				hi = lo * 1.5
			}
			tm := TimeFromS(lo + (hi-lo)*(0.05+0.9*rng.Float64()))
			if tr.ParentTime(u).Before(tm) && tm.Before(tr.Time(u)) {
				tr.Attach(NodeID(i), Position{Node: u, Time: tm})
			} else {
				i--
			}
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		sumS := 0.0
		for _, v := range tr.PreOrder(nil) {
			if !tr.IsLeaf(v) {
				if s := tr.Time(v).S(); s < 745 {
					t.Fatalf("branch point at s = %v: the test wants 1-t below float64", s)
				} else {
					sumS += s
				}
			}
		}
		for _, d := range divs {
			for _, p := range []struct{ alpha, beta float64 }{{0.5, 0.3}, {2, 0}, {-0.4, 0.6}} {
				got := LogPrior(tr, p.alpha, p.beta, d.div, mustHarmonic(t, 0, 0))
				wantS := seqLogDensityS(tr, p.alpha, p.beta, d.rateS, d.dA)
				want := wantS + sumS
				if !closeLog(got, want, 1e-11) {
					t.Errorf("rep %d %v alpha=%v beta=%v: LogPrior %.17g, in s %.17g", rep, d.div, p.alpha, p.beta, got, want)
				}
				// The density in s itself, which Σ s_b would swamp above:
				// the MCMC target, to its own precision.
				if got := LogPriorS(tr, p.alpha, p.beta, d.div, mustHarmonic(t, 0, 0)); !closeLog(got, wantS, 1e-11) {
					t.Errorf("rep %d %v alpha=%v beta=%v: LogPriorS %.17g, in s %.17g", rep, d.div, p.alpha, p.beta, got, wantS)
				}
				ab := NewAlphaBetaStats(tr, d.div)
				if got := ab.LogPriorS(p.alpha, p.beta, mustHarmonic(t, 0, 0)); !closeLog(got, wantS, 1e-11) {
					t.Errorf("rep %d %v alpha=%v beta=%v: AlphaBetaStats.LogPriorS %.17g, in s %.17g", rep, d.div, p.alpha, p.beta, got, wantS)
				}
			}
		}
	}
}

// seqLogDensityS is seqLogDensity in the coordinate s, in leaf order, with
// the divergence function given by its rate in s and its increments.
func seqLogDensityS(tr *Tree, alpha, beta float64, rateS func(float64) float64, dA func(s1, s2 float64) float64) float64 {
	cnt := make([]int, tr.Cap())
	logp := 0.0
	for j := range tr.NumLeaves() {
		leaf := NodeID(j)
		if j > 0 {
			d := tr.Parent(leaf)
			for cnt[d] == 0 {
				d = tr.Parent(d)
			}
			var path []NodeID
			for v := d; v != NoNode; v = tr.Parent(v) {
				path = append(path, v)
			}
			for i := len(path) - 1; i >= 0; i-- {
				v := path[i]
				m := cnt[v]
				logp -= dA(tr.ParentTime(v).S(), tr.Time(v).S()) * seqRate(m, alpha, beta)
				k := 0
				for c := tr.FirstChild(v); c != NoNode; c = tr.NextSibling(c) {
					if cnt[c] > 0 {
						k++
					}
				}
				switch {
				case i > 0:
					if k >= 2 {
						logp += math.Log((float64(cnt[path[i-1]]) - beta) / (float64(m) + alpha))
					}
				case k >= 2:
					logp += math.Log((alpha + beta*float64(k)) / (float64(m) + alpha))
				default:
					logp += math.Log(rateS(tr.Time(v).S()) * seqRate(m, alpha, beta))
				}
			}
		}
		for v := leaf; v != NoNode; v = tr.Parent(v) {
			cnt[v]++
		}
	}
	return logp
}
