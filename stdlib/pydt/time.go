package pydt

import (
	"fmt"
	"math"
)

// Time is a diffusion time t in [0, 1], kept as the coordinate
// s = -log(1-t) in [0, +Inf]: t = 1 - e^(-s). Every float64 s is a time, so
// times far closer to 1 than float64 resolves in t, or even in 1-t (s > 745,
// 1-t < 5e-324), are represented, ordered and scored exactly. Near t = 0,
// s = t (1 + t/2 + ...) keeps the relative precision of t. Derived
// quantities are computed from s to within a few units in the last place:
// t = -expm1(-s), 1-t = exp(-s) (0 when it underflows), and the elapsed
// time between two times (Since) as a difference formed with expm1, which
// is exact where subtracting t or 1-t would cancel.
//
// Two Times are equal exactly when their s are; the zero value is the
// origin, t = 0.
type Time struct {
	s float64
}

// Origin is the time t = 0 at which every path starts (s = 0).
var Origin = Time{}

// Leaf is the time t = 1 at which every leaf sits (s = +Inf).
var Leaf = Time{s: math.Inf(1)}

// TimeFromS returns the time with s = -log(1-t) = s. It is the exact
// constructor: every s in [0, +Inf] is a valid time.
func TimeFromS(s float64) Time { return Time{s: s} }

// TimeAt returns the time t: the s nearest -log(1-t) for which T gives t
// back exactly, when one of the few nearest does (for t <= 1/2 it almost
// always does), and -log1p(-t) otherwise.
func TimeAt(t float64) Time {
	s := -math.Log1p(-t)
	return Time{s: snap(s, t, true, func(s float64) float64 { return -math.Expm1(-s) })}
}

// TimeFromOneMinus returns the time whose complement 1-t is u (u = 0 is
// t = 1): the s nearest -log(u) for which OneMinus gives u back exactly,
// when one of the few nearest does, and -log(u) otherwise. (For 1-t below
// about 0.4, several u share one s: the coordinate s, not 1-t, is what
// Time keeps.)
func TimeFromOneMinus(u float64) Time {
	s := -math.Log(u)
	return Time{s: snap(s, u, false, func(s float64) float64 { return math.Exp(-s) })}
}

// snap returns s, or one of its float64 neighbours within 3 steps, at which
// f (monotone, increasing or not) gives exactly want; s itself when none
// does.
func snap(s, want float64, increasing bool, f func(float64) float64) float64 {
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	got := f(s)
	if got == want {
		return s
	}
	up := (got < want) == increasing // step towards want
	x := s
	for range 3 {
		if up {
			x = math.Nextafter(x, math.Inf(1))
		} else {
			x = math.Nextafter(x, math.Inf(-1))
		}
		if f(x) == want {
			return x
		}
	}
	return s
}

// TimeFromLogOneMinus returns the time t with log(1-t) = l (l <= 0).
func TimeFromLogOneMinus(l float64) Time { return Time{s: -l} }

// S returns s = -log(1-t), the coordinate the time is kept in.
func (x Time) S() float64 { return x.s }

// T returns t = 1 - e^(-s).
func (x Time) T() float64 { return -math.Expm1(-x.s) }

// OneMinus returns 1-t = e^(-s), with full relative precision down to the
// smallest float64 (s < 708) and 0 beyond s ≈ 745.
func (x Time) OneMinus() float64 { return math.Exp(-x.s) }

// LogOneMinus returns log(1-t) = -s, which is -Inf at t = 1.
func (x Time) LogOneMinus() float64 { return -x.s }

// sinceCut is the gap in s above which Since subtracts 1-t directly: the
// relative error of e^(-a) - e^(-b) is then at most eps/(1 - e^(-sinceCut)),
// a few units in the last place.
const sinceCut = 0.5

// Since returns the elapsed time x - earlier, t_x - t_earlier =
// e^(-s_e) (1 - e^(-(s_x - s_e))), to a few units in the last place however
// close the two times are. It is 0 when that length underflows float64
// (both times beyond s ≈ 745), and negative when x is before earlier.
func (x Time) Since(earlier Time) float64 {
	// Elapsed(earlier.s, x.s, e^(-earlier.s), e^(-x.s)), with e^(-x.s)
	// computed only where Elapsed reads it.
	sa, sb := earlier.s, x.s
	if sa == sb {
		return 0
	}
	ua := math.Exp(-sa)
	if d := sb - sa; d > sinceCut || d < -sinceCut {
		return ua - math.Exp(-sb)
	}
	return -ua * math.Expm1(-(sb - sa))
}

// Elapsed returns t_b - t_a for the times with coordinates sa and sb, given
// ua = e^(-sa) and ub = e^(-sb): the computation of Time.Since, for callers
// that keep 1-t alongside s.
func Elapsed(sa, sb, ua, ub float64) float64 {
	if sa == sb {
		return 0 // also for two leaves, where sb - sa would be NaN
	}
	d := sb - sa
	if d > sinceCut || d < -sinceCut {
		return ua - ub
	}
	return -ua * math.Expm1(-d)
}

// Before reports whether x is strictly earlier than y.
func (x Time) Before(y Time) bool { return x.s < y.s }

// IsLeaf reports whether x is t = 1.
func (x Time) IsLeaf() bool { return math.IsInf(x.s, 1) }

// Valid reports whether x lies in [0, 1]: s >= 0 and not NaN.
func (x Time) Valid() bool { return x.s >= 0 }

// String formats the time as t, or as 1-t when t rounds to 1, or as s when
// 1-t underflows.
func (x Time) String() string {
	switch {
	case x.s <= math.Ln2:
		return fmt.Sprintf("t=%v", x.T())
	case x.s < 700:
		return fmt.Sprintf("1-t=%v", x.OneMinus())
	default:
		return fmt.Sprintf("s=%v", x.s)
	}
}
