package plot

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ParseLabeledNewick parses one Newick tree as pydt.ParseNewick does
// (labels as there) and also returns the numeric labels of its branch
// points, such as the clade credibilities that summary.nwk, mea.nwk and
// consensus.nwk carry: ((a:0.4,b:0.4)0.93:0.3,c:0.7)1:0.3; gives 0.93 for
// the branch point above a and b and 1 for the root. Branch points with no
// label, or one that is not a number, are absent from the map.
func ParseLabeledNewick(s string, labels []string) (*pydt.Tree, map[pydt.NodeID]float64, error) {
	tr, err := pydt.ParseNewick(s, labels)
	if err != nil {
		return nil, nil, err
	}
	// A clade of a tree is named by its smallest row and its size: two
	// clades with the same smallest row are nested, and nested clades of
	// a tree whose branch points have two or more children differ in size.
	type key struct{ min, size int }
	byKey := make(map[key]pydt.NodeID, tr.NumLeaves())
	mins := make([]int, tr.Cap())
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			mins[v] = int(v)
			continue
		}
		m := math.MaxInt
		for c := range tr.Children(v) {
			m = min(m, mins[c])
		}
		mins[v] = m
		byKey[key{m, tr.Count(v)}] = v
	}
	rowOf := make(map[string]int, tr.NumLeaves())
	for i := range tr.NumLeaves() {
		rowOf[tr.Label(pydt.NodeID(i))] = i
	}

	// Scan the text again: ParseNewick accepted it, so its syntax is sound.
	type group struct{ min, size int }
	var open []group
	cred := make(map[pydt.NodeID]float64)
	prev := byte('(') // the last structural character: ( , ) or :
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '[':
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return tr, cred, nil
			}
			i += end + 2
			continue
		case c == '(':
			open = append(open, group{min: math.MaxInt})
			prev = c
		case c == ',' || c == ':':
			prev = c
		case c == ')':
			g := open[len(open)-1]
			open = open[:len(open)-1]
			if len(open) > 0 {
				p := &open[len(open)-1]
				p.min, p.size = min(p.min, g.min), p.size+g.size
			}
			// The label of the group just closed, if any.
			j := skipBlank(s, i+1)
			if j < len(s) && (s[j] == '\'' || bare(s[j])) {
				name, k := token(s, j)
				if x, err := strconv.ParseFloat(name, 64); err == nil {
					if v, ok := byKey[key{g.min, g.size}]; ok {
						cred[v] = x
					}
				}
				i = k
				prev = ')'
				continue
			}
			prev = c
		case c == '\'' || bare(c):
			name, k := token(s, i)
			if prev == '(' || prev == ',' { // a leaf
				row, ok := rowOf[name]
				if !ok {
					if r, err := strconv.Atoi(name); err == nil && tr.Labels == nil {
						row, ok = r-1, true
					}
				}
				if ok && len(open) > 0 {
					p := &open[len(open)-1]
					p.min, p.size = min(p.min, row), p.size+1
				}
			}
			i = k
			prev = 'x'
			continue
		}
		i++
	}
	return tr, cred, nil
}

// ReadLabeledNewick reads the first tree of a Newick file with
// ParseLabeledNewick.
func ReadLabeledNewick(path string, labels []string) (*pydt.Tree, map[pydt.NodeID]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<30))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	text := strings.TrimSpace(string(b))
	if k := strings.IndexByte(text, '\n'); k >= 0 {
		text = strings.TrimSpace(text[:k])
	}
	tr, cred, err := ParseLabeledNewick(text, labels)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tr, cred, nil
}

// bare reports whether c may appear in an unquoted Newick label.
func bare(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return false
	}
	return !strings.ContainsRune("()[]':;,", rune(c))
}

// skipBlank skips white space and comments from i.
func skipBlank(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			i++
		case '[':
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return len(s)
			}
			i += end + 2
		default:
			return i
		}
	}
	return i
}

// token reads a quoted or bare label at i and returns it and the index
// after it.
func token(s string, i int) (string, int) {
	if s[i] != '\'' {
		j := i
		for j < len(s) && bare(s[j]) {
			j++
		}
		return s[i:j], j
	}
	var b strings.Builder
	j := i + 1
	for j < len(s) {
		if s[j] == '\'' {
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			return b.String(), j + 1
		}
		b.WriteByte(s[j])
		j++
	}
	return b.String(), j
}
