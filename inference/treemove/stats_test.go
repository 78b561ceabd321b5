package treemove

import (
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestStatsAdd checks that Add sums every counter, field by field, against
// sums written out by hand.
func TestStatsAdd(t *testing.T) {
	a := Stats{Subtree: MoveStats{10, 3}, Time: MoveStats{20, 7}, Position: MoveStats{5, 1}, Local: MoveStats{4, 2}, GaveUp: 2, NonFinite: 4,
		Tries: 30, Steps: 300, PositionEvals: 25}
	b := Stats{Subtree: MoveStats{1, 1}, Time: MoveStats{2, 0}, Position: MoveStats{30, 9}, Local: MoveStats{8, 3}, GaveUp: 5, NonFinite: 6,
		Tries: 1, Steps: 7, PositionEvals: 150}
	for _, tc := range []struct {
		name       string
		start, add Stats
		want       Stats
	}{
		{"into zero", Stats{}, a, a},
		{"zero added", a, Stats{}, a},
		{"two counts", a, b, Stats{Subtree: MoveStats{11, 4}, Time: MoveStats{22, 7}, Position: MoveStats{35, 10}, Local: MoveStats{12, 5},
			GaveUp: 7, NonFinite: 10, Tries: 31, Steps: 307, PositionEvals: 175}},
	} {
		s := tc.start
		s.Add(tc.add)
		if s != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, s, tc.want)
		}
	}
}

// TestWorkCounters checks the work counters against what the moves must
// do: with MaxTries = 1 one proposal attempt per subtree move, each
// passing at least the root; with more tries at least one attempt per
// move and MaxTries per move that gave up; at least one evaluation per
// position move (its shrinkage evaluates until it lands in the slice) and
// at most MaxSteps + maxShrink.
func TestWorkCounters(t *testing.T) {
	c := priorCase{"ddt", 0, 0, pydt.DivInv{C: 1}}
	for _, tries := range []int{1, 1000} {
		s := dataSampler(t, c, 60, 2, rand.New(rand.NewPCG(uint64(tries), 8)))
		s.MaxTries = tries
		for range 20 {
			if err := s.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
		st := s.Stats
		if tries == 1 && st.Tries != st.Subtree.Proposed {
			t.Errorf("MaxTries 1: %d attempts in %d subtree moves", st.Tries, st.Subtree.Proposed)
		}
		if st.Tries < st.Subtree.Proposed+(tries-1)*st.GaveUp || st.Tries > tries*st.Subtree.Proposed {
			t.Errorf("MaxTries %d: %d attempts in %d subtree moves, %d gave up", tries, st.Tries, st.Subtree.Proposed, st.GaveUp)
		}
		if st.Steps < st.Tries {
			t.Errorf("MaxTries %d: %d nodes passed in %d attempts", tries, st.Steps, st.Tries)
		}
		if p := st.Position.Proposed; p == 0 || st.PositionEvals < p || st.PositionEvals > p*(s.MaxSteps+maxShrink) {
			t.Errorf("%d evaluations in %d position moves", st.PositionEvals, p)
		}
	}
}

// TestTopologyFixed: with TopologyFixed a Sweep makes time updates only:
// no subtree, local or position move is proposed, every node keeps its
// parent, and the times change. Without it the same sweeps change the
// topology.
func TestTopologyFixed(t *testing.T) {
	c := priorCase{"ddt", 0, 0, pydt.DivInv{C: 1}}
	for _, fixed := range []bool{true, false} {
		s := dataSampler(t, c, 40, 2, rand.New(rand.NewPCG(3, 21)))
		s.TopologyFixed = fixed
		tr := s.Tree()
		parents := make([]pydt.NodeID, tr.Cap())
		times := make([]float64, tr.Cap())
		for v := range pydt.NodeID(tr.Cap()) {
			if tr.InUse(v) {
				parents[v], times[v] = tr.Parent(v), tr.Time(v).S()
			}
		}
		for range 10 {
			if err := s.Sweep(); err != nil {
				t.Fatal(err)
			}
		}
		moved, timed := 0, 0
		for v := range pydt.NodeID(tr.Cap()) {
			if !tr.InUse(v) {
				continue
			}
			if tr.Parent(v) != parents[v] {
				moved++
			}
			if !tr.IsLeaf(v) && tr.Time(v).S() != times[v] {
				timed++
			}
		}
		st := s.Stats
		topo := st.Subtree.Proposed + st.Local.Proposed + st.Position.Proposed
		switch {
		case fixed && (topo != 0 || moved != 0 || timed == 0 || st.Time.Accepted == 0):
			t.Errorf("TopologyFixed: %d topology moves proposed, %d nodes with a new parent, %d times changed (%d accepted)",
				topo, moved, timed, st.Time.Accepted)
		case !fixed && (topo == 0 || moved == 0):
			t.Errorf("without TopologyFixed: %d topology moves proposed, %d nodes with a new parent", topo, moved)
		}
	}
}
