package bp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// genPYDT draws a tree with n leaves from the PYDT generative process with
// a(t) = c/(1-t), concentration alpha and discount beta: point i follows the
// paths of the earlier points, diverging on an edge traversed by m points
// with hazard a(t) Γ(m-β)/Γ(m+1+α), and at a branch point with K children
// either starts a new branch (probability (α+βK)/(m+α)) or follows child k
// (probability (n_k-β)/(m+α)). Cost O(N · depth · degree).
func genPYDT(rng *rand.Rand, n int, c, alpha, beta float64) *pydt.Tree {
	tr := pydt.New(n)
	tr.Plant(0)
	for i := 1; i < n; i++ {
		leaf := pydt.NodeID(i)
		u, ta := tr.Root(), pydt.Origin
	walk:
		for {
			mm := float64(tr.Count(u))
			lg1, _ := math.Lgamma(mm - beta)
			lg2, _ := math.Lgamma(mm + 1 + alpha)
			rate := c * math.Exp(lg1-lg2)
			td := pydt.TimeFromLogOneMinus(ta.LogOneMinus() - rng.ExpFloat64()/rate)
			if !ta.Before(td) {
				continue // rounding put the divergence on the branch point above
			}
			if td.Before(tr.Time(u)) {
				tr.Attach(leaf, pydt.Position{Node: u, Time: td})
				break
			}
			if tr.IsLeaf(u) {
				continue // 1-t underflowed; draw again
			}
			k := float64(tr.Degree(u))
			r := rng.Float64() * (mm + alpha)
			if r < alpha+beta*k {
				tr.Attach(leaf, pydt.Position{Node: u, AtNode: true})
				break
			}
			r -= alpha + beta*k
			last := pydt.NoNode
			for ch := tr.FirstChild(u); ch != pydt.NoNode; ch = tr.NextSibling(ch) {
				last = ch
				r -= float64(tr.Count(ch)) - beta
				if r < 0 {
					break
				}
			}
			ta, u = tr.Time(u), last
			continue walk
		}
	}
	return tr
}

// interp returns the time a fraction f of the way from lo to hi.
func interp(lo, hi pydt.Time, f float64) pydt.Time {
	if hi.T() <= 0.5 {
		return pydt.TimeAt(lo.T() + f*(hi.T()-lo.T()))
	}
	return pydt.TimeFromOneMinus(lo.OneMinus() - f*(lo.OneMinus()-hi.OneMinus()))
}

// inTree reports whether v hangs below the root.
func inTree(tr *pydt.Tree, v pydt.NodeID) bool {
	if !tr.InUse(v) {
		return false
	}
	for tr.Parent(v) != pydt.NoNode {
		v = tr.Parent(v)
	}
	return v == tr.Root()
}

// randomPosition draws a valid attachment position for the detached subtree
// v: at a branch point earlier than v, or on an edge, strictly inside it and
// before v's time.
func randomPosition(rng *rand.Rand, tr *pydt.Tree, v pydt.NodeID) pydt.Position {
	tv := tr.Time(v)
	for {
		u := pydt.NodeID(rng.IntN(tr.Cap()))
		if !inTree(tr, u) {
			continue
		}
		if !tr.IsLeaf(u) && rng.IntN(3) == 0 && tr.Time(u).Before(tv) {
			return pydt.Position{Node: u, AtNode: true}
		}
		lo, hi := tr.ParentTime(u), tr.Time(u)
		if tv.Before(hi) {
			hi = tv
		}
		if !lo.Before(hi) {
			continue
		}
		t := interp(lo, hi, 0.05+0.9*rng.Float64())
		if lo.Before(t) && t.Before(hi) {
			return pydt.Position{Node: u, Time: t}
		}
	}
}

// randomEvidence sets evidence on every leaf and dimension: missing with
// probability pMiss, finite precision with probability pNoisy, observed
// otherwise, with values around the leaf's true location.
func randomEvidence(t testing.TB, rng *rand.Rand, m *Model, pMiss, pNoisy float64) {
	t.Helper()
	for i := range m.Tree().NumLeaves() {
		for d := range m.Dims() {
			u := rng.Float64()
			x := 2*rng.NormFloat64() + float64(d)
			var err error
			switch {
			case u < pMiss:
				err = m.Observe(pydt.NodeID(i), d, math.NaN())
			case u < pMiss+pNoisy:
				err = m.SetEvidence(pydt.NodeID(i), d, x, 0.3+3*rng.Float64())
			default:
				err = m.Observe(pydt.NodeID(i), d, x)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestGenPYDTValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range []struct{ c, a, b float64 }{{1, 0, 0}, {0.5, 1, 0.5}, {2, 0.5, 0.2}} {
		tr := genPYDT(rng, 200, p.c, p.a, p.b)
		if err := tr.Validate(); err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}
