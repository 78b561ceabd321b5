package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEMPurity checks the EM rows' purity against values worked by hand:
// six rows in classes a, a, b, b, c, c.
func TestEMPurity(t *testing.T) {
	labels := []string{"a1", "a2", "b3", "b4", "c5", "c6"}
	class, _, err := classes("synthetic", labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, tree    string
		purity, clade float64
	}{
		// Every class a clade.
		{"clades", "((a1:0.5,a2:0.5):0.3,(b3:0.5,b4:0.5):0.3,(c5:0.5,c6:0.5):0.3):0.2;", 1, 1},
		// A star: each pair's LCA holds 6 rows, 2 of its class.
		{"star", "(a1:0.8,a2:0.8,b3:0.8,b4:0.8,c5:0.8,c6:0.8):0.2;", 1.0 / 3, 0},
		// a a clade; b and c mixed below a branch point of 4 rows.
		{"mixed", "((a1:0.5,a2:0.5):0.3,((b3:0.3,c5:0.3):0.2,(b4:0.3,c6:0.3):0.2):0.3):0.2;", (1 + 0.5 + 0.5) / 3, 1.0 / 3},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "map.nwk"), []byte(tc.tree+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"bound": -12.5, "rounds": 7, "wall_time_seconds": 3}`), 0o644); err != nil {
			t.Fatal(err)
		}
		p, c, note, err := emPurity(dir, labels, class)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p-tc.purity) > 1e-12 || math.Abs(c-tc.clade) > 1e-12 {
			t.Errorf("%s: purity %v, clades %v; want %v, %v", tc.name, p, c, tc.purity, tc.clade)
		}
		if !strings.Contains(note, "bound -12.5, 7 rounds") {
			t.Errorf("%s: note %q", tc.name, note)
		}
	}
}
