package inference

import (
	"slices"
	"strings"
	"testing"
)

// TestRowNamesFromFile checks the rule cut --names and plot --names share
// for naming a run's rows from a file: a run without row names (none, or
// each row's number) takes them; the same names as the run's are accepted;
// a run that names its rows otherwise, or a file with another count of
// names, is an error naming the run's file.
func TestRowNamesFromFile(t *testing.T) {
	file := []string{"Ant", "Bee", "Cat"}
	for _, c := range []struct {
		name    string
		have    []string
		names   []string
		n       int
		wantErr string
	}{
		{"unnamed run", nil, file, 3, ""},
		{"rows named by their numbers", []string{"1", "2", "3"}, file, 3, ""},
		{"the run's own names", file, file, 3, ""},
		{"a named run", []string{"1", "x", "3"}, file, 3, `the run already names its rows (row 2 of mea.nwk is "x")`},
		{"too few names", nil, file[:2], 3, "2 row names for the 3 rows (leaves) of mea.nwk"},
		{"too many names", []string{"1", "2"}, file, 2, "3 row names for the 2 rows (leaves) of mea.nwk"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := RowNamesFromFile(c.have, c.names, c.n, "mea.nwk")
			if c.wantErr == "" {
				if err != nil || !slices.Equal(got, c.names) {
					t.Errorf("got %q, %v; want %q", got, err, c.names)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}
