package bp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// refLogLik is an independent reference for LogLik: a recursive pass that
// multiplies the children's messages into the parent's one at a time, in the
// textbook form (precision-weighted means, a logarithm per product), with
// no segment trees and no deferred logarithms.
func refLogLik(m *Model) float64 {
	tr, D, s2 := m.Tree(), m.Dims(), m.Variances()
	normLog := func(x, v float64) float64 { return -0.5 * (math.Log(2*math.Pi*v) + x*x/v) }
	var up func(v pydt.NodeID) ([]float64, []float64, float64)
	up = func(v pydt.NodeID) ([]float64, []float64, float64) {
		mean, vr := make([]float64, D), make([]float64, D)
		if tr.IsLeaf(v) {
			for d := range D {
				mu, prec := m.Evidence(v, d)
				if prec == 0 {
					vr[d] = math.Inf(1)
				} else {
					mean[d], vr[d] = mu, 1/prec
				}
			}
			return mean, vr, 0
		}
		lz := 0.0
		for d := range D {
			vr[d] = math.Inf(1)
		}
		for c := range tr.Children(v) {
			cm, cv, clz := up(c)
			l := tr.Time(c).Since(tr.Time(v))
			if !(l > 0) {
				return mean, vr, math.Inf(-1)
			}
			lz += clz
			for d := range D {
				x, y := vr[d], cv[d]+s2[d]*l
				switch {
				case math.IsInf(y, 1):
				case math.IsInf(x, 1):
					mean[d], vr[d] = cm[d], y
				default:
					lz += normLog(mean[d]-cm[d], x+y)
					mean[d] += x / (x + y) * (cm[d] - mean[d])
					vr[d] = x * y / (x + y)
				}
			}
		}
		return mean, vr, lz
	}
	r := tr.Root()
	mean, vr, lz := up(r)
	for d := range D {
		if !math.IsInf(vr[d], 1) {
			lz += normLog(mean[d], vr[d]+s2[d]*tr.Time(r).T())
		}
	}
	return lz
}

// checkSeg checks the segment-tree bookkeeping against the tree: every
// branch point below the root (or in a detached subtree) has a power-of-two
// block with its children, each once, in the first Degree slots, empty
// slots after, and every child knows its slot.
func checkSeg(t *testing.T, m *Model) {
	t.Helper()
	tr, s := m.Tree(), &m.seg
	for id := tr.NumLeaves(); id < tr.Cap(); id++ {
		p := pydt.NodeID(id)
		if !tr.InUse(p) {
			continue
		}
		k, c := tr.Degree(p), s.capOf(p)
		if c < 2 || c&(c-1) != 0 || c < k {
			t.Fatalf("node %d: %d slots for %d children", p, c, k)
		}
		ks := s.kidsOf(p)
		seen := map[pydt.NodeID]bool{}
		for j, ch := range ks {
			if j >= k {
				if ch != pydt.NoNode {
					t.Fatalf("node %d: slot %d of %d holds %d", p, j, k, ch)
				}
				continue
			}
			if ch == pydt.NoNode || tr.Parent(ch) != p || seen[ch] || int(s.node[ch].slot) != j {
				t.Fatalf("node %d: slot %d holds %d (parent %d, slot %d)", p, j, ch, tr.Parent(ch), s.node[ch].slot)
			}
			seen[ch] = true
		}
	}
}

// hubTree returns a tree whose root (at t = 0.2) has hub leaves as
// children, the other leaves joining at random positions below. With tiny,
// half of those join the edge above a random leaf at 1-t ≈ 1e-12, so that
// observed leaves hang below edges of length ~1e-12.
func hubTree(rng *rand.Rand, n, hub int, tiny bool) *pydt.Tree {
	tr := pydt.New(n)
	r := tr.NewInternal(pydt.TimeAt(0.2))
	for i := range hub {
		tr.AddChild(r, pydt.NodeID(i))
	}
	tr.SetRoot(r)
	tr.Recount()
	for i := hub; i < n; i++ {
		leaf := pydt.NodeID(i)
		pos := randomPosition(rng, tr, leaf)
		if tiny && rng.IntN(2) == 0 {
			u := pydt.NodeID(rng.IntN(i))
			tt := pydt.TimeFromOneMinus(1e-12 * (0.5 + rng.Float64()))
			if tr.ParentTime(u).Before(tt) {
				pos = pydt.Position{Node: u, Time: tt}
			}
		}
		tr.Attach(leaf, pos)
	}
	return tr
}

// observeFromPrior sets every leaf's evidence to a draw of the locations
// from the prior given the tree, so that the data fit the tree (tiny edges
// come with tiny differences), with a fraction missing.
func observeFromPrior(t *testing.T, rng *rand.Rand, m *Model, pMiss float64) {
	t.Helper()
	tr, D := m.Tree(), m.Dims()
	prior := New(tr, D)
	if err := prior.SetVariances(m.Variances()); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, tr.Cap()*D)
	if err := prior.SampleLocations(rng, x); err != nil {
		t.Fatal(err)
	}
	for i := range tr.NumLeaves() {
		for d := range D {
			v := x[i*D+d]
			if rng.Float64() < pMiss {
				v = math.NaN()
			}
			if err := m.Observe(pydt.NodeID(i), d, v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSegmentTreesUnderMoves runs random Detach/Attach sequences on trees
// with a branch point of degree 200 that shrinks to a few children and
// grows back, interleaved with time and evidence changes, and compares
// LogLik after every step with the independent recursive reference and a
// full recomputation, and the bookkeeping with the tree.
func TestSegmentTreesUnderMoves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tiny   bool
		D      int
		perDim bool
	}{{"hub/D=1", false, 1, false}, {"hub/D=3", false, 3, false}, {"tiny/D=2", true, 2, false},
		{"hub/D=3/perdim", false, 3, true}, {"tiny/D=2/perdim", true, 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, uint64(tc.D)))
			tr := hubTree(rng, 240, 200, tc.tiny)
			m := New(tr, tc.D)
			if err := m.SetVariance(0.7); err != nil {
				t.Fatal(err)
			}
			if tc.perDim {
				setVariances(t, m, spreadVariances(rng, tc.D))
			}
			if tc.tiny {
				observeFromPrior(t, rng, m, 0.1)
			} else {
				randomEvidence(t, rng, m, 0.2, 0.2)
			}
			if err := m.Recompute(); err != nil {
				t.Fatal(err)
			}
			// With observed leaves below edges of length ℓ ≈ 1e-12, a term
			// (x_a - x_b)²/ℓ with |x| ≈ 1 and |x_a - x_b| ≈ √ℓ moves by
			// about ε|x|/√ℓ ≈ 1e-10 when the means are rounded in another
			// order: that is the conditioning of the problem, the same for
			// every exact method. A scheme that subtracts precisions of
			// order 1/ℓ would be off by O(1).
			tol := 1e-12
			if tc.tiny {
				tol = 1e-9
			}
			root := tr.Root()
			for step := range 500 {
				var what string
				switch op := rng.IntN(8); {
				case op < 7 && step < 280: // drain the hub
					if tr.Degree(root) <= 3 {
						continue
					}
					v := tr.FirstChild(root)
					for range rng.IntN(tr.Degree(root)) {
						v = tr.NextSibling(v)
					}
					m.Detach(v)
					pos := randomPosition(rng, tr, v)
					for pos.Node == root {
						pos = randomPosition(rng, tr, v)
					}
					m.Attach(v, pos)
					what = fmt.Sprintf("move hub child %d to %+v", v, pos)
				case op < 5: // refill it
					v := randomTreeNode(rng, tr)
					if tr.Parent(v) == root || !tr.Time(root).Before(tr.Time(v)) {
						continue
					}
					m.Detach(v)
					if tr.Root() != root { // the root was spliced out
						m.Attach(v, pydt.Position{Node: tr.Root(), Time: tr.Time(root)})
						root = tr.Root()
					} else {
						m.Attach(v, pydt.Position{Node: root, AtNode: true})
					}
					what = fmt.Sprintf("move %d to the hub", v)
				case op == 5:
					v := randomTreeNode(rng, tr)
					m.Detach(v)
					if got, want := m.LogLik(), refLogLik(m); !relClose(got, want, tol) {
						t.Fatalf("step %d: after Detach(%d) LogLik %.15g, reference %.15g", step, v, got, want)
					}
					pos := randomPosition(rng, tr, v)
					guess := m.LogLikIfAttached(v, pos)
					m.Attach(v, pos)
					if got := m.LogLik(); !relClose(got, guess, tol) {
						t.Fatalf("step %d: LogLikIfAttached %.15g, after Attach %.15g", step, guess, got)
					}
					what = fmt.Sprintf("move %d to %+v", v, pos)
				case op == 6:
					v := randomTreeNode(rng, tr)
					if tr.IsLeaf(v) {
						v = tr.Parent(v)
					}
					lo, hi := timeBounds(tr, v)
					m.SetTime(v, interp(lo, hi, 0.05+0.9*rng.Float64()))
					what = fmt.Sprintf("SetTime(%d)", v)
				default:
					leaf := pydt.NodeID(rng.IntN(tr.NumLeaves()))
					mean, _ := m.Evidence(leaf, 0)
					if err := m.SetEvidence(leaf, 0, mean+1e-7*rng.NormFloat64(), []float64{0, 4, math.Inf(1)}[rng.IntN(3)]); err != nil {
						t.Fatal(err)
					}
					what = fmt.Sprintf("evidence of %d", leaf)
				}
				if err := tr.Validate(); err != nil {
					t.Fatalf("step %d (%s): %v", step, what, err)
				}
				got := m.LogLik()
				checkSeg(t, m)
				if want := refLogLik(m); !relClose(got, want, tol) {
					t.Fatalf("step %d (%s): LogLik %.15g, reference %.15g", step, what, got, want)
				}
				if want := fresh(t, m); !relClose(got, want, tol) {
					t.Fatalf("step %d (%s): LogLik %.15g, full pass %.15g", step, what, got, want)
				}
				if step == 279 {
					// Drained: the hub's block shrank.
					if k, c := tr.Degree(root), m.seg.capOf(root); k > 20 || c > 4*max(k, 2) {
						t.Fatalf("step %d: hub has %d children in %d slots after draining", step, k, c)
					}
				}
			}
			if k := tr.Degree(root); k < 80 {
				t.Fatalf("hub has %d children after refilling", k)
			}
			if tc.tiny {
				return // the dense covariance is too ill-conditioned
			}
			if got, want := m.LogLik(), denseLogLik(t, m); !relClose(got, want, 1e-9) {
				t.Errorf("after the moves LogLik %.15g, dense %.15g", got, want)
			}
		})
	}
}

// timeBounds returns the time of v's parent (the origin for the root) and
// the earliest time of v's children.
func timeBounds(tr *pydt.Tree, v pydt.NodeID) (lo, hi pydt.Time) {
	lo, hi = tr.ParentTime(v), pydt.Leaf
	for c := range tr.Children(v) {
		if tr.Time(c).Before(hi) {
			hi = tr.Time(c)
		}
	}
	return lo, hi
}

// TestTimeEval compares the time evaluator with SetTime followed by LogLik
// and with the independent reference on a copy of the tree, for random
// trees, branch points (the root and nodes whose children are all leaves
// included) and times (some within 1e-9 of the bounds), before and after
// Commit.
func TestTimeEval(t *testing.T) {
	cases := append(treeCases[:len(treeCases):len(treeCases)],
		treeCase{"hub", func(rng *rand.Rand, n int) *pydt.Tree { return hubTree(rng, n, n/2, false) }},
		treeCase{"tiny", func(rng *rand.Rand, n int) *pydt.Tree { return hubTree(rng, n, n/3, true) }})
	for _, tc := range cases {
		for _, dc := range []dimCase{{1, false}, {3, false}, {3, true}} {
			D := dc.D
			t.Run(fmt.Sprintf("%s/%s", tc.name, dc), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(41, uint64(D)))
				tr := tc.gen(rng, 40)
				m := New(tr, D)
				if err := m.SetVariance(1.7); err != nil {
					t.Fatal(err)
				}
				if dc.perDim {
					setVariances(t, m, spreadVariances(rng, D))
				}
				// Candidate times within 1e-9 of a bound on the tiny tree
				// make edges of length ~1e-21 between leaves observed
				// ~1e-6 apart: terms of order 1e9/σ²_d, which another
				// association order of the same products moves by ~1e-10
				// relative (see TestSegmentTreesUnderMoves); variances
				// down to 0.05 (perdim) enlarge them further.
				tol := 1e-10
				if tc.name == "tiny" && dc.perDim {
					tol = 1e-9
				}
				observeFromPrior(t, rng, m, 0.2)
				if tc.name == "pydt" {
					randomEvidence(t, rng, m, 0.3, 0.3)
				}
				var leafy, rooted bool
				for k := range 60 {
					var v pydt.NodeID
					switch {
					case k == 0:
						v = tr.Root()
					case k == 1:
						for _, u := range tr.PreOrder(nil) {
							if !tr.IsLeaf(u) && allLeaves(tr, u) {
								v = u
								break
							}
						}
					default:
						v = randomTreeNode(rng, tr)
						if tr.IsLeaf(v) {
							v = tr.Parent(v)
						}
					}
					rooted = rooted || v == tr.Root()
					leafy = leafy || allLeaves(tr, v)
					e := m.TimeEval(v)
					lo, hi := e.Bounds()
					if wlo, whi := timeBounds(tr, v); lo != wlo || hi != whi {
						t.Fatalf("Bounds of %d: (%v, %v), want (%v, %v)", v, lo, hi, wlo, whi)
					}
					t0 := tr.Time(v)
					if got, want := e.LogLik(t0), m.LogLik(); !relClose(got, want, 1e-10) {
						t.Fatalf("node %d at its own time: %.15g, LogLik %.15g", v, got, want)
					}
					for j := range 6 {
						f := rng.Float64()
						switch j {
						case 0:
							f = 1e-9
						case 1:
							f = 1 - 1e-9
						}
						tt := interp(lo, hi, f)
						if !lo.Before(tt) || !tt.Before(hi) {
							continue
						}
						got := e.LogLik(tt)
						ref := refLogLikOn(t, m, withTime(tr, v, tt))
						if !relClose(got, ref, tol) {
							t.Fatalf("node %d, t = %v: TimeEval %.15g, reference %.15g", v, tt.T(), got, ref)
						}
						if j == 5 {
							e.Commit(tt)
							if want := m.LogLik(); !relClose(got, want, 1e-10) {
								t.Fatalf("node %d, t = %v: TimeEval %.15g, after Commit %.15g", v, tt.T(), got, want)
							}
							// Still valid after Commit: back to t0.
							if got, want := e.LogLik(t0), refLogLikOn(t, m, withTime(tr, v, t0)); !relClose(got, want, 1e-10) {
								t.Fatalf("node %d after Commit, at t0: %.15g, reference %.15g", v, got, want)
							}
						}
					}
					for _, tt := range []pydt.Time{lo, hi} {
						if ll := e.LogLik(tt); !math.IsInf(ll, -1) {
							t.Fatalf("node %d at a bound t = %v: %v, want -Inf", v, tt.T(), ll)
						}
					}
				}
				if !rooted || !leafy {
					t.Fatalf("cases missed: root %v, leaves-only children %v", rooted, leafy)
				}
			})
		}
	}
}

func allLeaves(tr *pydt.Tree, v pydt.NodeID) bool {
	for c := range tr.Children(v) {
		if !tr.IsLeaf(c) {
			return false
		}
	}
	return true
}

func withTime(tr *pydt.Tree, v pydt.NodeID, t pydt.Time) *pydt.Tree {
	c := tr.Clone()
	c.SetTime(v, t)
	return c
}

// refLogLikOn is refLogLik for m's evidence and variance on the tree tr.
func refLogLikOn(t *testing.T, m *Model, tr *pydt.Tree) float64 {
	t.Helper()
	return refLogLik(copyModel(t, m, tr))
}

func TestTimeEvalStalePanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	tr := genPYDT(rng, 20, 1, 0.5, 0.3)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0, 0)
	e := m.TimeEval(tr.Root())
	_ = m.SetEvidence(0, 0, 1, 1)
	defer func() {
		if recover() == nil {
			t.Error("no panic using a TimeEval after SetEvidence")
		}
	}()
	e.LogLik(tr.Time(tr.Root()))
}

// TestZeroLengthEdgeTimeEval checks that a zero-length edge elsewhere makes
// every candidate -Inf.
func TestZeroLengthEdgeTimeEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	tr := genPYDT(rng, 30, 1, 0, 0)
	m := New(tr, 2)
	randomEvidence(t, rng, m, 0, 0)
	var u, v pydt.NodeID = pydt.NoNode, pydt.NoNode
	for _, w := range tr.PreOrder(nil) {
		if !tr.IsLeaf(w) && w != tr.Root() {
			if u == pydt.NoNode {
				u = w
			} else if tr.Parent(w) != u && w != tr.Parent(u) {
				v = w
				break
			}
		}
	}
	if v == pydt.NoNode {
		t.Skip("tree too small")
	}
	m.SetTime(u, tr.ParentTime(u))
	e := m.TimeEval(v)
	lo, hi := e.Bounds()
	if ll := e.LogLik(interp(lo, hi, 0.5)); !math.IsInf(ll, -1) {
		t.Errorf("TimeEval with a zero-length edge elsewhere: %v, want -Inf", ll)
	}
}

// TestSegReserve checks that Recompute's reserve of segment-tree blocks is
// a little above the blocks in use, not a multiple of them: a kept model
// holds the reserve for its life (twice the blocks in use was more than
// half of a multifurcating tree's record memory).
func TestSegReserve(t *testing.T) {
	for _, tc := range []struct {
		name           string
		c, alpha, beta float64
	}{{"ddt", 1, 0, 0}, {"pydt", 1, 0.5, 0.3}, {"bushy", 2, 0.9, 0.05}} {
		rng := rand.New(rand.NewPCG(41, 42))
		m := New(genPYDT(rng, 2000, tc.c, tc.alpha, tc.beta), 5)
		randomEvidence(t, rng, m, 0.1, 0.1)
		if err := m.Recompute(); err != nil {
			t.Fatal(err)
		}
		s := &m.seg
		top := 1
		for k := range s.kids {
			if len(s.kids[k]) > 0 {
				top = k
			}
		}
		for k := 1; k <= top+1; k++ {
			c := 1 << k
			// Room for a sixteenth more blocks (at least three), allowing
			// for the allocator's size classes (at most an eighth more).
			blocks := len(s.kids[k]) / c
			room := (blocks + max(blocks/16, 3)) * 9 / 8
			if got := cap(s.kids[k]) / c; got > room {
				t.Errorf("%s: class %d: room for %d blocks, %d in use", tc.name, k, got, blocks)
			}
			if rec := (c - 2) * s.rs; rec > 0 {
				if got := cap(s.recs[k]) / rec; got > room {
					t.Errorf("%s: class %d: records for %d blocks, %d in use", tc.name, k, got, blocks)
				}
			}
		}
	}
}
