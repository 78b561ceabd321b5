package treemove

import "testing"

// TestStatsAdd checks that Add sums every counter, field by field, against
// sums written out by hand.
func TestStatsAdd(t *testing.T) {
	a := Stats{Subtree: MoveStats{10, 3}, Time: MoveStats{20, 7}, Position: MoveStats{5, 1}, GaveUp: 2, NonFinite: 4}
	b := Stats{Subtree: MoveStats{1, 1}, Time: MoveStats{2, 0}, Position: MoveStats{30, 9}, GaveUp: 5, NonFinite: 6}
	for _, tc := range []struct {
		name       string
		start, add Stats
		want       Stats
	}{
		{"into zero", Stats{}, a, a},
		{"zero added", a, Stats{}, a},
		{"two counts", a, b, Stats{Subtree: MoveStats{11, 4}, Time: MoveStats{22, 7}, Position: MoveStats{35, 10}, GaveUp: 7, NonFinite: 10}},
	} {
		s := tc.start
		s.Add(tc.add)
		if s != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, s, tc.want)
		}
	}
}
