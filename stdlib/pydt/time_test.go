package pydt

import (
	"math"
	"testing"
)

// TestSince checks Time.Since against elapsed times known exactly: dyadic
// t (or 1-t) whose differences float64 holds exactly, and the ends of the
// unit interval. Two leaves are 0 apart, not NaN (Inf - Inf).
func TestSince(t *testing.T) {
	cases := []struct {
		name       string
		later, ear Time
		want       float64
		ulps       float64 // allowed error in units of the last place
	}{
		{"origin to origin", Origin, Origin, 0, 0},
		{"leaf to leaf", Leaf, Leaf, 0, 0},
		{"origin to leaf", Leaf, Origin, 1, 0},
		{"same time beyond 1-t underflow", TimeFromS(800), TimeFromS(800), 0, 0},
		{"both beyond 1-t underflow", TimeFromS(801), TimeFromS(800), 0, 0},
		{"small t", TimeAt(0.25), TimeAt(0.125), 0.125, 4},
		{"close small t", TimeAt(0x1p-30 + 0x1p-52), TimeAt(0x1p-30), 0x1p-52, 4},
		{"near 1", TimeFromOneMinus(0x1p-20), TimeFromOneMinus(0x1p-10), 0x1p-10 - 0x1p-20, 4},
		{"backwards", TimeAt(0.125), TimeAt(0.25), -0.125, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.later.Since(c.ear)
			tol := c.ulps * math.Abs(c.want) * 0x1p-52
			if math.IsNaN(got) || !(math.Abs(got-c.want) <= tol) {
				t.Errorf("%v.Since(%v) = %v, want %v (± %v)", c.later, c.ear, got, c.want, tol)
			}
		})
	}
}
