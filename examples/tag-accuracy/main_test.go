package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadStates reads the states of a states-z.csv and of a
// draws-z-1.csv's last row, and refuses malformed files.
func TestReadStates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, text string
		trace      bool
		want       []int
		err        string
	}{
		{"states.csv", "t,state,prob\n1,3,0.5\n2,1,1\n3,2,0.7\n", false, []int{2, 0, 1}, ""},
		{"gap.csv", "t,state,prob\n1,3,0.5\n3,1,1\n", false, nil, "want t = 2"},
		{"header.csv", "x,y\n1,2\n", false, nil, "header"},
		{"short.csv", "t,state,prob\n1,3,0.5\n2\n", false, nil, "want t,state,prob"},
		{"draws-z-1.csv", "iteration,states\n1,2 1 3\n2,1 2 2\n", true, []int{0, 1, 1}, ""},
		{"badz.csv", "iteration,states\n1,2 0\n", true, nil, "z[2] = \"0\" is not a state"},
		{"trace.csv", "chain,iteration,alpha,z[1]\n1,1,0.5,2\n", true, nil, "want iteration,states"},
		{"empty.csv", "iteration,states\n", true, nil, "no draws"},
	}
	for _, c := range cases {
		p := write(c.name, c.text)
		var got []int
		var err error
		if c.trace {
			got, err = readTrace(p)
		} else {
			got, err = readStates(p)
		}
		switch {
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestTraceRefusesAlignedTree: the raw states of --trace do not label the
// leaves of summary.nwk, whose states are aligned: asking for both is an
// error, before any file is read.
func TestTraceRefusesAlignedTree(t *testing.T) {
	err := score(os.Stdout, t.TempDir(), t.TempDir(), true, 0, "summary.nwk")
	if err == nil || !strings.Contains(err.Error(), "aligned states") {
		t.Errorf("got %v, want an error about the tree's aligned states", err)
	}
}

// TestReadStateTree checks the number of states taken from the tree: when
// a state is never the modal state of a token, the largest state read is
// fewer than the tree's leaves, and without --states the tree's leaves are
// the states (it was an error, "want leaves named 1..K", that did not say
// why or what to do); a mismatch otherwise names both counts and the fix.
func TestReadStateTree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.nwk")
	if err := os.WriteFile(path, []byte("((1:0.5,2:0.5):0.3,(3:0.4,4:0.4):0.4):0.2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		K     int
		fixed bool
		want  int
		err   string
	}{
		{"state 4 never modal", 3, false, 4, ""},
		{"all states modal", 4, false, 4, ""},
		{"--states 4", 4, true, 4, ""},
		{"--states 3", 3, true, 0, "summary.nwk has 4 leaves, one per state, but K = 3 (--states, or a larger state read): pass --states 4"},
		{"more states than leaves", 6, false, 0, "summary.nwk has 4 leaves, one per state, but the states read go up to 6"},
	} {
		tr, K, err := readStateTree(path, "summary.nwk", c.K, c.fixed)
		switch {
		case c.err == "" && (err != nil || K != c.want || tr.NumLeaves() != 4):
			t.Errorf("%s: K = %d, error %v; want K = %d", c.name, K, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestReadStateTreeBounded checks that the tree file is read bounded: one
// larger than maxTreeBytes is an error naming it and the limit (it was
// read whole with os.ReadFile, whatever its size), and a file holding a
// NUL byte is refused.
func TestReadStateTreeBounded(t *testing.T) {
	old := maxTreeBytes
	maxTreeBytes = 64
	t.Cleanup(func() { maxTreeBytes = old })
	dir := t.TempDir()
	tree := "((1:0.5,2:0.5):0.3,(3:0.4,4:0.4):0.4):0.2;\n" // 43 bytes
	for _, c := range []struct {
		name, text, err string
	}{
		{"within the bound", tree, ""},
		{"at the bound", tree + strings.Repeat(" ", 21), ""},
		{"over the bound", tree + strings.Repeat(" ", 22), "big.nwk: larger than 64 bytes, the largest tree file over the states"},
		{"a NUL byte", "((1:0.5,2:0.5):0.3,\x00(3:0.4,4:0.4):0.4):0.2;\n", "big.nwk: line 1"},
	} {
		path := filepath.Join(dir, "big.nwk")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, K, err := readStateTree(path, "big.nwk", 4, false)
		switch {
		case c.err == "" && (err != nil || K != 4):
			t.Errorf("%s: K = %d, error %v", c.name, K, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestReadStatesBounded checks that states-z.csv is read bounded: one
// larger than maxStatesBytes is an error naming it and the limit (it was
// read whole by csv.ReadAll, whatever its size), and a NUL byte is refused.
func TestReadStatesBounded(t *testing.T) {
	old := maxStatesBytes
	maxStatesBytes = 64
	t.Cleanup(func() { maxStatesBytes = old })
	states := "t,state,prob\n1,3,0.5\n2,1,1\n3,2,0.7\n" // 38 bytes
	path := filepath.Join(t.TempDir(), "states-z.csv")
	for _, c := range []struct {
		name, text, err string
	}{
		{"within the bound", states, ""},
		{"at the bound", states + strings.Repeat("\n", 29), ""},
		{"over the bound", states + strings.Repeat("\n", 30), "states-z.csv: larger than 64 bytes, the largest states file"},
		{"a NUL byte", "t,state,prob\n1,3,0.5\n2,\x001,1\n", "states-z.csv: line 3"},
	} {
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		z, err := readStates(path)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(z, []int{2, 0, 1})):
			t.Errorf("%s: states %v, error %v", c.name, z, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestReadTraceBounded checks that draws-z-1.csv is read a bounded line at
// a time: a line longer than maxTraceLineBytes is an error naming it and
// the limit (readTrace held a whole line, of any length), while lines up
// to the limit, longer than the reader's 64 KiB buffer, are read.
func TestReadTraceBounded(t *testing.T) {
	long := strings.Repeat("2 ", 99990) + "1\n" // 2·99990 + 2 bytes, 3 buffers
	old := maxTraceLineBytes
	maxTraceLineBytes = len("2," + long) // "2," + long at the bound, "22," + long over
	t.Cleanup(func() { maxTraceLineBytes = old })
	path := filepath.Join(t.TempDir(), "draws-z-1.csv")
	want := make([]int, 99991)
	for i := range want {
		want[i] = 1
	}
	want[len(want)-1] = 0
	for _, c := range []struct {
		name, text, err string
		want            []int
	}{
		{"long last draw, at the bound", "iteration,states\n1,1 1\n2," + long, "", want},
		{"long first draw", "iteration,states\n1," + long + "2,1 2\n", "", []int{0, 1}},
		{"over the bound", "iteration,states\n1,1 1\n22," + long, "draws-z-1.csv: line 3 is longer than", nil},
		{"header over the bound", strings.Repeat("x", len(long)+2) + "\n1,1\n", "draws-z-1.csv: line 1 is longer than", nil},
	} {
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		z, err := readTrace(path)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(z, c.want)):
			t.Errorf("%s: %d states, error %v", c.name, len(z), err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}
