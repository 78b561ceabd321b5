package lang

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
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
// in a terminal. src is the text of the file the errors refer to; when it
// is nil, or a position is outside it, only the message (and hint) lines
// are written.
func (l ErrorList) Format(w io.Writer, src []byte) error {
	var b bytes.Buffer
	for _, e := range l {
		b.WriteString(e.Error())
		b.WriteByte('\n')
		if line, ok := sourceLine(src, e.Pos.Line); ok {
			b.WriteString(line)
			b.WriteByte('\n')
			b.WriteString(caretPad(line, e.Pos.Column))
			b.WriteString("^\n")
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

// sourceLine returns the text of the 1-based line n of src, without its
// line ending.
func sourceLine(src []byte, n int) (string, bool) {
	if src == nil || n < 1 {
		return "", false
	}
	for ; n > 1; n-- {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return "", false
		}
		src = src[i+1:]
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		src = src[:i]
	}
	return string(bytes.TrimRight(src, "\r")), true
}

// caretPad returns the indentation that puts a caret under the 1-based rune
// column col of line: tabs are copied, every other rune becomes a space.
func caretPad(line string, col int) string {
	var b strings.Builder
	n := 0
	for _, r := range line {
		if n >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	for ; n < col-1; n++ {
		b.WriteByte(' ')
	}
	return b.String()
}
