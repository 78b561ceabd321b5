package scalar

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Defaults used by the zero value of Slice.
const (
	// DefaultWidth is the initial interval width used when Slice.Width is 0.
	DefaultWidth = 1.0
	// DefaultMaxSteps is Neal's m, used when Slice.MaxSteps is 0: the
	// stepped-out interval is at most DefaultMaxSteps·Width wide.
	DefaultMaxSteps = 50
	// DefaultMaxShrink caps the shrinkage proposals when Slice.MaxShrink is 0.
	// Shrinkage halves the interval about every other proposal, so a cap of
	// 200 is hit only by a log density that is NaN or not a function.
	DefaultMaxShrink = 200
)

// Slice is a univariate slice sampler with stepping out and shrinkage (Neal
// 2003, "Slice sampling", Annals of Statistics 31(3), Figures 3 and 5). Its
// zero value is ready to use: every zero field takes its default.
//
// One update from x0 draws a level y = log f(x0) + log u, u ~ Uniform(0, 1],
// places an interval of width Width at random around x0, steps each end out
// by Width while it lies inside the slice {x : log f(x) ≥ y} (at most
// MaxSteps−1 steps in all, split at random between the two ends as Neal
// prescribes, which keeps the procedure reversible), then proposes points
// uniformly in the interval, shrinking it towards x0 after each rejection,
// until one lies in the slice. The update leaves the density f invariant for
// every choice of the fields; they tune only its speed.
type Slice struct {
	// Width is the initial width w of the interval around the current point,
	// ideally of the order of the width of a typical slice. Zero means
	// DefaultWidth; a negative or non-finite width is a programmer error.
	Width float64
	// MaxSteps is Neal's m: the stepped-out interval is at most MaxSteps·Width
	// wide. 1 disables stepping out. Zero means DefaultMaxSteps.
	MaxSteps int
	// MaxShrink caps the number of shrinkage proposals. When it is reached
	// the update returns x0 unchanged. Zero means DefaultMaxShrink.
	//
	// The cap keeps detailed balance. Neal's proof of reversibility
	// (Section 4.3) pairs every sequence of proposals that moves x0 to x1 with
	// one of the same probability and the same length that moves x1 to x0:
	// a rejected point never lies between x0 and x1 (it would have cut the
	// accepted point out of the interval), so it shrinks the interval the
	// same way from either end. Truncating at MaxShrink proposals therefore
	// removes paired sequences of equal length from both directions, and the
	// removed probability becomes a self-transition, which never breaks
	// detailed balance. Because x0 itself is always in the slice (the level y
	// is at most log f(x0) and membership uses ≥), a proposal equal to x0 is
	// accepted, and the interval collapses onto x0 in finitely many steps
	// for any deterministic log density; the cap guards against a NaN-valued
	// or non-deterministic one.
	MaxShrink int
}

// params returns the fields with defaults applied, panicking on invalid ones.
func (s Slice) params() (w float64, m, k int) {
	w, m, k = s.Width, s.MaxSteps, s.MaxShrink
	if w == 0 {
		w = DefaultWidth
	}
	if m == 0 {
		m = DefaultMaxSteps
	}
	if k == 0 {
		k = DefaultMaxShrink
	}
	if !(w > 0) || math.IsInf(w, 1) || m < 0 || k < 0 {
		panic(fmt.Sprintf("scalar: invalid Slice{Width: %v, MaxSteps: %d, MaxShrink: %d}", s.Width, s.MaxSteps, s.MaxShrink))
	}
	return w, m, k
}

// Sample performs one slice-sampling update of x0 under the unnormalised log
// density logf on the real line and returns the new point and the number of
// calls to logf made (at least 2 when the update runs: one at x0 and one
// proposal).
//
// logf may return −Inf outside the support of the density: such points are
// outside every slice, so stepping out stops at the boundary and shrinkage
// rejects them. NaN and +Inf are treated as outside the slice too: they say
// that the density cannot be evaluated there (see Finite), and accepting
// one would leave the chain at a point no later update can compare with
// another. The update therefore samples the density restricted to the points
// where logf is finite.
//
// Sample never panics on the values of logf. When logf(x0) is not finite
// (NaN, −Inf or +Inf) there is no slice to sample: Sample returns x0 and 1
// without further calls. Callers that need to know check Finite(logf(x0))
// first, or use Update, which says so with an error. Width·MaxSteps must be
// small enough for x0 ± Width·MaxSteps to be finite.
//
// Sample allocates nothing beyond what logf allocates.
func (s Slice) Sample(rng *rand.Rand, x0 float64, logf func(float64) float64) (x float64, evals int) {
	x, evals, _ = s.Update(rng, x0, logf)
	return x, evals
}

// ErrNotFinite is wrapped by the error of Update when the log density at the
// starting point is NaN, −Inf or +Inf.
var ErrNotFinite = errors.New("the log density is not finite")

// Finite reports whether a log density is a finite number: the only values
// at which a slice sampler can start, and the only values it accepts.
func Finite(logDensity float64) bool {
	return !math.IsNaN(logDensity) && !math.IsInf(logDensity, 0)
}

// Update is Sample with an error instead of a silent no-op: when logf(x0)
// is not finite it returns x0, 1 and an error wrapping ErrNotFinite that
// names x0 and the value.
func (s Slice) Update(rng *rand.Rand, x0 float64, logf func(float64) float64) (x float64, evals int, err error) {
	w, m, maxShrink := s.params()
	f0 := logf(x0)
	evals = 1
	if !Finite(f0) {
		return x0, evals, fmt.Errorf("scalar: slice sampling from x0 = %v: %w (%v)", x0, ErrNotFinite, f0)
	}
	// The level: log u with u uniform on (0, 1]; 1 − Float64() avoids log 0.
	y := f0 + math.Log(1-rng.Float64())
	in := func(x float64) bool {
		evals++
		f := logf(x)
		return f >= y && !math.IsInf(f, 1)
	}

	// Stepping out (Neal 2003, Figure 3), with at most m − 1 steps in all.
	l := x0 - w*rng.Float64()
	r := l + w
	j := int(float64(m) * rng.Float64())
	k := m - 1 - j
	for ; j > 0; j-- {
		if !in(l) {
			break
		}
		l -= w
	}
	for ; k > 0; k-- {
		if !in(r) {
			break
		}
		r += w
	}

	// Shrinkage (Neal 2003, Figure 5): x0 stays inside [l, r] throughout.
	for range maxShrink {
		x1 := l + rng.Float64()*(r-l)
		if in(x1) {
			return x1, evals, nil
		}
		if x1 < x0 {
			l = x1
		} else {
			r = x1
		}
	}
	return x0, evals, nil
}

// Tuner adapts the Width of a slice sampler during burn-in. It sets Width to
// twice the mean absolute distance moved by the updates it has observed, a
// simple estimate of the typical slice width (Neal 2003 suggests setting the
// width from the behaviour of past iterations).
//
// Adapting the width from the chain's own history makes the transition kernel
// depend on the past, and the chain is then no longer guaranteed to leave the
// target invariant. Use a Tuner during burn-in only, then freeze it: sample
// after burn-in with the Slice field, whose Width no longer changes.
type Tuner struct {
	// Slice is the sampler being tuned; its Width is overwritten after every
	// update once MinUpdates updates have been observed.
	Slice Slice
	// MinUpdates is how many updates are observed before Width changes.
	// Zero means 10.
	MinUpdates int

	n       int
	sumJump float64
}

// Observe records one update from z0 to z1 (on the scale the sampler works
// on) and retunes Width.
func (t *Tuner) Observe(z0, z1 float64) {
	d := math.Abs(z1 - z0)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return
	}
	t.n++
	t.sumJump += d
	minUpdates := t.MinUpdates
	if minUpdates == 0 {
		minUpdates = 10
	}
	if t.n >= minUpdates && t.sumJump > 0 {
		t.Slice.Width = 2 * t.sumJump / float64(t.n)
	}
}

// Sample performs one update with the current width, as Slice.Sample does,
// and retunes the width from it.
func (t *Tuner) Sample(rng *rand.Rand, x0 float64, logf func(float64) float64) (x float64, evals int) {
	x, evals = t.Slice.Sample(rng, x0, logf)
	t.Observe(x0, x)
	return x, evals
}

// SampleTransformed performs one update with the current width, as
// Slice.SampleTransformed does, and retunes the width from the distance moved
// on the transformed (real-line) scale.
func (t *Tuner) SampleTransformed(rng *rand.Rand, x0 float64, tr Transform, logDensity func(float64) float64) (x float64, evals int) {
	z0 := tr.startZ(x0)
	x, evals = t.Slice.SampleTransformed(rng, x0, tr, logDensity)
	t.Observe(z0, tr.ToReal(x))
	return x, evals
}

// UpdateTransformed is SampleTransformed with the errors of
// Slice.UpdateTransformed; a failed update is not observed.
func (t *Tuner) UpdateTransformed(rng *rand.Rand, x0 float64, tr Transform, logDensity func(float64) float64) (x float64, evals int, err error) {
	z0 := tr.startZ(x0)
	x, evals, err = t.Slice.UpdateTransformed(rng, x0, tr, logDensity)
	if err == nil {
		t.Observe(z0, tr.ToReal(x))
	}
	return x, evals, err
}
