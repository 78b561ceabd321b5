package pydt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/internal/bounded"
)

// Newick format for PYDT trees
//
// Branch lengths are in diffusion time. The outermost node's length is its
// time from the origin t = 0, so a tree reads "(...):t_root;", and the
// lengths along every path from the top down to a leaf sum to 1: every leaf
// sits at t = 1. For example, with branch points at t = 0.3 and t = 0.8,
//
//	((1:0.2,2:0.2):0.5,3:0.7):0.3;
//
// Times are kept as s = -log(1-t) (see Time). The writer chooses each
// length, within a few units in the last place of the exact one, so that
// ParseNewick rebuilds every branch point's s exactly; where no length can
// (mostly where 1-t is below the float64 range and the lengths below are 0)
// it writes s in a comment after the branch point's closing parenthesis
// (and label), which ParseNewick reads and other tools ignore:
//
//	((1:0,2:0)[&s=912.5]:0.6,3:0.6):0.4;
//
// Leaves are named by the tree's Labels, or by their 1-based row numbers when
// a row has no label (see Tree.Label). Labels that contain white space,
// punctuation used by Newick ( ()[]':;, ) or control characters are written
// between single quotes, with a quote inside doubled (”). Unquoted labels
// are taken verbatim: underscores are not turned into blanks.

// ErrNewick is wrapped by every error returned by ParseNewick and
// ReadNewickTrees.
var ErrNewick = errors.New("newick")

// NewickPos is a place in Newick input: a 0-based byte offset into the tree's
// text and, for ReadNewickTrees, the 1-based line number (0 otherwise).
type NewickPos struct {
	Line   int
	Offset int
}

func (p NewickPos) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d, offset %d", p.Line, p.Offset)
	}
	return fmt.Sprintf("offset %d", p.Offset)
}

// NewickError is a malformed Newick tree: where, and what is wrong. It wraps
// ErrNewick.
type NewickError struct {
	Pos NewickPos
	Msg string
}

func (e *NewickError) Error() string { return fmt.Sprintf("newick: %v: %s", e.Pos, e.Msg) }

// Unwrap returns ErrNewick.
func (e *NewickError) Unwrap() error { return ErrNewick }

// LeafTolerance is how far the summed branch lengths from the origin down to
// a leaf may be from 1 for ParseNewick to accept the tree.
const LeafTolerance = 1e-9

// Newick returns the tree in Newick format, terminated by ';' (no newline).
func (tr *Tree) Newick() string {
	return string(tr.AppendNewick(nil))
}

// WriteNewick writes the tree in Newick format followed by a newline, so that
// several calls give a file that ReadNewickTrees reads back.
func WriteNewick(w io.Writer, tr *Tree) error {
	b := tr.AppendNewick(nil)
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing newick tree: %w", err)
	}
	return nil
}

// AppendNewick appends the tree in Newick format, terminated by ';', to b.
// Lengths are printed in the shortest form that reads back to the same
// float64, chosen (within a few units in the last place of the exact
// length) so that ParseNewick rebuilds every branch point's time exactly;
// a branch point whose time the lengths cannot give back (see the package's
// Newick notes) carries its s = -log(1-t) in a comment [&s=...].
func (tr *Tree) AppendNewick(b []byte) []byte {
	return tr.AppendNewickLabeled(b, nil)
}

// AppendNewickLabeled is AppendNewick with a label for each branch point:
// label(v), when label is non-nil and returns a non-empty string, is
// written after the closing parenthesis of branch point v, where ape's
// read.tree reads node labels and Bio.Phylo reads a number as a
// confidence (e.g. "((a:0.5,b:0.5)0.93:0.3,c:0.8)1:0.2;"). Labels are quoted as
// leaf names are. ParseNewick accepts and ignores them.
func (tr *Tree) AppendNewickLabeled(b []byte, label func(v NodeID) string) []byte {
	if tr.root == NoNode {
		return append(b, ';')
	}
	lay := tr.newickLayout()
	b = tr.appendNode(b, tr.root, label, &lay)
	return append(b, ';')
}

func (tr *Tree) appendNode(b []byte, v NodeID, label func(NodeID) string, lay *newickLayout) []byte {
	if tr.IsLeaf(v) {
		if int(v) < len(tr.Labels) && tr.Labels[v] != "" {
			b = appendLabel(b, tr.Labels[v])
		} else {
			b = strconv.AppendInt(b, int64(v)+1, 10) // as Tree.Label, without allocating
		}
	} else {
		b = append(b, '(')
		for c := tr.first[v]; c != NoNode; c = tr.next[c] {
			if c != tr.first[v] {
				b = append(b, ',')
			}
			b = tr.appendNode(b, c, label, lay)
		}
		b = append(b, ')')
		if label != nil {
			if s := label(v); s != "" {
				b = appendLabel(b, s)
			}
		}
		if lay.ann[v] {
			b = append(b, "[&s="...)
			b = strconv.AppendFloat(b, tr.time[v].s, 'g', -1, 64)
			b = append(b, ']')
		}
	}
	b = append(b, ':')
	return strconv.AppendFloat(b, lay.length[v], 'g', -1, 64)
}

// newickLayout holds, per node, the branch length Newick prints above it
// and, for branch points, whether its time needs an [&s=...] annotation.
type newickLayout struct {
	length []float64
	ann    []bool
}

// newickLayout chooses the printed lengths and the annotations by running
// ParseNewick's reconstruction of the times (see newickTimes) on the
// lengths it chooses: a branch point with t <= 1/2 is read as the sum of the
// lengths from the top, so its own edge gets the length that makes that sum
// t exactly; one with t > 1/2 is read as 1-t, the sum of the lengths down
// to its nearest leaf, so the first edge of that path gets the length that
// makes the sum 1-t exactly. Other edges get their exact length. A branch
// point whose time is still not rebuilt exactly (its s is not the one
// TimeAt or TimeFromOneMinus gives for its t or 1-t, or 1-t underflows)
// is annotated.
func (tr *Tree) newickLayout() newickLayout {
	c := tr.Cap()
	// One allocation for the scratch: t, 1-t, the sums from the top and
	// from below, per node.
	f := make([]float64, 5*c)
	lay := newickLayout{length: f[:c:c], ann: make([]bool, c)}
	tt, uu, cum, below := f[c:2*c:2*c], f[2*c:3*c:3*c], f[3*c:4*c:4*c], f[4*c:]
	hops := make([]int32, c)
	order := tr.PreOrder(make([]NodeID, 0, c))
	length := lay.length
	for _, v := range order {
		if tr.IsLeaf(v) {
			tt[v], uu[v] = 1, 0
		} else {
			x := tr.time[v].s
			tt[v], uu[v] = -math.Expm1(-x), math.Exp(-x)
		}
	}
	for _, v := range order {
		cp, tp, up, sp := 0.0, 0.0, 1.0, 0.0
		if p := tr.parent[v]; p != NoNode {
			cp, tp, up, sp = cum[p], tt[p], uu[p], tr.time[p].s
		}
		l := displayLength(sp, tr.time[v].s, tp, up, tt[v], uu[v])
		if t := tt[v]; !tr.IsLeaf(v) && t <= 0.5 {
			if f := fitSum(cp, t-cp, t); f >= 0 {
				l = f
			}
		}
		length[v] = l
		cum[v] = cp + l
	}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		if tr.IsLeaf(v) {
			continue
		}
		best := tr.nearestLeafChild(v, hops)
		hops[v] = hops[best] + 1
		if cum[v] > 0.5 && !tr.IsLeaf(best) {
			u := uu[v]
			if f := fitSum(below[best], u-below[best], u); f >= 0 {
				length[best] = f
			}
		}
		below[v] = below[best] + length[best]
	}
	// Read the times back as ParseNewick will.
	for _, v := range order {
		cp := 0.0
		if p := tr.parent[v]; p != NoNode {
			cp = cum[p]
		}
		cum[v] = cp + length[v]
		if !tr.IsLeaf(v) {
			lay.ann[v] = newickTime(cum[v], below[v]) != tr.time[v]
		}
	}
	return lay
}

// displayLength returns the length printed above a node at s = sv (t = tv,
// 1-t = uv) below a parent at s = sp (t = tp, 1-t = up) when no time is
// rebuilt from it: the difference of the two ends' t (when tv <= 1/2) or 1-t
// (otherwise), which gives the decimal lengths people write back as written
// (1 - 0.2 = 0.8 above a leaf whose parent is at t = 0.2), unless the edge
// is short enough for that difference to lose more than a few units in the
// last place; then the exact length (Elapsed).
func displayLength(sp, sv, tp, up, tv, uv float64) float64 {
	exact := Elapsed(sp, sv, up, uv)
	var naive, ref float64
	switch {
	case tv <= 0.5:
		naive, ref = tv-tp, tv
	case tp <= 0.5:
		naive, ref = (1-tp)-uv, 1-tp
	default:
		naive, ref = up-uv, up
	}
	if 8*exact >= ref && naive > 0 {
		return naive
	}
	return exact
}

// nearestLeafChild returns the child of v with the fewest edges down to a
// leaf (the first such in child order), given hops of the children.
func (tr *Tree) nearestLeafChild(v NodeID, hops []int32) NodeID {
	best := NoNode
	for c := tr.first[v]; c != NoNode; c = tr.next[c] {
		if best == NoNode || hops[c] < hops[best] {
			best = c
		}
	}
	return best
}

// newickTime is the time ParseNewick rebuilds for a branch point without an
// annotation, from the sum cum of the lengths from the top and the sum
// below of the lengths down to its nearest leaf.
func newickTime(cum, below float64) Time {
	if cum <= 0.5 {
		return TimeAt(cum)
	}
	return TimeFromOneMinus(below)
}

// fitSum returns a length l within a few units in the last place of
// guess for which a + l rounds to exactly want, or guess itself when
// there is none; -1 when guess is negative.
func fitSum(a, guess, want float64) float64 {
	if !(guess >= 0) {
		return -1
	}
	if a+guess == want {
		return guess
	}
	lo, hi := guess, guess
	for range 4 {
		hi = math.Nextafter(hi, math.Inf(1))
		if a+hi == want {
			return hi
		}
		if lo > 0 {
			lo = math.Nextafter(lo, 0)
			if a+lo == want {
				return lo
			}
		}
	}
	return guess
}

// labelNeedsQuotes reports whether s cannot be written bare.
func labelNeedsQuotes(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if !bareByte(s[i]) {
			return true
		}
	}
	return false
}

// bareByte reports whether c may appear in an unquoted label.
func bareByte(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return false
	}
	switch c {
	case '(', ')', '[', ']', '\'', ':', ';', ',':
		return false
	}
	return true
}

func appendLabel(b []byte, s string) []byte {
	if !labelNeedsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}

// pnode is a node of a tree being parsed.
type pnode struct {
	parent   int
	children []int
	name     string
	length   float64
	off      int // offset of the node's first byte
	leaf     bool
	hasS     bool    // an [&s=...] annotation gave the time
	s        float64 // its s = -log(1-t)
}

// ReadNewickTrees reads a file of Newick trees, one per line, as
// ParseNewick does. Blank lines, and lines holding only white space and
// comments, are skipped. Errors give the 1-based line number and the byte
// offset within the line; on error the trees before the bad line are
// returned with it. See ForEachNewick for the limits on the input; use
// that to read a large file without keeping every tree.
func ReadNewickTrees(r io.Reader, labels []string) ([]*Tree, error) {
	var trees []*Tree
	err := ForEachNewick(r, labels, func(tr *Tree) error {
		trees = append(trees, tr)
		return nil
	})
	return trees, err
}

// ForEachNewick reads a file of Newick trees as ReadNewickTrees does, but
// calls fn with each tree as soon as it is read instead of keeping them all,
// so that a file of any length is read in the memory of one tree. It stops
// at the first error, from the input or from fn, and returns it (fn's
// unchanged).
//
// A line may be at most bounded.MaxNewickLineBytes (16 MiB) long, and the
// input may hold no NUL byte (it is not text); both are reported as a
// *NewickError, without reading further.
func ForEachNewick(r io.Reader, labels []string, fn func(*Tree) error) error {
	return ForEachNewickLabels(r, func(int) []string { return labels }, fn)
}

// ForEachNewickLabels is ForEachNewick with the labels of each tree given
// by labels(i), i counting the trees read from 0: the row that a leaf
// label names may change from tree to tree (states relabelled draw by
// draw). Each tree's Labels are those labels(i) returned.
func ForEachNewickLabels(r io.Reader, labels func(i int) []string, fn func(*Tree) error) error {
	trees := 0
	br := bufio.NewReaderSize(bounded.NewReader(r, bounded.Options{What: "Newick file", Max: math.MaxInt64 - 1}), 64<<10)
	for line := 1; ; line++ {
		text, err := readLine(br, maxNewickLine)
		if err != nil && err != io.EOF {
			var be *bounded.Error
			var ne *NewickError
			switch {
			case errors.As(err, &be):
				if be.Line > 0 {
					line = be.Line
				}
				return &NewickError{Pos: NewickPos{Line: line, Offset: max(be.Col-1, 0)}, Msg: be.Msg}
			case errors.As(err, &ne):
				ne.Pos.Line = line
				return ne
			}
			return fmt.Errorf("reading newick trees, line %d: %w", line, err)
		}
		if text == "" && err == io.EOF {
			return nil
		}
		text = strings.TrimSuffix(text, "\n")
		text = strings.TrimSuffix(text, "\r")
		p := newickParser{s: text}
		p.skip()
		if p.err == nil && p.i == len(text) {
			// Blank or comment-only line.
		} else {
			tr, perr := ParseNewick(text, labels(trees))
			trees++
			if perr != nil {
				var ne *NewickError
				if errors.As(perr, &ne) {
					ne.Pos.Line = line
				}
				return perr
			}
			if ferr := fn(tr); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// maxNewickLine is bounded.MaxNewickLineBytes, lowered by tests.
var maxNewickLine = bounded.MaxNewickLineBytes

// readLine reads through the next '\n' (or to the end of the input), at
// most limit bytes; a longer line is a *NewickError.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > limit {
			return "", &NewickError{Msg: fmt.Sprintf("line longer than %s, the longest tree pydtlang reads", bounded.Size(int64(limit)))}
		}
		if err == bufio.ErrBufferFull {
			buf = append(buf, chunk...)
			continue
		}
		if buf == nil {
			return string(chunk), err
		}
		return string(append(buf, chunk...)), err
	}
}

type newickParser struct {
	s   string
	i   int
	err *NewickError
	// The last [&s=...] annotation passed by skip, if hasAnn.
	ann    float64
	hasAnn bool
}

func (p *newickParser) fail(off int, format string, args ...any) {
	if p.err == nil {
		p.err = &NewickError{Pos: NewickPos{Offset: off}, Msg: fmt.Sprintf(format, args...)}
	}
}

// skip passes white space and [comments].
func (p *newickParser) skip() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			p.i++
		case c == '[':
			end := strings.IndexByte(p.s[p.i+1:], ']')
			if end < 0 {
				p.fail(p.i, "unterminated comment '['")
				p.i = len(p.s)
				return
			}
			if body := p.s[p.i+1 : p.i+1+end]; strings.HasPrefix(body, "&s=") {
				x, err := dataset.ParseNumber(body[3:])
				if err != nil || !(x > 0) {
					p.fail(p.i, "invalid time annotation [%s]: want [&s=S] with S = -log(1-t) positive and finite", truncate(body, 40))
					p.i = len(p.s)
					return
				}
				p.ann, p.hasAnn = x, true
			}
			p.i += end + 2
		default:
			return
		}
	}
}

// label reads a quoted or bare label at p.i, which is known to start one.
func (p *newickParser) label() string {
	if p.s[p.i] == '\'' {
		start := p.i
		var b strings.Builder
		p.i++
		for {
			if p.i >= len(p.s) {
				p.fail(start, "unterminated quoted label")
				return ""
			}
			c := p.s[p.i]
			p.i++
			if c == '\'' {
				if p.i < len(p.s) && p.s[p.i] == '\'' {
					b.WriteByte('\'')
					p.i++
					continue
				}
				return b.String()
			}
			b.WriteByte(c)
		}
	}
	start := p.i
	for p.i < len(p.s) && bareByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// length reads ":number" after a node at offset nodeOff.
func (p *newickParser) length(nodeOff int) float64 {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		if p.i < len(p.s) {
			p.fail(p.i, "missing branch length: want ':' after the node at offset %d, got %q", nodeOff, p.s[p.i])
		} else {
			p.fail(p.i, "missing branch length: want ':' after the node at offset %d, got end of input", nodeOff)
		}
		return 0
	}
	p.i++
	p.skip()
	start := p.i
	for p.i < len(p.s) && bareByte(p.s[p.i]) {
		p.i++
	}
	tok := p.s[start:p.i]
	if tok == "" {
		p.fail(start, "missing branch length after ':'")
		return 0
	}
	// The one number syntax of data files and --set: no 1_0, 0x1p-2, inf
	// or nan, and nothing that underflows to 0 or overflows.
	x, err := dataset.ParseNumber(tok)
	if err != nil {
		p.fail(start, "invalid branch length: %v", err)
		return 0
	}
	if x < 0 {
		p.fail(start, "branch length %s is negative", tok)
		return 0
	}
	return x
}

// ParseNewick reads one tree in the format written by Tree.Newick (see the
// package's Newick notes): every node, the outermost included, carries a
// positive branch length, and the lengths from the top down to every leaf
// sum to 1 within LeafTolerance. White space and comments in square brackets
// may appear between tokens; labels of internal nodes are accepted and
// ignored. The tree ends with ';', after which only white space and comments
// may follow.
//
// Leaves are matched to data rows as follows. When labels is non-nil (the
// data's row names), the tree must have len(labels) leaves and each leaf's
// name must be the name of exactly one row, where a row with an empty label
// is named by its 1-based row number; the tree's Labels is labels. When
// labels is nil and the leaf names are exactly the integers 1..N (in any
// order, written in plain decimal), leaf k is row k-1 and Labels is nil;
// otherwise rows are assigned in order of appearance and the names kept as
// Labels.
//
// Branch point times are rebuilt so that both t and 1-t stay precise: t as
// the sum of lengths from the top when that sum is at most 1/2, and
// otherwise 1-t as the sum of lengths below the node down to its nearest
// leaf (fewest edges), each converted to s by TimeAt or TimeFromOneMinus.
// An annotation [&s=S] on a branch point, before or after its length, gives
// its time instead. Lengths may be 0; times must increase strictly down the
// tree.
//
// Every error wraps ErrNewick and is a *NewickError giving the byte offset.
func ParseNewick(s string, labels []string) (*Tree, error) {
	p := newickParser{s: s}
	var nodes []pnode
	var open []int // indices of unclosed internal nodes
	p.skip()
	if p.err == nil && p.i >= len(s) {
		p.fail(p.i, "empty input")
	}
	// States: expecting a subtree, or after a complete node.
	expect := true
	singleChild := false
	done := false
	for p.err == nil && !done {
		if expect {
			p.skip()
			if p.err != nil {
				break
			}
			if p.i >= len(s) {
				p.fail(p.i, "unexpected end of input: want '(' or a leaf label")
				break
			}
			parent := -1
			if len(open) > 0 {
				parent = open[len(open)-1]
			}
			c := s[p.i]
			switch {
			case c == '(':
				nodes = append(nodes, pnode{parent: parent, off: p.i})
				if parent >= 0 {
					nodes[parent].children = append(nodes[parent].children, len(nodes)-1)
				}
				open = append(open, len(nodes)-1)
				p.i++
				continue
			case c == ';' && len(nodes) == 0:
				p.fail(p.i, "tree has no leaves (N = 0)")
				continue
			case c == '\'' || bareByte(c):
				off := p.i
				name := p.label()
				if p.err != nil {
					continue
				}
				nodes = append(nodes, pnode{parent: parent, off: off, name: name, leaf: true})
				if parent >= 0 {
					nodes[parent].children = append(nodes[parent].children, len(nodes)-1)
				}
				nodes[len(nodes)-1].length = p.length(off)
				expect = false
				continue
			case c == ')':
				if len(open) == 0 {
					p.fail(p.i, "unbalanced parentheses: ')' without '('")
				} else {
					p.fail(p.i, "empty subtree: want '(' or a leaf label before ')'")
				}
				continue
			default:
				p.fail(p.i, "unexpected %q: want '(' or a leaf label", c)
				continue
			}
		}
		// After a complete node.
		p.skip()
		if p.err != nil {
			break
		}
		if p.i >= len(s) {
			if len(open) > 0 {
				p.fail(p.i, "unbalanced parentheses: %d '(' not closed at end of input", len(open))
			} else {
				p.fail(p.i, "missing ';' at end of tree")
			}
			break
		}
		switch c := s[p.i]; c {
		case ',':
			if len(open) == 0 {
				p.fail(p.i, "',' outside parentheses")
				break
			}
			p.i++
			expect = true
		case ')':
			if len(open) == 0 {
				p.fail(p.i, "unbalanced parentheses: ')' without '('")
				break
			}
			v := open[len(open)-1]
			open = open[:len(open)-1]
			p.i++
			p.hasAnn = false
			if k := len(nodes[v].children); k < 2 {
				p.fail(nodes[v].off, "node has a single child: every branch point needs at least two")
				singleChild = true
				break
			}
			p.skip()
			if p.err == nil && p.i < len(s) && (s[p.i] == '\'' || bareByte(s[p.i])) {
				p.label() // internal labels are ignored
			}
			if p.err == nil {
				nodes[v].length = p.length(nodes[v].off)
				p.skip() // an annotation may follow the length
				nodes[v].s, nodes[v].hasS = p.ann, p.hasAnn
			}
		case ';':
			if len(open) > 0 {
				p.fail(p.i, "unbalanced parentheses: %d '(' not closed at ';'", len(open))
				break
			}
			p.i++
			p.skip()
			if p.err == nil && p.i < len(s) {
				p.fail(p.i, "trailing text after ';': %q", truncate(s[p.i:], 20))
			}
			done = true
		default:
			p.fail(p.i, "unexpected %q after a node: want ',', ')' or ';'", c)
		}
	}
	if p.err != nil {
		// An extra ')' closes a '(' early, leaving it one child, or stands
		// where a branch length or ',' belongs: report the imbalance, not
		// the symptom.
		if singleChild || (p.err.Pos.Offset < len(s) && s[p.err.Pos.Offset] == ')') {
			if off, opens, closes := unmatchedClose(s); off >= 0 {
				return nil, &NewickError{Pos: NewickPos{Offset: off},
					Msg: fmt.Sprintf("unbalanced parentheses: ')' without a matching '(' (the tree has %d '(' and %d ')')", opens, closes)}
			}
		}
		return nil, p.err
	}
	return buildFromNewick(nodes, labels)
}

// unmatchedClose returns the offset of the first ')' in s that has no
// matching '(' before it, or -1, and the numbers of '(' and ')' in s,
// outside quoted labels and comments.
func unmatchedClose(s string) (off, opens, closes int) {
	off = -1
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			for i++; i < len(s); i++ {
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '[':
			if end := strings.IndexByte(s[i:], ']'); end >= 0 {
				i += end
			} else {
				i = len(s)
			}
		case '(':
			opens++
			depth++
		case ')':
			closes++
			depth--
			if depth < 0 && off < 0 {
				off = i
			}
		}
	}
	return off, opens, closes
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func buildFromNewick(nodes []pnode, labels []string) (*Tree, error) {
	fail := func(off int, format string, args ...any) error {
		return &NewickError{Pos: NewickPos{Offset: off}, Msg: fmt.Sprintf(format, args...)}
	}
	// Leaves and their rows.
	var leaves []int
	for i := range nodes {
		if nodes[i].leaf {
			leaves = append(leaves, i)
		}
	}
	n := len(leaves)
	if n == 0 {
		return nil, fail(0, "tree has no leaves (N = 0)")
	}
	rows := make([]int, len(nodes))
	var outLabels []string
	seen := make(map[string]int, n)
	for _, v := range leaves {
		name := nodes[v].name
		if name == "" {
			return nil, fail(nodes[v].off, "leaf with an empty name")
		}
		if prev, dup := seen[name]; dup {
			return nil, fail(nodes[v].off, "duplicate leaf label %q (first at offset %d)", name, nodes[prev].off)
		}
		seen[name] = v
	}
	if labels != nil {
		if len(labels) == 0 {
			return nil, fail(0, "no labels given (N = 0) for a tree with %d leaves", n)
		}
		byName := make(map[string]int, len(labels))
		for j := range labels {
			name := labels[j]
			if name == "" {
				name = strconv.Itoa(j + 1)
			}
			if k, dup := byName[name]; dup {
				return nil, fail(0, "rows %d and %d have the same label %q", k+1, j+1, name)
			}
			byName[name] = j
		}
		for _, v := range leaves {
			j, ok := byName[nodes[v].name]
			if !ok {
				return nil, fail(nodes[v].off, "unknown leaf label %q: not among the %d row labels", nodes[v].name, len(labels))
			}
			rows[v] = j
		}
		if n != len(labels) {
			return nil, fail(0, "tree has %d leaves but %d row labels were given", n, len(labels))
		}
		outLabels = labels
	} else {
		numeric := true
		for _, v := range leaves {
			k, err := strconv.Atoi(nodes[v].name)
			if err != nil || k < 1 || k > n || strconv.Itoa(k) != nodes[v].name {
				numeric = false
				break
			}
			rows[v] = k - 1 // distinct because names are distinct
		}
		if !numeric {
			outLabels = make([]string, n)
			for j, v := range leaves {
				rows[v] = j
				outLabels[j] = nodes[v].name
			}
		}
	}

	// Times: cumulative length from the top, and 1-t from below.
	cum := make([]float64, len(nodes))
	for v := range nodes {
		if p := nodes[v].parent; p >= 0 {
			cum[v] = cum[p] + nodes[v].length
		} else {
			cum[v] = nodes[v].length
		}
	}
	for _, v := range leaves {
		if math.Abs(cum[v]-1) > LeafTolerance {
			return nil, fail(nodes[v].off, "leaf %q is at cumulative length %v, want 1 (within %g)", nodes[v].name, cum[v], LeafTolerance)
		}
	}
	below := make([]float64, len(nodes)) // 1-t via the nearest leaf
	hops := make([]int, len(nodes))
	for v := len(nodes) - 1; v >= 0; v-- { // children follow their parents
		if nodes[v].leaf {
			continue
		}
		best := -1
		for _, c := range nodes[v].children {
			if best < 0 || hops[c] < hops[best] {
				best = c
			}
		}
		hops[v] = hops[best] + 1
		below[v] = below[best] + nodes[best].length
	}

	tr := New(n)
	tr.Labels = outLabels
	ids := make([]NodeID, len(nodes))
	for v := range nodes {
		if nodes[v].leaf {
			ids[v] = NodeID(rows[v])
			continue
		}
		t := newickTime(cum[v], below[v])
		if nodes[v].hasS {
			t = TimeFromS(nodes[v].s)
		}
		pt := Origin
		if p := nodes[v].parent; p >= 0 {
			pt = tr.Time(ids[p])
		}
		if !pt.Before(t) || !t.Before(Leaf) {
			hint := ""
			if nodes[v].length == 0 && !nodes[v].hasS {
				hint = " (its branch length is 0 and it has no [&s=...] annotation)"
			}
			return nil, fail(nodes[v].off, "times not increasing: branch point at %v is not strictly between its parent's %v and t = 1%s", t, pt, hint)
		}
		ids[v] = tr.NewInternal(t)
	}
	for v := range nodes {
		// Link each child list in one pass: AddChild would walk the list
		// for every child, O(K^2) for a branch point of degree K.
		last := NoNode
		for _, c := range nodes[v].children {
			tr.linkAfter(ids[v], last, ids[c])
			last = ids[c]
		}
	}
	tr.SetRoot(ids[0])
	tr.Recount()
	if err := tr.Validate(); err != nil {
		return nil, fail(0, "%v", err)
	}
	return tr, nil
}
