package plot

import (
	"bytes"
	"strings"
	"testing"
)

// TestBoundPlotWallTime: with the wall times of the bound trace (the
// summary.json's bound_time_seconds, recorded but not drawn before),
// bound.svg has a second panel, the bound against wall time; without them
// (or of another length) it has the one against the round.
func TestBoundPlotWallTime(t *testing.T) {
	trace := []float64{-120, -110, -105, -104}
	for _, tc := range []struct {
		times []float64
		wall  bool
	}{
		{[]float64{0.5, 1.5, 2.5, 4}, true},
		{nil, false},
		{[]float64{1}, false},
	} {
		f, err := BoundPlot(trace, tc.times, "title", "lower bound", "best bound + Laplace correction")
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf, "svg"); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		if got := strings.Contains(svg, "wall time (s)"); got != tc.wall {
			t.Errorf("times %v: wall-time panel %v, want %v", tc.times, got, tc.wall)
		}
		if !strings.Contains(svg, "best bound + Laplace correction") {
			t.Errorf("times %v: the y axis does not name the value", tc.times)
		}
		if !strings.Contains(svg, "search round") {
			t.Errorf("times %v: no panel against the round", tc.times)
		}
	}
}
