package inference

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestNewickFilesChecksTrees checks that NewickFiles, the source of the
// run summaries and of cut --posterior, refuses a tree whose leaves are
// not the data's rows, naming the file and the tree: it read the files
// with a bare ForEachNewick, so a tree of other rows was summarised (or
// cut) as if it were one of the run's. The trees are read and checked as
// Model.ForEachTree reads them (forEachCheckedTree), so the errors are
// worded alike ("t.nwk tree 2: has 2 leaves ...").
func TestNewickFilesChecksTrees(t *testing.T) {
	const good = "((1:0.5,2:0.5):0.3,3:0.8):0.2;\n"
	for _, tt := range []struct {
		name, text string
		labels     []string
		want       string // "" for no error
	}{
		{"row numbers", good + good, nil, ""},
		{"labels", "((a:0.5,b:0.5):0.3,c:0.8):0.2;\n", []string{"a", "b", "c"}, ""},
		{"too few leaves", good + "(1:0.5,2:0.5):0.5;\n", nil, "t.nwk tree 2: has 2 leaves but the data has 3 rows"},
		{"too many leaves", good + good + "((1:0.5,2:0.5):0.3,(3:0.5,4:0.5):0.3):0.2;\n", nil, "t.nwk tree 3: has 4 leaves but the data has 3 rows"},
		{"a name, rows unnamed", "((1:0.5,x:0.5):0.3,3:0.8):0.2;\n", nil, `t.nwk tree 1: has a leaf "x", but the data has no row labels`},
		{"a repeated row", "((1:0.5,1:0.5):0.3,3:0.8):0.2;\n", nil, "t.nwk: newick: line 1, offset 8: duplicate leaf label"},
		{"another data set's names", "((a:0.5,b:0.5):0.3,z:0.8):0.2;\n", []string{"a", "b", "c"}, `t.nwk: newick: line 1, offset 19: unknown leaf label "z"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.nwk")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			read := 0
			err := NewickFiles(3, tt.labels, path)(func(*pydt.Tree) error { read++; return nil })
			if tt.want == "" {
				if err != nil || read != strings.Count(tt.text, ";") {
					t.Fatalf("read %d trees, error %v", read, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
