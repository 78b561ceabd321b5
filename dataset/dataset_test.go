package dataset

import (
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

func TestWhere(t *testing.T) {
	m, err := Read("d.csv", strings.NewReader("name,x,y\ncat,1,2\ndog,3,4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Where(1, 1), "d.csv: row 2, column 3 (line 3)"; got != want {
		t.Errorf("Where = %q, want %q", got, want)
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "name,x\na,1\n", "1 2\n3 4", "a\tb\n1\t2\n", "\"", ",,,\n"} {
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
		if len(m.Data) != m.Rows*m.Cols {
			t.Fatalf("%d values for %dx%d", len(m.Data), m.Rows, m.Cols)
		}
		if m.RowLabels != nil && len(m.RowLabels) != m.Rows {
			t.Fatalf("%d labels for %d rows", len(m.RowLabels), m.Rows)
		}
	})
}
