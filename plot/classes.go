package plot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Classes assigns leaves (by label) to classes, to colour them.
type Classes map[string]string

// ReadClasses reads a CSV file of rows label,class (further columns are
// ignored). A first row that is a header is kept as an ordinary row: it
// names no leaf, so it colours nothing.
func ReadClasses(r io.Reader) (Classes, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cl := make(Classes)
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("line %d: want label,class, got %d field", line, len(rec))
		}
		label, class := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if label == "" {
			return nil, fmt.Errorf("line %d: empty label", line)
		}
		if prev, dup := cl[label]; dup && prev != class {
			return nil, fmt.Errorf("line %d: label %q has two classes, %q and %q", line, label, prev, class)
		}
		cl[label] = class
	}
	if len(cl) == 0 {
		return nil, errors.New("no rows")
	}
	return cl, nil
}

// ReadClassesFile reads a file with ReadClasses.
func ReadClassesFile(path string) (Classes, error) {
	return readFile(path, ReadClasses)
}

// index returns, for every label, the number of its class in names (-1
// for a label with no class), and the classes that occur, sorted.
func (cl Classes) index(labels []string) (idx []int, names []string) {
	seen := map[string]bool{}
	for _, l := range labels {
		if c, ok := cl[l]; ok && !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	slices.Sort(names)
	idx = make([]int, len(labels))
	for i, l := range labels {
		idx[i] = -1
		if c, ok := cl[l]; ok {
			idx[i], _ = slices.BinarySearch(names, c)
		}
	}
	return idx, names
}

// Match returns how many of labels have a class.
func (cl Classes) Match(labels []string) int {
	n := 0
	for _, l := range labels {
		if _, ok := cl[l]; ok {
			n++
		}
	}
	return n
}

// legendEntries returns one legend entry per class, and one for leaves
// without a class when there are any.
func classLegend(idx []int, names []string) []legendEntry {
	var es []legendEntry
	for k, name := range names {
		clr, shape := classColor(k)
		es = append(es, legendEntry{label: name, thumb: glyphThumb(clr, shape)})
	}
	if slices.Contains(idx, -1) {
		es = append(es, legendEntry{label: "(no class)", thumb: glyphThumb(noClass, shapes[0])})
	}
	return es
}
