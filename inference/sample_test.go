package inference

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSampleScoreRoundTrip samples from the prior, loads draw 2 of the
// data file of draws (Inputs.Draw) and scores tree 2 of trees.nwk with the
// values of params.csv (ScoreTreeFile): the tree's leaves are the rows,
// and the score is finite. The same seed gives the same files, and a run
// directory is refused.
func TestSampleScoreRoundTrip(t *testing.T) {
	model := filepath.Join("..", "examples", "gaussian-noise.pydt")
	l, err := Inputs{Model: File{Path: model}, Set: []string{"N=5,D=2"}}.Compile(true)
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.Model()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := Sample(m, 3, 7, out); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, name := range []string{SampleTreesFile, SampleParamsFile, "X.csv"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		first[name] = string(b)
	}
	if err := Sample(m, 3, 7, out); err != nil {
		t.Fatal(err)
	}
	for name, want := range first {
		if b, _ := os.ReadFile(filepath.Join(out, name)); string(b) != want {
			t.Errorf("%s differs between two samples of the same seed", name)
		}
	}
	params := strings.Split(strings.TrimSpace(first[SampleParamsFile]), "\n")
	names, vals := strings.Split(params[0], ","), strings.Split(params[2], ",")
	set := []string{}
	for i := 1; i < len(names); i++ {
		set = append(set, names[i]+"="+vals[i])
	}
	got, err := Inputs{Model: File{Path: model}, Data: map[string]File{"X": {Path: filepath.Join(out, "X.csv")}}, Draw: 2, Set: set}.Load()
	if err != nil {
		t.Fatal(err)
	}
	scores, err := got.ScoreTreeFile(filepath.Join(out, SampleTreesFile), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 1 || math.IsInf(scores[0].LogJoint, 0) || math.IsNaN(scores[0].LogJoint) {
		t.Errorf("scores of draw 2: %+v", scores)
	}
	if _, err := got.ScoreTreeFile(filepath.Join(out, SampleTreesFile), 4); err == nil || !strings.Contains(err.Error(), "but it has 3") {
		t.Errorf("tree 4 of 3: %v", err)
	}
	// Every tree of the file is checked, not only the one scored: tree 2
	// on 4 leaves of the 5 rows is an error naming it (it was skipped).
	mixed := filepath.Join(t.TempDir(), "mixed.nwk")
	tree1, _, _ := strings.Cut(first[SampleTreesFile], "\n")
	if err := os.WriteFile(mixed, []byte(tree1+"\n((1:0.5,2:0.5):0.3,(3:0.5,4:0.5):0.3):0.2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := got.ScoreTreeFile(mixed, 1); err == nil || !strings.Contains(err.Error(), "mixed.nwk tree 2: ") {
		t.Errorf("tree 1 of a file whose tree 2 has 4 of the 5 rows: %v", err)
	}
	if err := os.WriteFile(filepath.Join(out, RunFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Sample(m, 1, 7, out); err == nil || !strings.Contains(err.Error(), "holds a run") {
		t.Errorf("Sample into a run directory: %v", err)
	}
}
