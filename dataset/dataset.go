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
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
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
	Row, Col int // 1-based data row and file column
	Msg      string
}

func (e *CellError) Error() string {
	if e.Row == 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: row %d, column %d (line %d): %s", e.Source, e.Row, e.Col, e.Line, e.Msg)
}

// ReadFile reads a table from a file; see Read.
func ReadFile(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	return Read(path, bytes.NewReader(b))
}

// Read reads a table. The separator is a comma when the first line has
// one, else a tab when it has one, else runs of spaces. The first row is a
// header when any of its value cells is not a number (or NA, or empty). The
// first column holds row labels when any of its data cells is not a number;
// the labels must then be non-empty and distinct. A semicolon-separated
// file is an error.
func Read(source string, r io.Reader) (*Matrix, error) {
	records, lines, err := split(source, r)
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, &CellError{Source: source, Line: 1, Msg: "no data rows"}
	}
	m := &Matrix{Source: source}
	hasLabels := false
	// Labels: the first column of the data rows (all rows but a possible
	// header) is not numeric somewhere.
	isHeader := func(rec []string, skipFirst bool) bool {
		for k, cell := range rec {
			if k == 0 && skipFirst {
				continue
			}
			if !numericOrMissing(cell) {
				return true
			}
		}
		return false
	}
	for _, rec := range records[1:] {
		if len(rec) > 0 && !numericOrMissing(rec[0]) {
			hasLabels = true
			break
		}
	}
	if len(records) == 1 && len(records[0]) > 0 && !numericOrMissing(records[0][0]) && !isHeader(records[0], true) {
		hasLabels = true
	}
	header := isHeader(records[0], hasLabels)
	start := 0
	if header {
		start = 1
		names := records[0]
		if hasLabels && len(names) > 0 {
			names = names[1:]
		}
		for _, name := range names {
			m.ColNames = append(m.ColNames, strings.TrimSpace(name))
		}
	}
	if hasLabels {
		m.colShift = 1
	}
	labelRow := map[string]int{}
	for k := start; k < len(records); k++ {
		rec := records[k]
		row := k - start + 1
		vals := rec
		if hasLabels {
			if len(rec) == 0 {
				return nil, &CellError{Source: source, Line: lines[k], Row: row, Col: 1, Msg: "empty row"}
			}
			label := strings.TrimSpace(rec[0])
			if label == "" {
				return nil, &CellError{Source: source, Line: lines[k], Row: row, Col: 1, Msg: "empty row label (the first column holds row labels)"}
			}
			if prev, dup := labelRow[label]; dup {
				return nil, &CellError{Source: source, Line: lines[k], Row: row, Col: 1,
					Msg: fmt.Sprintf("duplicate row label %q (also row %d); row labels name the tree's leaves and must be distinct", label, prev)}
			}
			labelRow[label] = row
			m.RowLabels = append(m.RowLabels, label)
			vals = rec[1:]
		}
		if m.Cols == 0 && m.Rows == 0 {
			m.Cols = len(vals)
			if header && len(m.ColNames) != m.Cols {
				return nil, &CellError{Source: source, Line: lines[0], Msg: fmt.Sprintf("header has %d column names but row 1 has %d values", len(m.ColNames), m.Cols)}
			}
		}
		if len(vals) != m.Cols {
			return nil, &CellError{Source: source, Line: lines[k], Row: row, Col: len(rec),
				Msg: fmt.Sprintf("ragged row: %d values, but earlier rows have %d", len(vals), m.Cols)}
		}
		for j, cell := range vals {
			x, err := parseCell(cell)
			if err != nil {
				return nil, &CellError{Source: source, Line: lines[k], Row: row, Col: j + 1 + m.colShift, Msg: err.Error()}
			}
			m.Data = append(m.Data, x)
		}
		m.lines = append(m.lines, lines[k])
		m.Rows++
	}
	if m.Rows == 0 {
		return nil, &CellError{Source: source, Line: lines[0], Msg: "a header but no data rows"}
	}
	return m, nil
}

// split cuts the input into records, dropping blank lines, and returns the
// 1-based line number of each record.
func split(source string, r io.Reader) ([][]string, []int, error) {
	br := bufio.NewReader(r)
	first, err := br.Peek(4096)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, nil, fmt.Errorf("reading %s: %w", source, err)
	}
	firstLine := string(first)
	if i := strings.IndexByte(firstLine, '\n'); i >= 0 {
		firstLine = firstLine[:i]
	}
	firstLine = strings.TrimSuffix(firstLine, "\r")
	var sep rune
	switch {
	case strings.ContainsRune(firstLine, ';') && !strings.ContainsAny(firstLine, ",\t"):
		return nil, nil, &CellError{Source: source, Line: 1, Msg: "separator ';' is not supported: use commas, tabs or spaces"}
	case strings.ContainsRune(firstLine, ','):
		sep = ','
	case strings.ContainsRune(firstLine, '\t'):
		sep = '\t'
	}
	var records [][]string
	var lines []int
	if sep == 0 {
		sc := bufio.NewScanner(br)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		for line := 1; sc.Scan(); line++ {
			fields := strings.Fields(sc.Text())
			if len(fields) == 0 {
				continue
			}
			records = append(records, fields)
			lines = append(lines, line)
		}
		if err := sc.Err(); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", source, err)
		}
		return records, lines, nil
	}
	cr := csv.NewReader(br)
	cr.Comma = sep
	cr.FieldsPerRecord = -1
	// Leading spaces before a comma-separated field are dropped; with tabs
	// this must not be done, since csv would then drop empty fields too
	// ("1\t\t3" would read as two fields). Cells are trimmed when parsed.
	cr.TrimLeadingSpace = sep == ','
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, &CellError{Source: source, Line: pe.Line, Msg: pe.Err.Error()}
			}
			return nil, nil, fmt.Errorf("reading %s: %w", source, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		records = append(records, rec)
		lines = append(lines, line)
	}
	return records, lines, nil
}

func isMissing(cell string) bool {
	c := strings.TrimSpace(cell)
	return c == "" || c == "NA" || c == "na" || c == "NaN" || c == "nan"
}

func numericOrMissing(cell string) bool {
	if isMissing(cell) {
		return true
	}
	_, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

func parseCell(cell string) (float64, error) {
	if isMissing(cell) {
		return math.NaN(), nil
	}
	c := strings.TrimSpace(cell)
	x, err := strconv.ParseFloat(c, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is not a number (write NA or leave the cell empty for a missing value)", c)
	}
	if math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is infinite; values must be finite", c)
	}
	return x, nil
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
