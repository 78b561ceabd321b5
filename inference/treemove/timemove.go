package treemove

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// maxShrink bounds the shrinkage loops of the slice samplers; it is reached
// only when the slice has collapsed to rounding error around the current
// point, which is then kept.
const maxShrink = 200

// TimeMove slice samples the divergence time of a branch point drawn
// uniformly (see SliceTime) and reports whether it changed. It does nothing
// when the tree has no branch point.
func (s *Sampler) TimeMove() bool {
	v := s.randomInternal()
	if v == pydt.NoNode {
		return false
	}
	return s.SliceTime(v)
}

// timeTarget holds what the time target needs besides s.
type timeTarget struct {
	e        *bp.TimeEval
	j        float64   // J_v
	lo, hi   float64   // s of the parent and of the earliest child
	tlo, thi pydt.Time // their times
	ll       float64   // the log likelihood at the last candidate evaluated
}

// SliceTime updates the time of the branch point v by slice sampling (Neal
// 2003: stepping out with at most MaxSteps widths of TimeWidth, or the whole
// support when it is narrower than two widths, then shrinkage) and reports
// whether it changed. The variable is s = -log(1-t), the coordinate
// pydt.Time keeps; the target in s is
//
//	log a(t) + log(1-t) - A(t) J_v + log L(T),
//
// the factors of the prior that involve t_v (the node-local form of
// pydt.NodeLogPrior, J_v = H_{m_v-1} - Σ_k H_{n_k-1}) with the Jacobian
// dt/ds = 1-t (together log dA/ds, Divergence.LogRateS, formed without
// cancellation), and the likelihood, on the interval between the parent's time (or 0)
// and the earliest child's time. The likelihood comes from bp.TimeEval: one
// outside-message computation along the path, then O(K_v · D) per candidate
// time, and one path update (Commit) for the accepted time.
func (s *Sampler) SliceTime(v pydt.NodeID) bool {
	return s.sliceTime(s.m.TimeEval(v), false)
}

// TimeSweep updates the time of every branch point once, each before its
// descendants, by the slice sampling of SliceTime, through
// bp.Model.TimeSweep: O(K · D) of likelihood work per branch point besides
// its candidates, instead of SliceTime's two walks along the path to the
// root. A systematic scan of updates that each leave the posterior
// invariant leaves it invariant. The log likelihood of the current state,
// the same for every branch point, is carried from one update to the next
// (the value at the accepted candidate), so that no update evaluates it
// afresh. Should the messages after the sweep give a log likelihood that is
// not finite (a state float64 barely resolves: each update is checked only
// through its own evaluator), every time is restored, the messages are
// recomputed and the sweep's acceptances are taken back from Stats; the
// error is that of the recomputation, if it fails.
func (s *Sampler) TimeSweep() error {
	tr := s.tr
	if tr.NumInternal() == 0 {
		return nil
	}
	if cap(s.tsave) < tr.NumLeaves() {
		s.tsave = make([]timeSave, 0, tr.NumLeaves()) // at most N-1 branch points
	}
	s.tsave = s.tsave[:0]
	accepted := s.Stats.Time.Accepted
	s.sweepLL = s.m.LogLik()
	s.m.TimeSweep(s.visit)
	ll := s.m.LogLik()
	if s.afterSweep != nil {
		ll = s.afterSweep()
	}
	if !math.IsNaN(ll) && !math.IsInf(ll, 0) {
		return nil
	}
	s.Stats.NonFinite++
	s.Stats.Time.Accepted = accepted
	for _, x := range s.tsave {
		tr.SetTime(x.v, x.t)
	}
	if err := s.m.Recompute(); err != nil {
		return fmt.Errorf("treemove: restoring the times after a time sweep whose log likelihood was %v: %w", ll, err)
	}
	return nil
}

// timeSave is a branch point's time before a TimeSweep.
type timeSave struct {
	v pydt.NodeID
	t pydt.Time
}

// sliceTime is SliceTime on the evaluator e, targeted at the branch point
// to update; inSweep tells that e belongs to bp.Model.TimeSweep, during
// which the model's LogLik is not available: the current log likelihood is
// then s.sweepLL, and the value at the accepted time is left there.
func (s *Sampler) sliceTime(e *bp.TimeEval, inSweep bool) bool {
	tr := s.tr
	v := e.Node()
	s.Stats.Time.Proposed++
	t0 := tr.Time(v)
	tt := timeTarget{e: e, j: pydt.NodeJ(tr, v, s.alpha, s.beta, s.h)}
	tt.tlo, tt.thi = tt.e.Bounds()
	tt.lo, tt.hi = -tt.tlo.LogOneMinus(), -tt.thi.LogOneMinus()
	x0 := -t0.LogOneMinus()
	var ll0 float64
	if inSweep {
		ll0 = s.sweepLL
	} else {
		ll0 = s.m.LogLik()
	}
	f0 := s.timeLogDensity(&tt, t0, ll0)
	if !Evaluable(f0) {
		// No slice to sample at a state whose density is not finite; the
		// engine reports such a state (see Finite).
		s.Stats.NonFinite++
		return false
	}
	y := f0 - s.rng.ExpFloat64()

	w := s.TimeWidth
	l, r := tt.lo, tt.hi
	if r-l > 2*w {
		// Step out; a support narrower than two widths is taken whole
		// (the choice depends on the support only, not on x0).
		l = x0 - w*s.rng.Float64()
		r = l + w
		jl := int(float64(s.MaxSteps) * s.rng.Float64())
		kr := s.MaxSteps - 1 - jl
		for ; jl > 0 && l > tt.lo && s.timeEval(&tt, l) > y; jl-- {
			l -= w
		}
		for ; kr > 0 && r < tt.hi && s.timeEval(&tt, r) > y; kr-- {
			r += w
		}
		l, r = max(l, tt.lo), min(r, tt.hi)
	}
	for range maxShrink {
		x1 := l + s.rng.Float64()*(r-l)
		if s.timeEval(&tt, x1) > y {
			if x1 == x0 {
				return false
			}
			tt.e.Commit(pydt.TimeFromLogOneMinus(-x1))
			if inSweep {
				s.sweepLL = tt.ll
				s.Stats.Time.Accepted++
				return true
			}
			if s.settled() {
				s.Stats.Time.Accepted++
				return true
			}
			// Outside the slice after all: undo, and shrink as for any
			// rejected point.
			s.m.SetTime(v, t0)
			tt.e = s.m.TimeEval(v)
		}
		if x1 < x0 {
			l = x1
		} else {
			r = x1
		}
	}
	return false
}

// timeEval returns the target at s = x, or -Inf outside the interval,
// without changing the tree (bp.TimeEval, O(K_v · D)).
func (s *Sampler) timeEval(tt *timeTarget, x float64) float64 {
	if !(x > tt.lo && x < tt.hi) {
		return math.Inf(-1)
	}
	t := pydt.TimeFromLogOneMinus(-x)
	if !tt.tlo.Before(t) || !t.Before(tt.thi) {
		return math.Inf(-1)
	}
	s.timeEvals++
	tt.ll = tt.e.LogLik(t)
	return s.refuse(s.timeLogDensity(tt, t, tt.ll))
}

func (s *Sampler) timeLogDensity(tt *timeTarget, t pydt.Time, ll float64) float64 {
	return s.div.LogRateS(t) - s.div.Cumulative(t)*tt.j + ll
}
