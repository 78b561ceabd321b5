package pydt

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseNewick feeds arbitrary text to ParseNewick, seeded with every
// .nwk file under testdata/newick (well-formed and malformed cases, and any
// regression inputs found by earlier fuzzing). It asserts that parsing never
// panics, that errors wrap ErrNewick with an offset inside the input, and
// that every tree it accepts is valid and survives writing and reading back.
func FuzzParseNewick(f *testing.F) {
	for _, pattern := range []string{"*.nwk", "*/*.nwk"} {
		files, err := filepath.Glob(filepath.Join("testdata", "newick", pattern))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b), false)
			f.Add(string(b), true)
		}
	}
	f.Fuzz(func(t *testing.T, s string, withLabels bool) {
		var labels []string
		if withLabels {
			labels = []string{"a", "b", "c"}
		}
		tr, err := ParseNewick(s, labels)
		if err != nil {
			checkNewickError(t, s, err)
			if tr != nil {
				t.Fatalf("tree returned with error %v", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("accepted %q but the tree is invalid: %v", s, err)
		}
		out := tr.Newick()
		back, err := ParseNewick(out, tr.Labels)
		if err != nil {
			t.Fatalf("accepted %q but its output %q does not read back: %v", s, out, err)
		}
		sameTree(t, tr, back, 1e-12)
	})
}
