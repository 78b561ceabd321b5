package dataset

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	cases := []struct {
		name, src        string
		rows, cols       int
		labels, colNames []string
		data             []float64 // NaN compared as missing
	}{
		{name: "plain csv", src: "1,2\n3,4\n", rows: 2, cols: 2, data: []float64{1, 2, 3, 4}},
		{name: "header", src: "a,b\n1,2\n", rows: 1, cols: 2, colNames: []string{"a", "b"}, data: []float64{1, 2}},
		{name: "labels and header", src: "name,x,y\ncat,1,NA\ndog,,4\n", rows: 2, cols: 2,
			labels: []string{"cat", "dog"}, colNames: []string{"x", "y"}, data: []float64{1, math.NaN(), math.NaN(), 4}},
		{name: "labels no header", src: "cat,1\ndog,2\n", rows: 2, cols: 1, labels: []string{"cat", "dog"}, data: []float64{1, 2}},
		{name: "whitespace", src: "  1.5e-1   2\n\n3 4\n", rows: 2, cols: 2, data: []float64{0.15, 2, 3, 4}},
		{name: "tabs, empty cells", src: "x\ty\tz\n1\t\t3\n\t5\t\n", rows: 2, cols: 3, colNames: []string{"x", "y", "z"},
			data: []float64{1, math.NaN(), 3, math.NaN(), 5, math.NaN()}},
		{name: "tabs, spaces around", src: " x \t y\n 1 \t 2 \n", rows: 1, cols: 2, colNames: []string{"x", "y"}, data: []float64{1, 2}},
		{name: "tabs", src: "x\ty\n1\t2\n", rows: 1, cols: 2, colNames: []string{"x", "y"}, data: []float64{1, 2}},
		{name: "quoted label", src: "\"a, b\",1\nc,2\n", rows: 2, cols: 1, labels: []string{"a, b", "c"}, data: []float64{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read("in.csv", strings.NewReader(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != c.rows || m.Cols != c.cols {
				t.Fatalf("shape %dx%d, want %dx%d", m.Rows, m.Cols, c.rows, c.cols)
			}
			if strings.Join(m.RowLabels, "|") != strings.Join(c.labels, "|") {
				t.Errorf("labels %q, want %q", m.RowLabels, c.labels)
			}
			if strings.Join(m.ColNames, "|") != strings.Join(c.colNames, "|") {
				t.Errorf("column names %q, want %q", m.ColNames, c.colNames)
			}
			for i, want := range c.data {
				got := m.Data[i]
				if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && got != want) {
					t.Errorf("value %d = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"ragged", "1,2\n3\n", "in.csv: row 2, column 1 (line 2): ragged row: 1 values, but earlier rows have 2"},
		{"not a number", "a,b\n1,2\n3,x\n", `in.csv: row 2, column 2 (line 3): "x" is not a number`},
		{"infinite", "1,Inf\n", `in.csv: row 1, column 2 (line 1): "Inf" is infinite; values must be finite`},
		{"label column counts", "name,x\ncat,1\ndog,?\n", `in.csv: row 2, column 2 (line 3): "?" is not a number`},
		{"empty", "", "in.csv: line 1: no data rows"},
		{"header only", "a,b\n", "in.csv: line 1: a header but no data rows"},
		{"bad quote", "\"a,1\n", "in.csv: line 1: "},
		{"duplicate label", "name,x\ncat,1\ndog,2\ncat,3\n", `in.csv: row 3, column 1 (line 4): duplicate row label "cat" (also row 1)`},
		{"duplicate label after trimming", "cat,1\n cat ,2\n", `in.csv: row 2, column 1 (line 2): duplicate row label "cat" (also row 1)`},
		{"empty label", "name,x\ncat,1\n,2\n", "in.csv: row 2, column 1 (line 3): empty row label"},
		{"blank label", "name\tx\ncat\t1\n \t2\n", "in.csv: row 2, column 1 (line 3): empty row label"},
		{"semicolons", "a;b\n1;2\n", "in.csv: line 1: separator ';' is not supported: use commas, tabs or spaces"},
		{"semicolons crlf", "1;2\r\n3;4\r\n", "in.csv: line 1: separator ';' is not supported: use commas, tabs or spaces"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read("in.csv", strings.NewReader(c.src))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want prefix %q", err, c.want)
			}
		})
	}
}

// TestReadSemicolonInCells checks that a semicolon is only refused as the
// separator: inside a quoted comma-separated label it is text.
func TestReadSemicolonInCells(t *testing.T) {
	m, err := Read("in.csv", strings.NewReader("\"a;b\",1\nc,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.RowLabels[0] != "a;b" {
		t.Errorf("labels %q", m.RowLabels)
	}
}

func TestWhere(t *testing.T) {
	m, err := Read("d.csv", strings.NewReader("name,x,y\ncat,1,2\ndog,3,4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Where(1, 1), "d.csv: row 2, column 3 (line 3)"; got != want {
		t.Errorf("Where = %q, want %q", got, want)
	}
}

// FuzzRead feeds arbitrary text to Read, seeded with the cases of the
// tests (among them every input that issue 13 found misread). Whatever Read
// accepts must have a consistent shape, distinct non-empty labels, no
// infinite values, and read back the same after writing it out as CSV.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "name,x\na,1\n", "1 2\n3 4", "a\tb\n1\t2\n", "\"", ",,,\n", draws,
		"-nan,1\n2,3\n", "1,2\n3,\x004\n", "\xef\xbb\xbf1,2\n3,4\n", "\xef\xbb\xbfa,b\n1,2\n", "1,2,\n3,4,\n", "x,y,\n1,2,\n",
		"\n1,2\n3,4\n", "1,1_000\n", "1,0x1p-2\n", "1,1e-400\n", "1,1e400\n", "1 2\r3 4\r", "1,2\ncat,3\n4,5\n",
		"1,x,3\n4,5,6\n", "cat,1\n2,3\n", "\"\",x\n1,1\n2,2\n", "x y\n1 1 2\n2 3 4\n", ",x\n1,1\ncat,2\n", "cat\ndog\n",
		"NAN,+nan\n-NaN,na\n", "name,x\ncat,1\nNA,2\n", "\"a\nb\",1\nc,2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, err := Read("f.csv", strings.NewReader(src))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(m.Data) != m.Rows*m.Cols || m.Rows < 1 || m.Cols < 1 {
			t.Fatalf("%d values for %dx%d", len(m.Data), m.Rows, m.Cols)
		}
		if m.RowLabels != nil && len(m.RowLabels) != m.Rows {
			t.Fatalf("%d labels for %d rows", len(m.RowLabels), m.Rows)
		}
		if m.ColNames != nil && len(m.ColNames) != m.Cols {
			t.Fatalf("%d names for %d columns", len(m.ColNames), m.Cols)
		}
		seen := map[string]bool{}
		for _, l := range m.RowLabels {
			if l == "" || seen[l] {
				t.Fatalf("empty or repeated label %q", l)
			}
			seen[l] = true
		}
		for _, x := range m.Data {
			if math.IsInf(x, 0) {
				t.Fatalf("infinite value")
			}
		}
		back, err := Read("back.csv", bytes.NewReader(writeBack(m)))
		if err != nil {
			t.Fatalf("%q reads as %dx%d but its CSV %q does not read back: %v", src, m.Rows, m.Cols, writeBack(m), err)
		}
		if back.Rows != m.Rows || back.Cols != m.Cols || strings.Join(back.RowLabels, "\x00") != strings.Join(m.RowLabels, "\x00") {
			t.Fatalf("%q reads as %dx%d (labels %q), but back as %dx%d (labels %q)", src, m.Rows, m.Cols, m.RowLabels, back.Rows, back.Cols, back.RowLabels)
		}
		for i := range m.Data {
			if x, y := m.Data[i], back.Data[i]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("%q: value %d is %v but reads back as %v", src, i, x, y)
			}
		}
		if !m.IsLong() {
			return
		}
		ks, err := m.Draws()
		if err != nil {
			return
		}
		total := 0
		for _, k := range ks {
			d, err := m.Draw(k)
			if err != nil {
				return
			}
			if len(d.Data) != d.Rows*d.Cols || d.Cols != m.Cols-2 || d.RowLabels != nil {
				t.Fatalf("draw %d: %d values for %dx%d", k, len(d.Data), d.Rows, d.Cols)
			}
			total += d.Rows
		}
		if total != m.Rows {
			t.Fatalf("draws hold %d rows of %d", total, m.Rows)
		}
	})
}

// draws is a long-format file as written by "pydtlang sample": three draws
// of two rows and two columns.
const draws = "draw,row,X.1,X.2\n" +
	"1,1,0.1,0.2\n1,2,0.3,0.4\n" +
	"2,1,1.1,NA\n2,2,1.3,1.4\n" +
	"3,1,2.1,2.2\n3,2,2.3,2.4\n"

func TestIsLong(t *testing.T) {
	cases := []struct {
		src  string
		want bool
	}{
		{draws, true},
		{"draw,row,X\n1,1,0.5\n1,2,0.7\n", true},
		{"draw row X.1\n1 1 0.5\n", true},
		{"draw,row\n1,1\n", false}, // no values
		{"row,draw,X\n1,1,0.5\n", false},
		{"Draw,row,X\n1,1,0.5\n", false},
		{"draw,X,Y\n1,1,0.5\n", false},
		{"1,1,0.5\n", false},                        // no header
		{"draw,row,X\ncat,1,0.5\ndog,2,3\n", false}, // a label column
	}
	for _, c := range cases {
		m, err := Read("in.csv", strings.NewReader(c.src))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if got := m.IsLong(); got != c.want {
			t.Errorf("IsLong(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

func TestDraw(t *testing.T) {
	m, err := Read("d.csv", strings.NewReader(draws))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := m.Draws()
	if err != nil || len(ks) != 3 || ks[0] != 1 || ks[2] != 3 {
		t.Fatalf("Draws = %v, %v", ks, err)
	}
	cases := []struct {
		k     int
		data  []float64
		where string // Where(1, 1): second row, second value
	}{
		{1, []float64{0.1, 0.2, 0.3, 0.4}, "d.csv: row 2, column 4 (line 3)"},
		{2, []float64{1.1, math.NaN(), 1.3, 1.4}, "d.csv: row 4, column 4 (line 5)"},
		{3, []float64{2.1, 2.2, 2.3, 2.4}, "d.csv: row 6, column 4 (line 7)"},
	}
	for _, c := range cases {
		d, err := m.Draw(c.k)
		if err != nil {
			t.Fatalf("Draw(%d): %v", c.k, err)
		}
		if d.Rows != 2 || d.Cols != 2 || d.RowLabels != nil || strings.Join(d.ColNames, ",") != "X.1,X.2" || d.Source != "d.csv" {
			t.Errorf("Draw(%d): %dx%d, labels %q, names %q, source %q", c.k, d.Rows, d.Cols, d.RowLabels, d.ColNames, d.Source)
		}
		for i, want := range c.data {
			if got := d.Data[i]; math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && got != want) {
				t.Errorf("Draw(%d) value %d = %v, want %v", c.k, i, got, want)
			}
		}
		if got := d.Where(1, 1); got != c.where {
			t.Errorf("Draw(%d).Where(1, 1) = %q, want %q", c.k, got, c.where)
		}
		if d.IsLong() {
			t.Errorf("Draw(%d) is still in long format", c.k)
		}
	}
}

func TestDrawErrors(t *testing.T) {
	cases := []struct {
		name, src string
		k         int
		want      string
	}{
		{"no such draw", draws, 4, "d.csv has no draw 4 (its draws are 1..3)"},
		{"no such draw, gaps", "draw,row,X\n1,1,0\n5,1,0\n", 2, "d.csv has no draw 2 (its draws are 1, 5)"},
		{"not long", "a,b,c\n1,1,0\n", 1, "d.csv: not a file of draws"},
		{"missing draw", "draw,row,X\n1,1,0\n,2,0\n", 1, "d.csv: row 2, column 1 (line 3): the draw number is missing"},
		{"fractional draw", "draw,row,X\n1.5,1,0\n", 1, "d.csv: row 1, column 1 (line 2): draw number 1.5 is not a whole number"},
		{"rows out of order", "draw,row,X\n1,2,0\n1,1,0\n", 1, "d.csv: row 1, column 2 (line 2): row 1 of draw 1 is numbered 2"},
		{"row skipped", "draw,row,X\n1,1,0\n1,3,0\n", 1, "d.csv: row 2, column 2 (line 3): row 2 of draw 1 is numbered 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read("d.csv", strings.NewReader(c.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Draw(c.k)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("Draw(%d) error %v, want prefix %q", c.k, err, c.want)
			}
		})
	}
}
