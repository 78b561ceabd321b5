package dataset

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestLongWriterRoundTrip writes draws with LongWriter and reads them back
// with Read and Draw, the reader of the format, value for value.
func TestLongWriterRoundTrip(t *testing.T) {
	draws := [][]float64{
		{0.1, -2, 1e-300, 3},
		{math.Pi, 5e300, -0.5, 7},
		{0, 1, 2, 3},
	}
	var b bytes.Buffer
	lw, err := NewLongWriter(&b, "X", []int{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	for k, x := range draws {
		if err := lw.WriteDraw(k+1, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "draw,row,X.1,X.2\n1,1,0.1,-2\n1,2,1e-300,3\n2,1,") {
		t.Errorf("file:\n%s", b.String())
	}
	m, err := Read("draws.csv", &b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.IsLong() {
		t.Fatal("not read as a file of draws")
	}
	for k, want := range draws {
		d, err := m.SelectDraw(k + 1)
		if err != nil {
			t.Fatal(err)
		}
		if d.Rows != 2 || d.Cols != 2 || !slices.Equal(d.Data, want) {
			t.Errorf("draw %d read back as %d×%d %v, want %v", k+1, d.Rows, d.Cols, d.Data, want)
		}
	}
	if _, err := m.SelectDraw(0); err == nil || !strings.Contains(err.Error(), "holds 3 draws") {
		t.Errorf("SelectDraw(0) of 3 draws: %v", err)
	}
}

// TestLongWriterShapes checks the headers and lines of scalars and vectors,
// and that a draw of the wrong size is refused.
func TestLongWriterShapes(t *testing.T) {
	for _, c := range []struct {
		dims []int
		x    []float64
		want string
	}{
		{nil, []float64{2.5}, "draw,s\n4,2.5\n"},
		{[]int{3}, []float64{1, 2, 3}, "draw,row,s\n4,1,1\n4,2,2\n4,3,3\n"},
		{[]int{1, 3}, []float64{1, 2, 3}, "draw,row,s.1,s.2,s.3\n4,1,1,2,3\n"},
	} {
		var b bytes.Buffer
		lw, err := NewLongWriter(&b, "s", c.dims)
		if err != nil {
			t.Fatal(err)
		}
		if err := lw.WriteDraw(4, c.x); err != nil {
			t.Fatal(err)
		}
		lw.Flush()
		if b.String() != c.want {
			t.Errorf("dims %v: %q, want %q", c.dims, b.String(), c.want)
		}
		if err := lw.WriteDraw(5, append(c.x, 1)); err == nil {
			t.Errorf("dims %v: a draw of %d values accepted", c.dims, len(c.x)+1)
		}
	}
	if _, err := NewLongWriter(new(bytes.Buffer), "a", []int{1, 2, 3}); err == nil {
		t.Error("three dimensions accepted")
	}
}
