package lang

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error is a diagnostic tied to a source position.
type Error struct {
	Pos Position
	Msg string
	// Hint, when set, is a suggested replacement name; it is printed as
	// `hint: did you mean "Hint"?`. See Suggest.
	Hint string
}

// Error returns "file:line:col: message". A position without a line
// (an error about a command-line value, such as "--set") prints as its
// file name alone: "--set: message".
func (e *Error) Error() string {
	if e.Pos.Line == 0 && e.Pos.Filename != "" {
		return e.Pos.Filename + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// ErrorList is a list of diagnostics. It implements sort.Interface
// (ordering by file name, line and column only, so that a stable sort keeps
// errors at one position in the order they were added) and error. The zero
// value is an empty list ready to use.
type ErrorList []*Error

// Add appends an error at pos and returns it, so the caller can set a Hint.
func (l *ErrorList) Add(pos Position, msg string) *Error {
	e := &Error{Pos: pos, Msg: msg}
	*l = append(*l, e)
	return e
}

// Addf is Add with a formatted message.
func (l *ErrorList) Addf(pos Position, format string, args ...any) *Error {
	return l.Add(pos, fmt.Sprintf(format, args...))
}

// Len implements sort.Interface.
func (l ErrorList) Len() int { return len(l) }

// Swap implements sort.Interface.
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }

// Less implements sort.Interface: errors order by file name, then line,
// then column. Errors at the same position compare equal, so that Sort (a
// stable sort) keeps them in the order they were added: a summary such as
// "197 more invalid values in X" stays after the errors it summarises.
func (l ErrorList) Less(i, j int) bool {
	a, b := l[i].Pos, l[j].Pos
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Column < b.Column
}

// Sort sorts the list in place, keeping errors at equal positions in the
// order they were added.
func (l ErrorList) Sort() { sort.Stable(l) }

// RemoveDuplicates sorts the list (see Sort) and removes every error equal
// to an earlier one in position, message and hint, such as the same problem
// found by two routes.
func (l *ErrorList) RemoveDuplicates() {
	l.Sort()
	type key struct {
		file      string
		line, col int
		msg, hint string
	}
	seen := make(map[key]bool, len(*l))
	out := (*l)[:0]
	for _, e := range *l {
		k := key{e.Pos.Filename, e.Pos.Line, e.Pos.Column, e.Msg, e.Hint}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	clear((*l)[len(out):])
	*l = out
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error returns every diagnostic as "file:line:col: message", one a line.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Format writes every diagnostic in the form
//
//	file:line:col: message
//	<the source line>
//	      ^
//	hint: did you mean "x"?
//
// The caret line copies the tabs of the source line so the caret lines up
// in a terminal. A message line is cut after 500 characters, and a long
// source line is clipped to a window of about 60 characters either side of
// the column, with "…" where text was left out. Lines end at "\n", "\r\n"
// or a lone "\r", and a byte order mark at the start of src is not shown,
// as in Parse. src is the text of the file the errors refer to; when it is
// nil, or a position is outside it, only the message (and hint) lines are
// written.
//
// At most MaxFormatted diagnostics are written, then a line saying how
// many more there are.
func (l ErrorList) Format(w io.Writer, src []byte) error {
	var b bytes.Buffer
	var lines *lineIndex
	for i, e := range l {
		if i == MaxFormatted {
			fmt.Fprintf(&b, "... and %d more errors\n", len(l)-i)
			break
		}
		b.WriteString(clip(e.Error(), maxMessageRunes))
		b.WriteByte('\n')
		if src != nil && e.Pos.Line >= 1 {
			if lines == nil {
				lines = newLineIndex(src)
			}
			if line, caret, ok := lines.snippet(e.Pos); ok {
				b.WriteString(line)
				b.WriteByte('\n')
				b.WriteString(caret)
				b.WriteString("^\n")
			}
		}
		if e.Hint != "" {
			fmt.Fprintf(&b, "hint: did you mean %q?\n", e.Hint)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing diagnostics: %w", err)
	}
	return nil
}

// MaxFormatted is the most diagnostics ErrorList.Format writes: a file of a
// million stray characters has a million errors, and nobody reads past the
// first few.
const MaxFormatted = 100

// maxMessageRunes bounds the length of a message line printed by Format: a
// message quoting an absurdly long name is cut short with "…".
const maxMessageRunes = 500

// clip returns s cut to n runes, with "…" in place of the rest.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i == len(s) {
		return s
	}
	return s[:i] + ellipsis
}

// snippetRunes is how many runes of a source line Format shows on either
// side of the column's.
const snippetRunes = 60

// ellipsis marks text left out of a clipped source line.
const ellipsis = "…"

// lineIndex locates the lines of a source file.
type lineIndex struct {
	src   []byte
	start []int // byte offset of the start of each line
	end   []int // byte offset of the end of each line, before its line ending
}

// newLineIndex indexes the lines of src, which end at "\n", "\r\n" or a lone
// "\r". A byte order mark at the start is not part of line 1.
func newLineIndex(src []byte) *lineIndex {
	ix := &lineIndex{src: src}
	s := 0
	if bytes.HasPrefix(src, []byte(bom)) {
		s = len(bom)
	}
	for i := s; i < len(src); i++ {
		switch src[i] {
		case '\n':
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				continue
			}
		default:
			continue
		}
		e := i
		if src[i] == '\n' && e > s && src[e-1] == '\r' {
			e--
		}
		ix.start, ix.end = append(ix.start, s), append(ix.end, e)
		s = i + 1
	}
	ix.start, ix.end = append(ix.start, s), append(ix.end, len(src))
	return ix
}

// snippet returns the text of pos's line, clipped around pos's column, and
// the indentation that puts a caret under that column.
func (ix *lineIndex) snippet(pos Position) (line, caret string, ok bool) {
	n := pos.Line - 1
	if n < 0 || n >= len(ix.start) {
		return "", "", false
	}
	s, e := ix.start[n], ix.end[n]
	text := ix.src[s:e]
	col := pos.Column
	if col < 1 {
		col = 1
	}
	// off is the byte offset of the column within text; beyond counts the
	// columns past the end of the line.
	off, beyond := -1, 0
	if o := pos.Offset - s; o >= 0 && o <= len(text) {
		// Trust the offset if it agrees with the column; far along a
		// long line, if at least a window's worth of text precedes it.
		limit := min(col-1, 2*snippetRunes)
		lo, back := runesBefore(text, o, limit+1)
		if back == col-1 && lo == 0 || col-1 > limit && back > limit {
			off = o
		}
	}
	if off < 0 {
		off = 0
		for k := 1; k < col; k++ {
			if off == len(text) {
				beyond = min(col-k, snippetRunes)
				break
			}
			_, size := utf8.DecodeRune(text[off:])
			off += size
		}
	}
	lo, _ := runesBefore(text, off, snippetRunes)
	hi := off
	for k := 0; k <= snippetRunes && hi < len(text); k++ {
		_, size := utf8.DecodeRune(text[hi:])
		hi += size
	}
	var lb, cb strings.Builder
	if lo > 0 {
		lb.WriteString(ellipsis)
		cb.WriteByte(' ')
	}
	lb.Write(text[lo:hi])
	if hi < len(text) {
		lb.WriteString(ellipsis)
	}
	for _, r := range string(text[lo:off]) {
		if r == '\t' {
			cb.WriteByte('\t')
		} else {
			cb.WriteByte(' ')
		}
	}
	cb.WriteString(strings.Repeat(" ", beyond))
	return lb.String(), cb.String(), true
}

// runesBefore steps back from byte offset off of text by up to limit runes.
// It returns the offset reached and how many runes it stepped over; the
// offset is 0 when the start of text was reached.
func runesBefore(text []byte, off, limit int) (int, int) {
	n := 0
	for off > 0 && n < limit {
		_, size := utf8.DecodeLastRune(text[:off])
		off -= size
		n++
	}
	return off, n
}
