package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
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
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"method": "em", "bound": -12.5, "rounds": 7, "wall_time_seconds": 3}`), 0o644); err != nil {
			t.Fatal(err)
		}
		p, c, note, err := emPurity(dir, labels, class)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(p-tc.purity) <= 1e-12) || !(math.Abs(c-tc.clade) <= 1e-12) {
			t.Errorf("%s: purity %v, clades %v; want %v, %v", tc.name, p, c, tc.purity, tc.clade)
		}
		if !strings.Contains(note, "bound -12.5, 7 rounds") {
			t.Errorf("%s: note %q", tc.name, note)
		}
	}
}

// TestEMPurityBadSummary checks that an EM run whose summary.json cannot be
// read is an error, not a row with an empty note.
func TestEMPurityBadSummary(t *testing.T) {
	labels := []string{"a1", "a2", "b3", "b4"}
	class, _, err := classes("synthetic", labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, summary string }{
		{"truncated", `{"method": "em", "bound": -12.5,`},
		{"not EM", `{"method": "mcmc", "bound": -12.5}`},
		{"wrong type", `{"method": "em", "rounds": "seven"}`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "map.nwk"), []byte("((a1:0.5,a2:0.5):0.3,(b3:0.5,b4:0.5):0.3):0.2;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte(tc.summary), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, note, err := emPurity(dir, labels, class); err == nil || !strings.Contains(err.Error(), "summary.json") {
			t.Errorf("%s: note %q, error %v; want an error naming summary.json", tc.name, note, err)
		}
	}
}

// TestCladeFractionUndefined checks that the fraction of classes that are
// clades is an error, not NaN, when no class has two leaves.
func TestCladeFractionUndefined(t *testing.T) {
	labels := []string{"a1", "b2", "c3"}
	tr, err := pydt.ParseNewick("((a1:0.5,b2:0.5):0.3,c3:0.8):0.2;", labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		class []int
	}{
		{"singletons", []int{0, 1, 2}},
		{"unlabelled", []int{-1, -1, -1}},
		{"one labelled", []int{-1, 0, -1}},
		{"too few classes", []int{0, 0}},
	} {
		if f, err := cladeFraction(tr, tc.class); err == nil {
			t.Errorf("%s: %v, want an error", tc.name, f)
		}
	}
	if f, err := cladeFraction(tr, []int{0, 0, 1}); err != nil || f != 1 {
		t.Errorf("a1, b2 of one class (a clade), c3 alone: %v, %v; want 1", f, err)
	}
	if f, err := cladeFraction(tr, []int{0, 1, 0}); err != nil || f != 0 {
		t.Errorf("a1, c3 of one class (not a clade): %v, %v; want 0", f, err)
	}
}

// TestSharedDataWorktree checks that the shared data are found beside the
// main checkout when the study runs from a git worktree elsewhere, as
// engineers' worktrees are (/work/wt/NAME beside /work/main and
// /work/shared), and beside the checkout itself otherwise.
func TestSharedDataWorktree(t *testing.T) {
	t.Setenv("CLUSTERSTUDY_SHARED", "")
	top := t.TempDir()
	mk := func(rel, text string) {
		p := filepath.Join(top, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("main/go.mod", "module m\n")
	mk("main/.git/worktrees/h/commondir", "../..\n")
	mk("wt/h/go.mod", "module m\n")
	mk("wt/h/.git", "gitdir: "+filepath.Join(top, "main", ".git", "worktrees", "h")+"\n")
	mk("wt/h/internal/x/x.go", "package x\n")
	mk("shared/data/ccle/sensitivity.txt", "1\n")
	want := filepath.Join(top, "shared", "data")
	for _, dir := range []string{"main", "wt/h", "wt/h/internal/x"} {
		t.Chdir(filepath.Join(top, dir))
		got, err := sharedData()
		if err != nil || filepath.Clean(got) != want {
			t.Errorf("from %s: %q, %v; want %q", dir, got, err, want)
		}
	}
	// A checkout with no shared data beside it is a clear error.
	mk("other/lone/go.mod", "module m\n")
	t.Chdir(filepath.Join(top, "other", "lone"))
	if got, err := sharedData(); err == nil || !strings.Contains(err.Error(), "CLUSTERSTUDY_SHARED") {
		t.Errorf("no shared data: %q, %v; want an error naming CLUSTERSTUDY_SHARED", got, err)
	}
}

// TestOptionalTreePurity checks that a summary tree a run did not write
// (mea.nwk, consensus.nwk, map.nwk) is a dash in the table, and one that is
// there but cannot be read or scored is an error, not a dash.
func TestOptionalTreePurity(t *testing.T) {
	labels := []string{"a1", "a2", "b3", "b4"}
	class, _, err := classes("synthetic", labels)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if p, err := optionalTreePurity(filepath.Join(dir, "mea.nwk"), labels, class); err != nil || !math.IsNaN(p) {
		t.Errorf("absent file: %v, %v; want NaN and no error", p, err)
	}
	for _, tc := range []struct{ name, tree string }{
		{"malformed", "((a1:0.5,a2:0.5):0.3,(b3:0.5"},
		{"other leaves", "((a1:0.5,a2:0.5):0.3,(b3:0.5,x9:0.5):0.3):0.2;"},
		{"two trees", "((a1:0.5,a2:0.5):0.3,(b3:0.5,b4:0.5):0.3):0.2;\n((a1:0.5,a2:0.5):0.3,(b3:0.5,b4:0.5):0.3):0.2;"},
	} {
		path := filepath.Join(dir, tc.name+".nwk")
		if err := os.WriteFile(path, []byte(tc.tree+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if p, err := optionalTreePurity(path, labels, class); err == nil {
			t.Errorf("%s: %v, want an error", tc.name, p)
		}
	}
	path := filepath.Join(dir, "map.nwk")
	if err := os.WriteFile(path, []byte("((a1:0.5,a2:0.5):0.3,(b3:0.5,b4:0.5):0.3):0.2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := optionalTreePurity(path, labels, class); err != nil || p != 1 {
		t.Errorf("the two classes as the two clades: %v, %v; want purity 1", p, err)
	}
}

// TestPurityCommandClasses checks that `clusterstudy purity` takes the
// classes of animals.csv from the paper's groups (animalGroup), not from
// the labels' first letters (which made 4 animals 4 classes): the tree
// that splits the two birds from the two insects is pure.
func TestPurityCommandClasses(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "animals.csv")
	tree := filepath.Join(dir, "t.nwk")
	if err := os.WriteFile(data, []byte("name,f\nRobin,1\nEagle,1\nBee,0\nAnt,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tree, []byte("((Robin:0.5,Eagle:0.5):0.25,(Bee:0.5,Ant:0.5):0.25):0.25;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := purity(&sb, data, tree); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "2 classes: dendrogram purity 1.000") {
		t.Errorf("purity of animals.csv: %q, want 2 classes and purity 1", sb.String())
	}
}

// TestTreeCommands checks the trees that classtree and linkage write, read
// back by their labels: the class tree has every class of two or more rows
// as a flat clade under the root (the one-row class and the unlabelled row
// at the root), and the linkage tree is the table's (same clades as
// agglomerate on the rows, standardized with -z).
func TestTreeCommands(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "points.csv")
	// Classes by the labels' first letter: a (3 rows), b (2), c (1).
	csv := "name,x,y\na1,0,0\nb1,10,100\na2,0.1,0.5\nc1,5,-50\nb2,10.2,101\na3,0.3,-0.2\n"
	if err := os.WriteFile(data, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	labels := []string{"a1", "b1", "a2", "c1", "b2", "a3"}
	ct := filepath.Join(dir, "class.nwk")
	if err := writeClassTree(data, ct); err != nil {
		t.Fatal(err)
	}
	tr, err := readTree(ct, labels)
	if err != nil {
		t.Fatal(err)
	}
	got := clades(tr)
	slices.Sort(got)
	want := []string{key([]int{0, 1, 2, 3, 4, 5}), key([]int{0, 2, 5}), key([]int{1, 4})}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("class tree %s: clades %v, want %v", tr.Newick(), got, want)
	}
	m, err := dataset.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		l linkage
		z bool
	}{{average, false}, {average, true}, {complete, false}, {ward, true}} {
		out := filepath.Join(dir, "l.nwk")
		if err := writeLinkage(data, c.l, out, c.z); err != nil {
			t.Fatal(err)
		}
		tr, err := readTree(out, labels)
		if err != nil {
			t.Fatal(err)
		}
		mm := m
		if c.z {
			mm = standardize(m)
		}
		ref, err := agglomerate(rows(mm), c.l)
		if err != nil {
			t.Fatal(err)
		}
		g, w := clades(tr), clades(ref)
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("%s linkage (z %v): clades %v, want %v", c.l, c.z, g, w)
		}
	}
	if err := writeLinkage(data, "single", filepath.Join(dir, "x.nwk"), false); err == nil {
		t.Error("linkage single: no error")
	}
}
