package dataset

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReadNoSilentMisreads holds the inputs that main read with a wrong
// shape or value (issue 13), and the layouts whose reading spec.md states.
func TestReadNoSilentMisreads(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name, src        string
		rows, cols       int
		labels, colNames []string
		data             []float64
	}{
		// A -nan cell was text, so column 1 became row labels.
		{name: "-nan is missing", src: "-nan,1\n2,3\n", rows: 2, cols: 2, data: []float64{nan, 1, 2, 3}},
		{name: "nan in any case and sign", src: "NAN,+nan\n-NaN,na\n", rows: 2, cols: 2, data: []float64{nan, nan, nan, nan}},
		// A byte order mark made the first data row a header.
		{name: "BOM, no header", src: "\xef\xbb\xbf1,2\n3,4\n", rows: 2, cols: 2, data: []float64{1, 2, 3, 4}},
		{name: "BOM, header", src: "\xef\xbb\xbfa,b\n1,2\n", rows: 1, cols: 2, colNames: []string{"a", "b"}, data: []float64{1, 2}},
		// A leading blank line made the separator white space.
		{name: "leading blank lines", src: "\n  \n1,2\n3,4\n", rows: 2, cols: 2, data: []float64{1, 2, 3, 4}},
		{name: "leading blank line, tabs", src: "\r\nx\ty\n1\t2\n", rows: 1, cols: 2, colNames: []string{"x", "y"}, data: []float64{1, 2}},
		{name: "decimal syntax", src: "+1,.5,1.,2E+3,-0\n", rows: 1, cols: 5, data: []float64{1, 0.5, 1, 2000, math.Copysign(0, -1)}},
		{name: "subnormal", src: "1e-320\n", rows: 1, cols: 1, data: []float64{1e-320}},
		{name: "zero with an exponent", src: "0e-999,0.000e5\n", rows: 1, cols: 2, data: []float64{0, 0}},
		// R's write.csv: an empty first name, labels that look like numbers.
		{name: "R write.csv", src: "\"\",\"x\",\"y\"\n\"1\",1,2\n\"2\",3,NA\n", rows: 2, cols: 2,
			labels: []string{"1", "2"}, colNames: []string{"x", "y"}, data: []float64{1, 2, 3, nan}},
		// R's write.table: one name fewer than the cells of the rows.
		{name: "R write.table", src: "x y\n1 1 2\n2 3 4\n", rows: 2, cols: 2,
			labels: []string{"1", "2"}, colNames: []string{"x", "y"}, data: []float64{1, 2, 3, 4}},
		{name: "labels by layout may mix", src: ",x\n1,1\ncat,2\n", rows: 2, cols: 1,
			labels: []string{"1", "cat"}, colNames: []string{"x"}, data: []float64{1, 2}},
		{name: "named all-missing column", src: "x,y\n1,\n2,\n", rows: 2, cols: 2, colNames: []string{"x", "y"}, data: []float64{1, nan, 2, nan}},
		{name: "one row with a label", src: "cat,1,2\n", rows: 1, cols: 2, labels: []string{"cat"}, data: []float64{1, 2}},
		{name: "CRLF", src: "a,b\r\n1,2\r\n", rows: 1, cols: 2, colNames: []string{"a", "b"}, data: []float64{1, 2}},
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
			if strings.Join(m.RowLabels, "|") != strings.Join(c.labels, "|") || (m.RowLabels == nil) != (c.labels == nil) {
				t.Errorf("labels %q, want %q", m.RowLabels, c.labels)
			}
			if strings.Join(m.ColNames, "|") != strings.Join(c.colNames, "|") || (m.ColNames == nil) != (c.colNames == nil) {
				t.Errorf("column names %q, want %q", m.ColNames, c.colNames)
			}
			for i, want := range c.data {
				if got := m.Data[i]; math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && (got != want || math.Signbit(got) != math.Signbit(want))) {
					t.Errorf("value %d = %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestReadRefuses holds inputs that main accepted with a wrong shape or
// value, now errors that name the file, line, row and column.
func TestReadRefuses(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"NUL byte", "1,2\n3,\x004\n", "in.csv: line 2: a NUL byte: this is not a text file"},
		{"UTF-16", "\xff\xfe1\x00,\x002\x00", "in.csv: line 1: a NUL byte"},
		{"CR-only lines", "1 2\r3 4\r", "in.csv: line 1: a carriage return (CR) not followed by a line feed"},
		{"trailing comma", "1,2,\n3,4,\n", "in.csv: line 1, column 3: column 3 is empty in every row and has no name: is there a trailing comma at the end of each line?"},
		{"trailing comma, header", "x,y,\n1,2,\n3,4,\n", "in.csv: line 1, column 3: column 3 is empty in every row and has no name"},
		{"trailing tab", "1\t2\t\n3\t4\t\n", "in.csv: line 1, column 3: column 3 is empty in every row and has no name: is there a trailing tab"},
		{"digit separator", "1,1_000\n", `in.csv: row 1, column 2 (line 1): "1_000" is not a number: digit separators (_) are not allowed`},
		{"digit separator in column 1", "1_000,1\n2,3\n", `in.csv: row 1, column 1 (line 1): "1_000" is not a number: digit separators`},
		{"hexadecimal", "1,0x1p-2\n", `in.csv: row 1, column 2 (line 1): "0x1p-2" is not a number: hexadecimal is not allowed`},
		{"overflow", "1,1e400\n", `in.csv: row 1, column 2 (line 1): "1e400" is out of range: its magnitude exceeds the largest double`},
		{"underflow", "1\n-1e-400\n", `in.csv: row 2, column 1 (line 2): "-1e-400" is out of range: it is not 0 but its magnitude is below the smallest positive double`},
		{"infinite", "1,-Infinity\n", `in.csv: row 1, column 2 (line 1): "-Infinity" is infinite; values must be finite`},
		// One odd cell in column 1 no longer makes it row labels.
		{"one text cell in column 1", "1,2\ncat,3\n4,5\n", `in.csv: row 1, column 1 (line 1): "1" is not a row label, but the first column holds row labels (row 2 is "cat")`},
		{"number among labels", "name,x\ncat,1\n2,2\n", `in.csv: row 2, column 1 (line 3): "2" is not a row label, but the first column holds row labels (row 1 is "cat")`},
		// One odd cell in row 1 no longer makes it a header.
		{"one text cell in row 1", "1,x,3\n4,5,6\n", `in.csv: line 1, column 1: row 1 is a header: column 2 is the name "x", but column 1 is the number "1"`},
		{"text then number in row 1", "cat,1\n2,3\n", `in.csv: line 1, column 1: row 1 has the text "cat" in column 1 but the number "1" in column 2, and no row below has text in column 1: if the first column holds row labels, every row needs one`},
		{"a -nan label", "cat,1\n-nan,2\n", `in.csv: line 1, column 1: row 1 has the text "cat" in column 1 but the number "1" in column 2`},
		{"text in column 1 and 2 of row 1", "x,y,3\n1,2,3\n", `in.csv: line 1, column 3: row 1 is a header: column 1 is the name "x", but column 3 is the number "3"`},
		{"header with a label column", "name,x,2\ncat,1,2\n", `in.csv: line 1, column 3: row 1 is a header (the first column holds row labels): column 2 is the name "x", but column 3 is the number "2"`},
		{"labels only", "cat\ndog\n", "in.csv: line 1: no values: the only column holds text, read as row labels"},
		{"blank file", "\n \n", "in.csv: line 1: no data rows"},
		{"ragged first row", "1,2\n3\n4\n", "in.csv: row 2, column 1 (line 2): ragged row: 1 values, but earlier rows have 2"},
		{"semicolons after a blank line", "\na;b\n1;2\n", "in.csv: line 2: separator ';' is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Read("in.csv", strings.NewReader(c.src))
			if err == nil {
				t.Fatalf("no error (%dx%d, labels %q, names %q), want %q", m.Rows, m.Cols, m.RowLabels, m.ColNames, c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want prefix %q", err, c.want)
			}
		})
	}
}

func TestReadTooManyValues(t *testing.T) {
	defer func(n int) { maxValues = n }(maxValues)
	maxValues = 6
	if _, err := Read("in.csv", strings.NewReader("1,2\n3,4\n5,6\n")); err != nil {
		t.Fatalf("6 values: %v", err)
	}
	_, err := Read("in.csv", strings.NewReader("1,2\n3,4\n5,6\n7,8\n"))
	if err == nil || err.Error() != "in.csv: line 4: more than 6 cells, the most pydtlang reads from one data file" {
		t.Fatalf("error %v", err)
	}
}

// TestReadFileDevZero: main read /dev/zero until memory ran out.
func TestReadFileDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile("/dev/zero")
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero: line 1: a NUL byte") {
		t.Fatalf("error %v", err)
	}
}

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		err  string
	}{
		{"2", 2, ""}, {" -0.5 ", -0.5, ""}, {".5", 0.5, ""}, {"1.", 1, ""}, {"1e-3", 1e-3, ""}, {"+2.5E+4", 2.5e4, ""},
		{"4.9e-324", 5e-324, ""}, {"0e-400", 0, ""}, {"1.7976931348623157e308", math.MaxFloat64, ""},
		{"1_0", 0, `"1_0" is not a number: digit separators (_) are not allowed`},
		{"0x10", 0, `"0x10" is not a number: hexadecimal is not allowed`},
		{"-0X1p-2", 0, `"-0X1p-2" is not a number: hexadecimal is not allowed`},
		{"1e-400", 0, `"1e-400" is out of range: it is not 0 but its magnitude is below the smallest positive double, about 4.9e-324, so it would read as 0`},
		{"1e400", 0, `"1e400" is out of range: its magnitude exceeds the largest double, about 1.8e308`},
		{"inf", 0, `"inf" is infinite; values must be finite`},
		{"nan", 0, `"nan" is not a number`},
		{"", 0, `"" is not a number`},
		{"1e", 0, `"1e" is not a number`}, {".", 0, `"." is not a number`}, {"+", 0, `"+" is not a number`},
		{"1 2", 0, `"1 2" is not a number`}, {"--1", 0, `"--1" is not a number`}, {"1e+-2", 0, `"1e+-2" is not a number`},
	}
	for _, c := range cases {
		x, err := ParseNumber(c.in)
		switch {
		case c.err == "" && (err != nil || x != c.want):
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", c.in, x, err, c.want)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("ParseNumber(%q) error %v; want %q", c.in, err, c.err)
		}
	}
}

// FuzzParseNumber checks ParseNumber against strconv.ParseFloat: whatever
// it accepts, ParseFloat reads as the same finite value, and the two agree
// on every plain decimal string.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1", "-0.5", "1_000", "0x1p-2", "1e-400", "1e400", "inf", "-nan", ".5", "1.", "+1e+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseNumber(s)
		if err != nil {
			if _, ok := err.(*NumberError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		y, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if perr != nil || x != y || math.IsInf(x, 0) || math.IsNaN(x) {
			t.Fatalf("ParseNumber(%q) = %v but ParseFloat gives %v, %v", s, x, y, perr)
		}
	})
}

// writeBack writes m as a CSV file that Read must read back as m: a header
// (an empty first name when there are labels), then the rows.
func writeBack(m *Matrix) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	var header []string
	if m.RowLabels != nil {
		header = append(header, "")
	}
	for j := 0; j < m.Cols; j++ {
		if m.ColNames != nil {
			header = append(header, m.ColNames[j])
		} else {
			header = append(header, "c"+strconv.Itoa(j+1))
		}
	}
	w.Write(header)
	for i := 0; i < m.Rows; i++ {
		var rec []string
		if m.RowLabels != nil {
			rec = append(rec, m.RowLabels[i])
		}
		for j := 0; j < m.Cols; j++ {
			if x := m.At(i, j); math.IsNaN(x) {
				rec = append(rec, "NA")
			} else {
				rec = append(rec, strconv.FormatFloat(x, 'g', -1, 64))
			}
		}
		w.Write(rec)
	}
	w.Flush()
	return b.Bytes()
}
