// Package dataset reads the numeric tables that a model's data variables
// are bound to: CSV (or tab- or space-separated) files with an optional
// header row and an optional first column of row labels.
//
// Empty cells and NA are missing values (NaN). Every error names the file,
// the row and the column, 1-based, so that a researcher can find the cell.
//
// A file whose header starts with draw,row is in the long format that
// "pydtlang sample" writes, one block of rows per draw; IsLong recognises
// it and Draw selects one draw as an ordinary matrix.
package dataset

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Matrix is a table of numbers read from a file.
type Matrix struct {
	Rows, Cols int
	// Data holds the values row-major; missing values are NaN.
	Data []float64
	// RowLabels names the rows when the file has a label column; else nil.
	RowLabels []string
	// ColNames names the columns when the file has a header; else nil.
	ColNames []string
	// Source is the file name used in messages.
	Source string

	lines    []int // file line of each data row
	rowNums  []int // 1-based data row in the file of each row; nil means i+1
	colShift int   // file columns before the values: 1 for a label column
}

// At returns the value at row i, column j (0-based).
func (m *Matrix) At(i, j int) float64 { return m.Data[i*m.Cols+j] }

// Where describes the cell at row i, column j (0-based) for messages:
// "file: row 3, column 7 (line 4)", with 1-based numbers counted in the
// file, so the label column counts as column 1.
func (m *Matrix) Where(i, j int) string {
	return fmt.Sprintf("%s: row %d, column %d (line %d)", m.Source, m.rowNum(i), j+1+m.colShift, m.line(i))
}

// CellError is an error about one cell of a data file.
type CellError struct {
	Source   string
	Line     int // 1-based line in the file
	Row, Col int // 1-based data row (0 for the header or the whole file) and file column (0 for none)
	Msg      string
}

func (e *CellError) Error() string {
	if e.Row == 0 && e.Col > 0 {
		return fmt.Sprintf("%s: line %d, column %d: %s", e.Source, e.Line, e.Col, e.Msg)
	}
	if e.Row == 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: row %d, column %d (line %d): %s", e.Source, e.Row, e.Col, e.Line, e.Msg)
}

// IsLong reports whether m is in the long format of draws that
// "pydtlang sample" writes: a header whose first two names are exactly
// "draw" and "row", no label column, then the values. Draw and Draws select
// and list its draws.
func (m *Matrix) IsLong() bool {
	return m.RowLabels == nil && len(m.ColNames) >= 3 && m.Cols >= 3 && m.ColNames[0] == "draw" && m.ColNames[1] == "row"
}

// Draws returns the distinct draw numbers of a long-format matrix (see
// IsLong) in the order they first appear. It is an error if m is not in
// long format or a draw number is missing or not a whole number.
func (m *Matrix) Draws() ([]int, error) {
	if !m.IsLong() {
		return nil, fmt.Errorf("%s: not a file of draws (its header does not start with draw,row)", m.Source)
	}
	var out []int
	seen := map[int]bool{}
	for i := 0; i < m.Rows; i++ {
		k, err := m.wholeAt(i, 0, "draw")
		if err != nil {
			return nil, err
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

// Draw returns draw k of a long-format matrix (see IsLong): its rows, in
// file order, without the draw and row columns. Row labels stay nil (the
// rows are numbered 1..n by position, and the row column must say so),
// ColNames are the remaining names, and Where still names the cell's row
// and column in the original file. It is an error if m is not in long
// format, has no draw k, or the row column of draw k is not 1, 2, ..., n.
func (m *Matrix) Draw(k int) (*Matrix, error) {
	draws, err := m.Draws()
	if err != nil {
		return nil, err
	}
	cols := m.Cols - 2
	out := &Matrix{Cols: cols, ColNames: append([]string(nil), m.ColNames[2:]...), Source: m.Source, colShift: m.colShift + 2}
	for i := 0; i < m.Rows; i++ {
		if d, _ := m.wholeAt(i, 0, "draw"); d != k {
			continue
		}
		r, err := m.wholeAt(i, 1, "row")
		if err != nil {
			return nil, err
		}
		if r != out.Rows+1 {
			return nil, &CellError{Source: m.Source, Line: m.line(i), Row: m.rowNum(i), Col: m.colShift + 2,
				Msg: fmt.Sprintf("row %d of draw %d is numbered %d; the rows of a draw must be numbered 1, 2, ... in order", out.Rows+1, k, r)}
		}
		out.Data = append(out.Data, m.Data[i*m.Cols+2:(i+1)*m.Cols]...)
		out.lines = append(out.lines, m.line(i))
		out.rowNums = append(out.rowNums, m.rowNum(i))
		out.Rows++
	}
	if out.Rows == 0 {
		return nil, fmt.Errorf("%s has no draw %d (its draws are %s)", m.Source, k, describeDraws(draws))
	}
	return out, nil
}

// SelectDraw returns draw k of a long-format matrix (Draw); with k = 0,
// its only draw, or an error asking for a draw number when it holds
// several.
func (m *Matrix) SelectDraw(k int) (*Matrix, error) {
	if k == 0 {
		draws, err := m.Draws()
		if err != nil {
			return nil, err
		}
		if len(draws) > 1 {
			return nil, fmt.Errorf("%s holds %d draws (the format that sample writes: header draw,row,...); choose one with --draw K, e.g. --draw %d",
				m.Source, len(draws), draws[0])
		}
		k = draws[0]
	}
	return m.Draw(k)
}

// describeDraws lists draw numbers for a message: "1..5" when they are
// consecutive, else the list.
func describeDraws(d []int) string {
	consecutive := true
	for i := range d {
		if d[i] != d[0]+i {
			consecutive = false
			break
		}
	}
	if consecutive && len(d) > 1 {
		return fmt.Sprintf("%d..%d", d[0], d[len(d)-1])
	}
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// wholeAt returns the value at row i, column j as an int, or an error
// naming the cell if it is missing or not a whole number.
func (m *Matrix) wholeAt(i, j int, what string) (int, error) {
	x := m.At(i, j)
	var msg string
	switch {
	case math.IsNaN(x):
		msg = fmt.Sprintf("the %s number is missing", what)
	case x != math.Trunc(x) || math.Abs(x) > 1<<53:
		msg = fmt.Sprintf("%s number %v is not a whole number", what, x)
	}
	if msg != "" {
		return 0, &CellError{Source: m.Source, Line: m.line(i), Row: m.rowNum(i), Col: j + 1 + m.colShift, Msg: msg}
	}
	return int(x), nil
}

func (m *Matrix) line(i int) int {
	if i < len(m.lines) {
		return m.lines[i]
	}
	return i + 1
}

func (m *Matrix) rowNum(i int) int {
	if i < len(m.rowNums) {
		return m.rowNums[i]
	}
	return i + 1
}
