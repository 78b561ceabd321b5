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

	"github.com/pydtlang/pydtlang/internal/bounded"
)

// MaxValues is the most values, label cells included, that Read accepts
// from one file; see bounded.MaxValues.
const MaxValues = bounded.MaxValues

// maxValues is MaxValues, lowered by tests.
var maxValues = MaxValues

// MaxFileBytes is the largest data file Read accepts; see
// bounded.MaxDataBytes.
const MaxFileBytes = bounded.MaxDataBytes

// ReadFile reads a table from a file; see Read.
func ReadFile(path string) (*Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading data: %w", err)
	}
	defer f.Close()
	return Read(path, f)
}

// Read reads a table. The rules, stated in spec.md section 8, are:
//
//   - The input is UTF-8 or ASCII text of at most MaxFileBytes bytes and
//     MaxValues cells; a UTF-8 byte order mark at the start is dropped; NUL
//     bytes and CR-only line endings are errors.
//   - Blank lines are skipped. The separator is a comma when the first
//     non-blank line has one, else a tab when it has one, else runs of
//     white space; a semicolon-separated file is an error.
//   - Every cell is a number (the syntax of ParseNumber; infinite and
//     out-of-range numbers are errors), missing (empty, NA, na, or NaN in
//     any case and with any sign), or text.
//   - The first column holds row labels when any of its cells below the
//     first row is text; then every one of them must be text (no numbers,
//     no empty labels) and distinct. It also holds row labels when the
//     first row is a header whose first name is empty, or whose names are
//     one fewer than the cells of the rows below (the layouts R's
//     write.csv and write.table give); such labels may look like numbers.
//     A one-row file has labels when its first cell is text and the others
//     are not.
//   - The first row is a header when any of its cells (apart from the
//     label column's) is text; then none of them may be a number.
//   - Every row has the same number of cells. A column that is empty in
//     every row and has no name (a trailing separator at the end of each
//     line) is an error.
//
// Errors are *CellError or *bounded.Error values naming the file, line,
// row and column.
func Read(source string, r io.Reader) (*Matrix, error) {
	p := &reader{source: source}
	m, err := p.read(bounded.NewReader(r, bounded.Options{Name: source, What: "data file", Max: MaxFileBytes, BareCR: true}))
	if err != nil {
		var be *bounded.Error
		if errors.As(err, &be) {
			return nil, be
		}
		return nil, err
	}
	return m, nil
}

// cell classes
const (
	cellNumber = iota // a number, perhaps one that is refused (1_000, inf)
	cellMissing
	cellText
)

// classify says what a cell is, after trimming.
func classify(c string) int {
	switch {
	case c == "" || c == "NA" || c == "na" || isNaN(c):
		return cellMissing
	case decimal(c) || isInf(c):
		return cellNumber
	}
	// Anything strconv reads as a number (1_000, 0x10) is a malformed
	// number, not text, so that it is reported rather than turning a
	// column into labels.
	if _, err := strconv.ParseFloat(c, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return cellNumber
	}
	return cellText
}

// value parses a cell that is not text.
func value(c string) (float64, error) {
	if classify(c) == cellMissing {
		return math.NaN(), nil
	}
	x, err := ParseNumber(c)
	if err != nil && classify(c) == cellText {
		return 0, fmt.Errorf("%v (write NA or leave the cell empty for a missing value)", err)
	}
	return x, err
}

// reader holds the state of one Read.
type reader struct {
	source string
	sep    rune // 0 for white space

	first     []string // the first row's cells, trimmed
	firstLine int
	width     int       // cells per row below the first; 0 before row 2
	col0      []string  // first cell of every row below the first, trimmed
	lines     []int     // line of every row below the first
	vals      []float64 // the other cells of rows below the first
	filled    []bool    // per file column: some cell below row 1 is non-empty
	cells     int
}

// decision is how the first row and column are read.
type decision struct {
	header, labels bool
	// byLayout: labels given by a header layout, not by text cells.
	byLayout bool
}

func (p *reader) errAt(line, row, col int, format string, args ...any) error {
	return &CellError{Source: p.source, Line: line, Row: row, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *reader) read(r io.Reader) (*Matrix, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	// Skip blank lines before the first line that decides the separator.
	skipped := 0
	var firstText string
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		if strings.TrimSpace(line) != "" {
			firstText = line
			break
		}
		if err == io.EOF {
			return nil, p.errAt(1, 0, 0, "no data rows")
		}
		skipped++
	}
	head := strings.TrimRight(firstText, "\r\n")
	switch {
	case strings.ContainsRune(head, ';') && !strings.ContainsAny(head, ",\t"):
		return nil, p.errAt(skipped+1, 0, 0, "separator ';' is not supported: use commas, tabs or spaces")
	case strings.ContainsRune(head, ','):
		p.sep = ','
	case strings.ContainsRune(head, '\t'):
		p.sep = '\t'
	}
	rest := io.MultiReader(strings.NewReader(firstText), br)
	next := p.records(rest, skipped)
	k := 0
	for {
		rec, line, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := p.add(k, rec, line); err != nil {
			return nil, err
		}
		k++
	}
	return p.finish()
}

// records returns a function that yields the non-blank records of the input
// with their 1-based lines, then io.EOF.
func (p *reader) records(r io.Reader, skipped int) func() ([]string, int, error) {
	if p.sep == 0 {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), MaxFileBytes+1)
		line := skipped
		return func() ([]string, int, error) {
			for sc.Scan() {
				line++
				if fields := strings.Fields(sc.Text()); len(fields) > 0 {
					return fields, line, nil
				}
			}
			if err := sc.Err(); err != nil {
				return nil, 0, err
			}
			return nil, 0, io.EOF
		}
	}
	cr := csv.NewReader(r)
	cr.Comma = p.sep
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	// Leading spaces before a comma-separated field are dropped; with tabs
	// this must not be done, since csv would then drop empty fields too
	// ("1\t\t3" would read as two fields). Cells are trimmed when parsed.
	cr.TrimLeadingSpace = p.sep == ','
	return func() ([]string, int, error) {
		for {
			rec, err := cr.Read()
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return nil, 0, p.errAt(pe.Line+skipped, 0, 0, "%v", pe.Err)
				}
				return nil, 0, err
			}
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			line, _ := cr.FieldPos(0)
			return rec, line + skipped, nil
		}
	}
}

// add takes record k (0-based, blank lines not counted).
func (p *reader) add(k int, rec []string, line int) error {
	p.cells += len(rec)
	if p.cells > maxValues {
		return p.errAt(line, 0, 0, "more than %d cells, the most pydtlang reads from one data file", maxValues)
	}
	if k == 0 {
		p.firstLine = line
		p.first = make([]string, len(rec))
		for j, c := range rec {
			p.first[j] = strings.Clone(strings.TrimSpace(c))
		}
		return nil
	}
	if k == 1 {
		p.width = len(rec)
		p.filled = make([]bool, len(rec))
	}
	if len(rec) != p.width {
		d, err := p.decide()
		if err != nil {
			return err
		}
		return p.errAt(line, p.rowOf(k, d), len(rec), "ragged row: %d values, but earlier rows have %d", len(rec)-d.shift(), p.width-d.shift())
	}
	// Clone: a trimmed cell shares the memory of its whole line.
	c0 := strings.Clone(strings.TrimSpace(rec[0]))
	p.col0 = append(p.col0, c0)
	p.lines = append(p.lines, line)
	if c0 != "" {
		p.filled[0] = true
	}
	for j := 1; j < len(rec); j++ {
		c := strings.TrimSpace(rec[j])
		if c != "" {
			p.filled[j] = true
		}
		x, err := value(c)
		if err != nil {
			d, derr := p.decide()
			if derr != nil {
				return derr
			}
			return p.errAt(line, p.rowOf(k, d), j+1, "%v", err)
		}
		p.vals = append(p.vals, x)
	}
	return nil
}

func (d decision) shift() int {
	if d.labels {
		return 1
	}
	return 0
}

// rowOf is the data row of record k.
func (p *reader) rowOf(k int, d decision) int {
	if d.header {
		return k
	}
	return k + 1
}

// decide reads the first row and column from the records so far and checks
// that the first row and column are consistent with the decision.
func (p *reader) decide() (decision, error) {
	var d decision
	if len(p.col0) == 0 {
		// A single row: labels when the first cell is text and the others
		// are not; else a header when any cell is text.
		others := false
		for _, c := range p.first[1:] {
			if classify(c) == cellText {
				others = true
			}
		}
		if len(p.first) > 1 && classify(p.first[0]) == cellText && !others {
			d.labels = true
			return d, nil
		}
		d.header = others || classify(p.first[0]) == cellText
		return d, nil
	}
	textRow := -1 // index into col0 of the first text cell
	for i, c := range p.col0 {
		if classify(c) == cellText {
			textRow = i
			break
		}
	}
	d.labels = textRow >= 0
	names := p.first
	if d.labels {
		names = names[1:]
	}
	for _, c := range names {
		if classify(c) == cellText {
			d.header = true
		}
	}
	if d.header && len(p.first) > 0 &&
		(len(p.first) == p.width-1 || (len(p.first) == p.width && p.first[0] == "")) {
		d.labels, d.byLayout = true, true
	}
	// The first row.
	if d.header {
		names := p.first
		if d.labels && !(d.byLayout && len(p.first) == p.width-1) {
			names = names[1:]
		}
		col0 := len(p.first) - len(names) // file column of names[0], 0-based
		if d.byLayout && len(p.first) == p.width-1 {
			col0 = 1
		}
		text := -1
		for j, c := range names {
			if classify(c) == cellText {
				text = j
				break
			}
		}
		onlyFirst := !d.labels && text == 0
		for _, c := range names[1:] {
			if classify(c) == cellText {
				onlyFirst = false
			}
		}
		for j, c := range names {
			if classify(c) == cellNumber && onlyFirst {
				return d, p.errAt(p.firstLine, 0, 1,
					"row 1 has the text %q in column 1 but the number %q in column %d, and no row below has text in column 1: if the first column holds row labels, every row needs one (no numbers or missing values); if row 1 is a header, every column needs a name",
					names[0], c, j+1)
			}
			if classify(c) == cellNumber {
				what := "a header"
				if d.labels && !d.byLayout {
					what = "a header (the first column holds row labels)"
				}
				return d, p.errAt(p.firstLine, 0, j+1+col0,
					"row 1 is %s: column %d is the name %q, but column %d is the number %q; a header must name every column with text, and a row of data must hold only numbers",
					what, text+1+col0, names[text], j+1+col0, c)
			}
		}
	}
	// The first column.
	if d.labels {
		start := 0
		if d.header {
			start = 1
		}
		for k := start; k <= len(p.col0); k++ {
			c, line := p.first[0], p.firstLine
			if k > 0 {
				c, line = p.col0[k-1], p.lines[k-1]
			}
			row := k + 1 - start
			switch {
			case c == "":
				return d, p.errAt(line, row, 1, "empty row label (the first column holds row labels)")
			case d.byLayout:
			case classify(c) != cellText:
				return d, p.errAt(line, row, 1,
					"%q is not a row label, but the first column holds row labels (row %d is %q): labels must be text in every row; if the first column is data, %q is not a number",
					c, textRow+2-start, p.col0[textRow], p.col0[textRow])
			}
		}
	}
	return d, nil
}

func (p *reader) finish() (*Matrix, error) {
	if p.first == nil {
		return nil, p.errAt(1, 0, 0, "no data rows")
	}
	d, err := p.decide()
	if err != nil {
		return nil, err
	}
	m := &Matrix{Source: p.source}
	if d.header && len(p.col0) == 0 {
		return nil, p.errAt(p.firstLine, 0, 0, "a header but no data rows")
	}
	width := p.width
	if len(p.col0) == 0 {
		width = len(p.first)
	}
	if d.header {
		names := p.first
		if d.labels && len(names) == width {
			names = names[1:]
		}
		m.ColNames = append([]string(nil), names...)
		if len(m.ColNames) != width-d.shift() {
			return nil, p.errAt(p.firstLine, 0, 0, "header has %d column names but row 1 has %d values", len(m.ColNames), width-d.shift())
		}
	} else if len(p.first) != width {
		return nil, p.errAt(p.lines[0], 2, width, "ragged row: %d values, but earlier rows have %d", width-d.shift(), len(p.first)-d.shift())
	}
	// A column with no name that is empty in every row.
	if p.sep != 0 && len(p.col0) > 0 {
		for j := d.shift(); j < width; j++ {
			if p.filled[j] || (!d.header && p.first[j] != "") || (d.header && m.ColNames[j-d.shift()] != "") {
				continue
			}
			sep := "comma"
			if p.sep == '\t' {
				sep = "tab"
			}
			return nil, p.errAt(p.firstLine, 0, j+1, "column %d is empty in every row and has no name: is there a trailing %s at the end of each line? Remove it (or name the column in a header to keep an all-missing column)", j+1, sep)
		}
	}

	// Assemble the rows: the first row unless it is the header, then the
	// others; the first cell of each is a label or a value.
	cols := width - d.shift()
	rows := len(p.col0)
	if !d.header {
		rows++
	}
	if cols == 0 {
		return nil, p.errAt(p.firstLine, 0, 0, "no values: the only column holds text, read as row labels")
	}
	m.Rows, m.Cols = rows, cols
	m.Data = make([]float64, 0, rows*cols)
	if d.labels {
		m.colShift = 1
		m.RowLabels = make([]string, 0, rows)
	}
	labelRow := map[string]int{}
	addRow := func(row, line int, c0 string, rest []float64) error {
		if d.labels {
			if prev, dup := labelRow[c0]; dup {
				return p.errAt(line, row, 1, "duplicate row label %q (also row %d); row labels name the tree's leaves and must be distinct", c0, prev)
			}
			labelRow[c0] = row
			m.RowLabels = append(m.RowLabels, c0)
		} else {
			x, err := value(c0)
			if err != nil {
				return p.errAt(line, row, 1, "%v", err)
			}
			m.Data = append(m.Data, x)
		}
		m.Data = append(m.Data, rest...)
		m.lines = append(m.lines, line)
		return nil
	}
	row := 1
	if !d.header {
		rest := make([]float64, 0, width-1)
		for j, c := range p.first[1:] {
			x, err := value(c)
			if err != nil {
				return nil, p.errAt(p.firstLine, 1, j+2, "%v", err)
			}
			rest = append(rest, x)
		}
		if err := addRow(1, p.firstLine, p.first[0], rest); err != nil {
			return nil, err
		}
		row++
	}
	for i, c0 := range p.col0 {
		if err := addRow(row, p.lines[i], c0, p.vals[i*(width-1):(i+1)*(width-1)]); err != nil {
			return nil, err
		}
		row++
	}
	return m, nil
}
