package treemove

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// TestTimeMovesEvaluateCandidatesOnly checks that the time moves make no
// likelihood evaluation besides those of their candidates: the evaluations
// the model counts (bp.Model.TimeEvaluations) equal the candidates the
// sampler scored. A TimeSweep used to evaluate each branch point's current
// time once more, though the log likelihood of the current state is known
// (the same for every branch point). It also checks the value carried
// through the sweep: at its end it must equal the model's log likelihood.
func TestTimeMovesEvaluateCandidatesOnly(t *testing.T) {
	cases := []struct {
		name  string
		c     priorCase
		n, d  int
		moves func(s *Sampler) error
	}{
		{"timesweep/pydt", priorCase{"", 0.5, 0.2, pydt.DivInv{C: 1}}, 40, 2, (*Sampler).TimeSweep},
		{"timesweep/ddt", priorCase{"", 0, 0, pydt.DivInv{C: 1.5}}, 40, 3, (*Sampler).TimeSweep},
		{"timemove", priorCase{"", 0.5, 0.2, pydt.DivInv{C: 1}}, 40, 2, func(s *Sampler) error {
			for range 20 {
				s.TimeMove()
			}
			return nil
		}},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(71, uint64(ci)))
			s := dataSampler(t, tc.c, tc.n, tc.d, rng)
			m := s.Model()
			for rep := range 5 {
				e0, c0, a0 := m.TimeEvaluations(), s.timeEvals, s.Stats.Time.Accepted
				if err := tc.moves(s); err != nil {
					t.Fatal(err)
				}
				got, want := m.TimeEvaluations()-e0, s.timeEvals-c0
				if got != want {
					t.Errorf("rep %d: %d likelihood evaluations for %d candidates", rep, got, want)
				}
				if s.Stats.Time.Accepted == a0 {
					t.Errorf("rep %d: no time changed", rep)
				}
				if !strings.HasPrefix(tc.name, "timesweep") {
					continue
				}
				ll := m.LogLik()
				fresh := bp.New(s.Tree(), tc.d)
				copyEvidence(t, m, fresh)
				if err := fresh.Recompute(); err != nil {
					t.Fatal(err)
				}
				if want := fresh.LogLik(); !(math.Abs(ll-want) <= 1e-9*(1+math.Abs(want))) {
					t.Errorf("rep %d: log likelihood %v after the sweep, %v recomputed", rep, ll, want)
				}
				if !(math.Abs(s.sweepLL-ll) <= 1e-9*(1+math.Abs(ll))) {
					t.Errorf("rep %d: the sweep carried log likelihood %v to its end, the model has %v", rep, s.sweepLL, ll)
				}
			}
		})
	}
}

// copyEvidence copies the evidence and the variance of m into dst, a model
// of the same tree.
func copyEvidence(t *testing.T, m, dst *bp.Model) {
	t.Helper()
	if err := dst.SetVariances(m.Variances()); err != nil {
		t.Fatal(err)
	}
	for i := range m.Tree().NumLeaves() {
		for d := range m.Dims() {
			mean, prec := m.Evidence(pydt.NodeID(i), d)
			if err := dst.SetEvidence(pydt.NodeID(i), d, mean, prec); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTimeSweepRollback checks what a TimeSweep does when the messages
// after it give a log likelihood that is not finite (forced here through
// the afterSweep hook): every time is restored, the likelihood is that of
// the state before, the sweep's acceptances are no longer counted, and an
// error of the recomputation that follows the restoration is returned, not
// dropped (forced by restoring a branch point to its parent's time).
func TestTimeSweepRollback(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt bool // the restoration leaves an edge of length zero
	}{
		{"restored", false},
		{"recompute fails", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 9))
			s := dataSampler(t, priorCase{"", 0.5, 0.2, pydt.DivInv{C: 1}}, 30, 2, rng)
			tr := s.Tree()
			before := map[pydt.NodeID]pydt.Time{}
			for _, v := range tr.PreOrder(nil) {
				if !tr.IsLeaf(v) {
					before[v] = tr.Time(v)
				}
			}
			ll0 := s.Model().LogLik()
			st0 := s.Stats
			s.afterSweep = func() float64 {
				if s.Stats.Time.Accepted == st0.Time.Accepted {
					t.Error("the sweep accepted nothing: the test needs acceptances to take back")
				}
				if tc.corrupt {
					// tsave[0] is the root, tsave[1] a child of it.
					if tr.Parent(s.tsave[1].v) != s.tsave[0].v {
						t.Fatal("the second branch point visited is not a child of the root")
					}
					s.tsave[1].t = s.tsave[0].t
				}
				return math.NaN()
			}
			err := s.TimeSweep()
			if s.Stats.Time.Proposed != st0.Time.Proposed+len(before) {
				t.Errorf("proposed %d, want %d", s.Stats.Time.Proposed, st0.Time.Proposed+len(before))
			}
			if s.Stats.Time.Accepted != st0.Time.Accepted {
				t.Errorf("accepted %d after a rolled-back sweep, want %d", s.Stats.Time.Accepted, st0.Time.Accepted)
			}
			if s.Stats.NonFinite != st0.NonFinite+1 {
				t.Errorf("non-finite count %d, want %d", s.Stats.NonFinite, st0.NonFinite+1)
			}
			if tc.corrupt {
				if err == nil || !errors.Is(err, bp.ErrZeroEdge) || !strings.Contains(err.Error(), "restoring the times") {
					t.Fatalf("error %v, want one wrapping bp.ErrZeroEdge that says what failed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for v, tv := range before {
				if tr.Time(v) != tv {
					t.Errorf("branch point %d: time %v after the rollback, want %v", v, tr.Time(v), tv)
				}
			}
			if ll := s.Model().LogLik(); !(math.Abs(ll-ll0) <= 1e-9*(1+math.Abs(ll0))) {
				t.Errorf("log likelihood %v after the rollback, %v before", ll, ll0)
			}
		})
	}
}
