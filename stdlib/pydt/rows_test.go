package pydt

import (
	"strings"
	"testing"
)

// TestMatchRows checks trees read against the rows of a data set: by label
// when the rows have labels, by row number when they have none.
func TestMatchRows(t *testing.T) {
	for _, c := range []struct {
		tree   string
		n      int
		labels []string
		want   string // error, or "" when the leaves are the rows
	}{
		{"((1:0.5,2:0.5):0.2,3:0.7):0.3;", 3, nil, ""},
		{"((3:0.5,1:0.5):0.2,2:0.7):0.3;", 3, nil, ""},
		{"((a:0.5,b:0.5):0.2,c:0.7):0.3;", 3, []string{"c", "b", "a"}, ""},
		{"((a:0.5,b:0.5):0.2,3:0.7):0.3;", 3, []string{"a", "b", ""}, ""},
		{"(1:0.5,2:0.5):0.5;", 3, nil, "has 2 leaves but the data X has 3 rows"},
		{"((1:0.5,2:0.5):0.2,3:0.7):0.3;", 2, nil, "has 3 leaves but the data X has 2 rows"},
		{"((1:0.5,2:0.5):0.2,x:0.7):0.3;", 3, nil, `has a leaf "x", but the data X has no row labels, so the leaves must be its row numbers 1..3, each once`},
		{"((1:0.5,2:0.5):0.2,4:0.7):0.3;", 3, nil, `has a leaf "4"`},
		{"((1:0.5,02:0.5):0.2,3:0.7):0.3;", 3, nil, `has a leaf "02"`},
	} {
		tr, err := ParseNewick(c.tree, c.labels)
		if err != nil {
			t.Fatalf("%s: %v", c.tree, err)
		}
		err = tr.MatchRows(c.n, c.labels, "the data X")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s with %d rows %q: %v", c.tree, c.n, c.labels, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s with %d rows %q: %v, want %q", c.tree, c.n, c.labels, err, c.want)
		}
	}
}
