package bp

import (
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func TestNoAllocation(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	tr := genPYDT(rng, 200, 1, 0.5, 0.3)
	const D = 4
	m := New(tr, D)
	randomEvidence(t, rng, m, 0.2, 0.2)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	v := pydt.NodeID(3)
	old := m.Detach(v)
	target := pydt.NodeID(17) // a leaf: its ID survives the moves below
	pos := pydt.Position{Node: target, Time: interp(tr.ParentTime(target), tr.Time(target), 0.5)}
	m.Attach(v, old)
	x := make([]float64, tr.Cap()*D)
	mean := make([]float64, tr.Cap()*D)
	vari := make([]float64, tr.Cap()*D)
	cases := []struct {
		name string
		f    func()
	}{
		{"propose-reject", func() {
			back := m.Detach(v)
			m.Attach(v, pos)
			_ = m.LogLik()
			m.Detach(v)
			m.Attach(v, back)
		}},
		{"LogLikIfAttached", func() {
			back := m.Detach(v)
			_ = m.LogLikIfAttached(v, pos)
			m.Attach(v, back)
		}},
		{"SetTime", func() {
			p := tr.Parent(v)
			tp := tr.Time(p)
			m.SetTime(p, tp)
		}},
		{"TimeEval", func() {
			p := tr.Parent(v)
			t0 := tr.Time(p)
			e := m.TimeEval(p)
			lo, hi := e.Bounds()
			_ = e.LogLik(interp(lo, hi, 0.3))
			_ = e.LogLik(interp(lo, hi, 0.7))
			e.Commit(t0)
		}},
		{"SetEvidence", func() {
			_ = m.SetEvidence(5, 1, 0.3, 2)
			_ = m.LogLik()
		}},
		{"Recompute", func() { _ = m.Recompute() }},
		{"Marginals", func() { _ = m.Marginals(mean, vari) }},
		{"SampleLocations", func() { _ = m.SampleLocations(rng, x) }},
		{"SuffStats", func() { _, _, _ = m.SuffStats(x) }},
	}
	for _, c := range cases {
		// Recompute lays out blocks with append(s, make(...)...), which
		// allocates under -race (raceEnabled).
		if c.name == "Recompute" && raceEnabled {
			continue
		}
		if a := testing.AllocsPerRun(50, c.f); a != 0 {
			t.Errorf("%s: %v allocations per run", c.name, a)
		}
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestNoAllocationHub moves many children of a branch point of degree 150
// away and back, so that its block shrinks and grows: after the first round
// the blocks come from the free lists.
func TestNoAllocationHub(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	tr := hubTree(rng, 200, 150, false)
	m := New(tr, 3)
	randomEvidence(t, rng, m, 0.1, 0.1)
	if err := m.Recompute(); err != nil {
		t.Fatal(err)
	}
	root := tr.Root()
	target := pydt.NodeID(160) // a leaf below the hub
	if tr.Parent(target) == root {
		t.Fatal("target hangs at the hub")
	}
	moved := make([]pydt.NodeID, 0, 150)
	round := func() {
		moved = moved[:0]
		for tr.Degree(root) > 3 {
			v := tr.FirstChild(root)
			if v == target {
				v = tr.NextSibling(v)
			}
			m.Detach(v)
			m.Attach(v, pydt.Position{Node: target, Time: interp(tr.ParentTime(target), tr.Time(target), 0.5)})
			moved = append(moved, v)
		}
		_ = m.LogLik()
		for _, v := range moved {
			m.Detach(v)
			m.Attach(v, pydt.Position{Node: root, AtNode: true})
		}
		_ = m.LogLik()
	}
	round()
	if a := testing.AllocsPerRun(5, round); a != 0 {
		t.Errorf("%v allocations per round", a)
	}
	checkSeg(t, m)
	if got, want := m.LogLik(), refLogLik(m); !relClose(got, want, 1e-12) {
		t.Errorf("LogLik %.15g, reference %.15g", got, want)
	}
}
