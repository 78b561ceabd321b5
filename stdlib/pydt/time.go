package pydt

import "math"

// Time is a diffusion time t in [0, 1]. It keeps both t and 1-t, each
// computed from whichever of the two is the smaller, so that times crowded
// against either end of the unit interval keep full relative precision. With
// a(t) = c/(1-t) and small c, divergence times closer to 1 than float64
// resolves in t are common; their complement 1-t is still exact here.
//
// The zero value is the origin, t = 0.
type Time struct {
	t        float64
	oneMinus float64
	set      bool // false for the zero value, which means t = 0
}

// Origin is the time t = 0 at which every path starts.
var Origin = Time{t: 0, oneMinus: 1, set: true}

// Leaf is the time t = 1 at which every leaf sits.
var Leaf = Time{t: 1, oneMinus: 0, set: true}

// TimeAt returns the time t. It is precise when t is small; use
// TimeFromOneMinus for times close to 1.
func TimeAt(t float64) Time {
	return Time{t: t, oneMinus: 1 - t, set: true}
}

// TimeFromOneMinus returns the time whose complement 1-t is u. It keeps the
// full relative precision of u however small it is.
func TimeFromOneMinus(u float64) Time {
	return Time{t: 1 - u, oneMinus: u, set: true}
}

// TimeFromLogOneMinus returns the time t with log(1-t) = l (l <= 0).
func TimeFromLogOneMinus(l float64) Time {
	if l > -math.Ln2 {
		// 1-t > 1/2: t is the small, precise one.
		return TimeAt(-math.Expm1(l))
	}
	return TimeFromOneMinus(math.Exp(l))
}

// T returns t.
func (x Time) T() float64 {
	if !x.set {
		return 0
	}
	return x.t
}

// OneMinus returns 1-t with full relative precision.
func (x Time) OneMinus() float64 {
	if !x.set {
		return 1
	}
	return x.oneMinus
}

// LogOneMinus returns log(1-t), which is -Inf at t = 1.
func (x Time) LogOneMinus() float64 {
	if !x.set {
		return 0
	}
	if x.t < 0.5 {
		return math.Log1p(-x.t)
	}
	return math.Log(x.oneMinus)
}

// Since returns the elapsed time y - x, accurate for both small and
// nearly-one times.
func (x Time) Since(earlier Time) float64 {
	if x.T() <= 0.5 {
		return x.T() - earlier.T()
	}
	return earlier.OneMinus() - x.OneMinus()
}

// Before reports whether x is strictly earlier than y.
func (x Time) Before(y Time) bool {
	if x.T() <= 0.5 || y.T() <= 0.5 {
		return x.T() < y.T()
	}
	return x.OneMinus() > y.OneMinus()
}

// IsLeaf reports whether x is t = 1.
func (x Time) IsLeaf() bool { return x.set && x.oneMinus == 0 }

// Valid reports whether x lies in [0, 1] and is not NaN.
func (x Time) Valid() bool {
	return x.T() >= 0 && x.T() <= 1 && x.OneMinus() >= 0 && x.OneMinus() <= 1
}
