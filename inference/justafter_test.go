package inference

import (
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// justAfter must give a strictly later time wherever one is representable:
// near t = 0.997 a step of 1-t left s = -log(1-t) unchanged, and a short
// run's summary tree failed with "no representable time between t =
// 0.9971695942463882 and its branch point's children".
func TestJustAfterIsLater(t *testing.T) {
	ts := []pydt.Time{
		pydt.TimeAt(0.9971695942463882),
		pydt.TimeAt(0.9999999999968929),
		pydt.TimeAt(0.9999995962498207),
		pydt.TimeAt(0), pydt.TimeAt(0.25), pydt.TimeAt(0.5),
		pydt.TimeFromOneMinus(1e-300), pydt.TimeFromLogOneMinus(-1000),
	}
	for x := 0.001; x < 1; x += 0.000937 {
		ts = append(ts, pydt.TimeAt(x))
	}
	for u := 1e-3; u > 1e-300; u /= 3.7 {
		ts = append(ts, pydt.TimeFromOneMinus(u))
	}
	for _, x := range ts {
		next, err := justAfter(x)
		if err != nil {
			t.Fatalf("justAfter(s = %v): %v", x.S(), err)
		}
		if !x.Before(next) || !next.Before(pydt.Leaf) {
			t.Fatalf("justAfter(s = %v) = s %v, not strictly between it and t = 1", x.S(), next.S())
		}
		// The step is small: at most a few spacings of s.
		if d := next.S() - x.S(); d > 64*math.Max(math.Nextafter(x.S(), math.Inf(1))-x.S(), 1e-300) {
			t.Fatalf("justAfter(s = %v) moved s by %v", x.S(), d)
		}
	}
}
