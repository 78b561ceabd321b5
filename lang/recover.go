package lang

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// reportInvalid reports every character the lexer could not place in a
// token. The parser later fails on these tokens; those failures are not
// reported again.
func (p *parser) reportInvalid() {
	for _, tok := range p.toks {
		if tok.Type == typeInvalid {
			p.add(tok.Pos, fmt.Sprintf("invalid character %q", tok.Value))
		}
	}
}

// syntaxError records a participle error as a diagnostic. start is the
// index of the first token of the statement that failed.
func (p *parser) syntaxError(start int, err error) {
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) {
		p.unexpected(start, ute.Unexpected, expectation(ute.Message()))
		return
	}
	var perr participle.Error
	if errors.As(err, &perr) {
		p.addOnce(perr.Position(), perr.Message())
		return
	}
	p.addOnce(p.toks[p.pos].Pos, err.Error())
}

// unexpected reports that tok was found where want was expected. start is
// the index of the first token of the statement being parsed.
func (p *parser) unexpected(start int, tok lexer.Token, want string) {
	if tok.Type == typeInvalid {
		return // already reported by reportInvalid
	}
	idx := p.index(tok)
	switch {
	case want == "" && idx == start:
		want = "statement"
	case want == `")"` || want == `"]"`:
		// participle names only the closing bracket; inside an argument
		// or index list a comma would have done as well.
		if p.inList(start, idx) {
			want = `"," or ` + want
		}
	}
	pos := tok.Pos
	if tok.EOF() {
		pos = p.endOfInput()
	}
	if want == "" {
		p.addOnce(pos, "unexpected "+describe(tok))
		return
	}
	p.addOnce(pos, "expected "+want+", found "+describe(tok))
}

// index returns the index in p.toks of tok, found by its offset.
func (p *parser) index(tok lexer.Token) int {
	return sort.Search(len(p.toks), func(i int) bool {
		return p.toks[i].Pos.Offset >= tok.Pos.Offset
	})
}

// inList reports whether token idx lies inside an unclosed call argument
// list or index list (as opposed to a parenthesised expression) of the
// statement starting at token start.
func (p *parser) inList(start, idx int) bool {
	depth := 0
	for k := min(idx, len(p.toks)) - 1; k >= start; k-- {
		t := p.toks[k]
		switch {
		case isPunct(t, ")") || isPunct(t, "]"):
			depth++
		case isPunct(t, "(") || isPunct(t, "["):
			if depth > 0 {
				depth--
				continue
			}
			return k > 0 && p.toks[k-1].Type == typeIdent
		case isPunct(t, "{") || isPunct(t, "}") || isPunct(t, ";"):
			return false
		}
	}
	return false
}

// endOfInput is the position just after the last significant token, where
// "found end of file" errors are reported so the caret points at the
// incomplete line rather than past the end of the file.
func (p *parser) endOfInput() Position {
	n := len(p.toks)
	if n < 2 {
		return p.toks[n-1].Pos
	}
	last := p.toks[n-2]
	pos := last.Pos
	pos.Advance(last.Value)
	return pos
}

// add records an error and remembers its position for addOnce.
func (p *parser) add(pos Position, msg string) *Error {
	if p.reported == nil {
		p.reported = map[int]bool{}
	}
	p.reported[pos.Offset] = true
	return p.errs.Add(pos, msg)
}

// addOnce records an error unless one was already reported at pos. A
// resynchronised parse can reach the same bad token twice, and a parse
// failure at an invalid character would repeat its lexical error.
func (p *parser) addOnce(pos Position, msg string) {
	if !p.reported[pos.Offset] {
		p.add(pos, msg)
	}
}

// recover skips the tokens of a statement that failed to parse, starting
// at index start. It stops at a ";", a "}", or a token that begins a
// statement on a new line. A loop header whose "{" can still be found
// opens its block anyway, so that the body is parsed and the matching "}"
// does not cause a second error.
func (p *parser) recover(start int) {
	isFor := isKeyword(p.toks[start]) && p.toks[start].Value == "for"
	k := start + 1
	for ; !p.toks[k].EOF(); k++ {
		tok := p.toks[k]
		if isPunct(tok, ";") || isPunct(tok, "}") || p.startsStatement(k) {
			break
		}
		if isFor && isPunct(tok, "{") {
			p.advance(k + 1 - p.pos)
			fb := &ForBlock{For: p.toks[start].Pos, Lbrace: tok.Pos}
			p.openFor(fb, p.toks[start], tok)
			return
		}
	}
	p.advance(k - p.pos)
}

// maxLookahead bounds how far startsStatement scans over an index list.
const maxLookahead = 64

// startsStatement reports whether token k looks like the start of a
// statement: it is the first token on its line and is a declaration
// keyword, or an identifier (optionally indexed) followed by "~" or "=".
func (p *parser) startsStatement(k int) bool {
	tok := p.toks[k]
	if k > 0 && p.toks[k-1].Pos.Line == tok.Pos.Line {
		return false
	}
	if isKeyword(tok) {
		return tok.Value != "in"
	}
	if tok.Type != typeIdent {
		return false
	}
	k++
	if isPunct(p.toks[k], "[") {
		depth := 0
	scan:
		for limit := k + maxLookahead; k < limit; k++ {
			t := p.toks[k]
			switch {
			case t.EOF(), isPunct(t, ";"), isPunct(t, "{"), isPunct(t, "}"):
				return false
			case isPunct(t, "["):
				depth++
			case isPunct(t, "]"):
				if depth--; depth == 0 {
					k++
					break scan
				}
			}
		}
		if depth != 0 {
			return false
		}
	}
	return isPunct(p.toks[k], "~") || isPunct(p.toks[k], "=")
}

// grammarNames maps the leading element of a participle expectation (a
// grammar struct name or a literal) to words for a diagnostic.
var grammarNames = map[string]string{
	"GExpr":     "expression",
	"GTerm":     "expression",
	"GPower":    "expression",
	"GUnary":    "expression",
	"GPrimary":  "expression",
	"GNameExpr": "expression",
	"GArg":      "expression",
	"GIdent":    "name",
	"GType":     "type",
	"GRange":    "loop variable",
	"GLValue":   "name",
	"GLbrace":   `"{"`,
	"GAssignOp": `"~" or "="`,
	"GStmt":     "statement",
	"GStmtBox":  "statement",
}

// expectation turns participle's "unexpected token ... (expected X ...)"
// message into what the user should have written, e.g. "expression". It
// returns "" if the message names no expectation.
func expectation(msg string) string {
	i := strings.LastIndex(msg, "(expected ")
	if i < 0 {
		return ""
	}
	want := strings.TrimSuffix(msg[i+len("(expected "):], ")")
	first, _, _ := strings.Cut(want, " ")
	if name, ok := grammarNames[first]; ok {
		return name
	}
	if strings.HasPrefix(first, `"`) {
		return first
	}
	return want
}
