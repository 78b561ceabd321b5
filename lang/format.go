package lang

import (
	"bytes"
	"strings"
)

// indentUnit is one level of block indentation.
const indentUnit = "  "

// Format returns the canonical text of f:
//
//   - one statement per line, blocks indented by two spaces;
//   - single spaces around ~ = + - * / and the ":" of declarations, none
//     around ^, ", " after commas;
//   - a loop range is written lo:hi, or lo : hi when a bound is a binary
//     expression;
//   - parentheses as the user wrote them (Paren nodes), plus any needed to
//     preserve the meaning of a tree built without them;
//   - numbers as written;
//   - comments kept, and runs of blank lines between statements collapsed
//     to one (blank lines at the start or end of a block are dropped);
//   - the output ends with exactly one newline (an empty file stays empty).
//
// Format is idempotent: formatting the result of parsing its output yields
// the same bytes.
func Format(f *File) []byte {
	var p printer
	p.block(f.Stmts, f.EndComments)
	return p.buf.Bytes()
}

// FormatSource parses src and returns its canonical text. On a syntax
// error it returns the ErrorList from Parse, unwrapped, so that callers can
// print it with ErrorList.Format.
func FormatSource(filename string, src []byte) ([]byte, error) {
	f, err := Parse(filename, src)
	if err != nil {
		return nil, err
	}
	return Format(f), nil
}

// printer accumulates formatted output.
type printer struct {
	buf    bytes.Buffer
	indent int
}

// block prints a sequence of statements followed by end-of-block comments,
// keeping single blank lines where the source had them.
func (p *printer) block(stmts []Stmt, end []*Comment) {
	first := true
	item := func(blankBefore bool) {
		if blankBefore && !first {
			p.buf.WriteByte('\n')
		}
		first = false
	}
	for _, s := range stmts {
		if s == nil {
			continue
		}
		tr := s.Comments()
		for _, c := range tr.Doc {
			item(c.BlankBefore)
			p.line(c.Text, nil)
		}
		item(tr.BlankBefore)
		p.stmt(s)
	}
	for _, c := range end {
		item(c.BlankBefore)
		p.line(c.Text, nil)
	}
}

// line writes one indented line with an optional trailing comment.
func (p *printer) line(text string, comment *Comment) {
	for range p.indent {
		p.buf.WriteString(indentUnit)
	}
	p.buf.WriteString(text)
	if comment != nil {
		p.buf.WriteByte(' ')
		p.buf.WriteString(comment.Text)
	}
	p.buf.WriteByte('\n')
}

// stmt prints one statement (a for-block over several lines).
func (p *printer) stmt(s Stmt) {
	var b strings.Builder
	switch s := s.(type) {
	case *DimDecl:
		b.WriteString("dim ")
		writeJoined(&b, s.Names, writeIdent)
	case *ConstDecl:
		b.WriteString("const ")
		writeIdent(&b, s.Name)
		b.WriteString(" = ")
		writeExpr(&b, s.Value)
	case *DataDecl:
		writeDecl(&b, "data ", s.Name, s.Type)
	case *ParamDecl:
		writeDecl(&b, "param ", s.Name, s.Type)
	case *Assign:
		if s.LHS != nil {
			writeIdent(&b, s.LHS.Name)
			writeList(&b, "[", s.LHS.Indices, "]")
		}
		b.WriteString(" " + string(s.Op) + " ")
		writeExpr(&b, s.RHS)
	case *ForBlock:
		p.forBlock(s)
		return
	}
	p.line(b.String(), s.Comments().Comment)
}

// forBlock prints a loop header, its indented body and the closing brace.
func (p *printer) forBlock(s *ForBlock) {
	var b strings.Builder
	b.WriteString("for ")
	writeJoined(&b, s.Ranges, writeRange)
	b.WriteString(" {")
	p.line(b.String(), s.Comment)
	p.indent++
	p.block(s.Body, s.EndComments)
	p.indent--
	p.line("}", s.CloseComment)
}

// writeDecl writes a data or param declaration: keyword, name, " : ", type.
func writeDecl(b *strings.Builder, keyword string, name *Ident, t *Type) {
	b.WriteString(keyword)
	writeIdent(b, name)
	b.WriteString(" : ")
	writeType(b, t)
}

func writeIdent(b *strings.Builder, id *Ident) {
	if id != nil {
		b.WriteString(id.Name)
	}
}

func writeType(b *strings.Builder, t *Type) {
	if t == nil {
		return
	}
	b.WriteString(string(t.Kind))
	if t.Arg != nil {
		b.WriteByte('(')
		writeExpr(b, t.Arg)
		b.WriteByte(')')
	}
	writeList(b, "[", t.Dims, "]")
}

// writeRange writes lo:hi, spacing the colon when a bound is a binary
// expression so that `2 : N - 1` does not read as `(2:N) - 1`.
func writeRange(b *strings.Builder, r *Range) {
	if r == nil {
		return
	}
	writeIdent(b, r.Var)
	b.WriteString(" in ")
	sep := ":"
	if precOf(r.Lo) < precUnary || precOf(r.Hi) < precUnary {
		sep = " : "
	}
	writeExpr(b, r.Lo)
	b.WriteString(sep)
	writeExpr(b, r.Hi)
}

// writeList writes open, the expressions separated by ", ", and close; it
// writes nothing for an empty list.
func writeList(b *strings.Builder, open string, list []Expr, close string) {
	if len(list) == 0 {
		return
	}
	b.WriteString(open)
	writeJoined(b, list, writeExpr)
	b.WriteString(close)
}

// writeJoined writes the items of list with write, separated by ", ".
func writeJoined[T any](b *strings.Builder, list []T, write func(*strings.Builder, T)) {
	for i, x := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		write(b, x)
	}
}

// writeExpr writes e, adding parentheses only where the tree's structure
// would otherwise be lost (parsed trees carry the user's own as Paren).
func writeExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Number:
		b.WriteString(e.Lit)
	case *Ident:
		b.WriteString(e.Name)
	case *Paren:
		b.WriteByte('(')
		writeExpr(b, e.X)
		b.WriteByte(')')
	case *Call:
		writeIdent(b, e.Func)
		b.WriteByte('(')
		writeJoined(b, e.Args, writeArg)
		b.WriteByte(')')
	case *Index:
		writeOperand(b, e.Base, precPrimary)
		writeList(b, "[", e.Indices, "]")
	case *Unary:
		b.WriteString(e.Op)
		writeOperand(b, e.X, precUnary)
	case *Binary:
		prec := Precedence(e.Op)
		left, op, right := prec, " "+e.Op+" ", prec+1 // left-associative
		if e.Op == "^" {
			// Right-associative, unspaced, and the exponent may be
			// negative: 2^-1.
			left, op, right = prec+1, e.Op, precUnary
		}
		writeOperand(b, e.X, left)
		b.WriteString(op)
		writeOperand(b, e.Y, right)
	}
}

// writeArg writes a call argument, "name = value" when named.
func writeArg(b *strings.Builder, a *Arg) {
	if a == nil {
		return
	}
	if a.Name != nil {
		b.WriteString(a.Name.Name + " = ")
	}
	writeExpr(b, a.Value)
}

// writeOperand writes e, parenthesised if it binds more loosely than min.
func writeOperand(b *strings.Builder, e Expr, min int) {
	if precOf(e) < min {
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
		return
	}
	writeExpr(b, e)
}

// precOf is the binding strength of e as an operand.
func precOf(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return e.Precedence()
	case *Unary:
		return precUnary
	}
	return precPrimary
}
