package inference

import (
	"strings"
	"testing"
)

// TestTableNamesMapLogJoint checks that the table's last line gives
// map.nwk's log_joint under that name, and says nothing of it for a run
// that writes no map.nwk (Probit): it used to print "best log joint", which
// was neither the trace's largest log_joint nor, for Probit, any written
// tree's.
func TestTableNamesMapLogJoint(t *testing.T) {
	for _, tc := range []struct {
		written bool
		want    string
	}{
		{true, "; map.nwk log_joint -173.5\n"},
		{false, "in 1.0s\n"},
	} {
		res := &Result{Chains: 2, Iterations: 10, Completed: 10, Burn: 5, Thin: 1, WallTime: 1,
			MapLogJoint: -173.5, MapWritten: tc.written, Acceptance: map[string]float64{}}
		var b strings.Builder
		if err := res.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, tc.want) || strings.Contains(out, "best log joint") ||
			(!tc.written && strings.Contains(out, "map.nwk")) {
			t.Errorf("map written %v: table\n%s\nwant a line ending %q", tc.written, out, tc.want)
		}
	}
}
