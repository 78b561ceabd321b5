package lang

import (
	"fmt"
	"math"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Parse parses the source of one pydtlang file.
//
// Every syntax error in the file is reported, not just the first: after an
// error the parser skips to the next line that starts a statement (or to a
// ";" or "}") and carries on. The error, if not nil, is an ErrorList sorted
// by position; print it with ErrorList.Format for caret diagnostics.
//
// The returned File is never nil. When err is not nil it holds the
// statements that did parse, which is useful to tools but not fit for
// compilation.
func Parse(filename string, src []byte) (*File, error) {
	p := &parser{file: &File{Name: filename}, atStart: true}
	p.conv.errs = &p.errs
	s, err := scan(filename, src)
	if err != nil {
		// Unreachable with the catch-all lexer rule; reported, not panicked.
		p.errs.Add(Position{Filename: filename, Line: 1, Column: 1}, err.Error())
		return p.file, p.errs
	}
	p.toks, p.comments = s.tokens, s.comments
	p.reportInvalid()
	// Both before Upgrade, which copies the tokens.
	p.limitNesting()
	p.limitLength()
	p.lex, err = lexer.Upgrade(&sliceLexer{tokens: p.toks})
	if err != nil {
		p.errs.Add(Position{Filename: filename, Line: 1, Column: 1}, err.Error())
		return p.file, p.errs
	}
	p.parseFile()
	p.errs.Sort()
	return p.file, p.errs.Err()
}

// parser drives participle one statement at a time. It owns what the
// statement grammar does not: block structure, ";" separators, error
// recovery and the placing of comments.
type parser struct {
	errs     ErrorList
	reported map[int]bool // offsets of the errors added by add
	conv     converter
	file     *File

	toks []lexer.Token       // significant tokens, ending with EOF
	pos  int                 // index in toks of the next token
	lex  *lexer.PeekingLexer // participle's view of toks, kept at pos

	blocks []*ForBlock // open for-blocks, innermost last
	// detached counts the innermost open blocks that are left out of the
	// tree because they nest more than MaxLoopIndices loop indices; the
	// statements in them are dropped.
	detached int

	// Comment placement. Comments are handed out in source order as the
	// parser passes them; see takeComments.
	comments    []*Comment
	nextComment int        // index of the first comment not yet placed
	pending     []*Comment // own-line comments awaiting the next item
	atStart     bool       // nothing placed yet in the current file or block
	prevLine    int        // last line holding something already placed
	trailLine   int        // line on which the last statement or brace ended
	trail       **Comment  // where a comment on trailLine belongs, if free
}

// parseFile parses statements until the end of input.
func (p *parser) parseFile() {
	for {
		tok := p.toks[p.pos]
		switch {
		case tok.EOF():
			p.finish()
			return
		case isPunct(tok, ";"):
			p.advance(1)
		case isPunct(tok, "}"):
			p.closeBlock(tok)
		default:
			p.statement()
		}
	}
}

// statement parses one statement (or for-loop header) with participle.
func (p *parser) statement() {
	start := p.pos
	first := p.toks[start]
	p.takeComments(first.Pos.Offset)
	if start > 0 && first.Type != typeInvalid { // an invalid token is reported already
		prev := p.toks[start-1]
		if prev.Pos.Line == first.Pos.Line && !isPunct(prev, ";") && !isPunct(prev, "{") && !isPunct(prev, "}") {
			p.addOnce(first.Pos, `statements on one line must be separated by ";"`)
		}
	}
	checkpoint := p.lex.MakeCheckpoint()
	box, err := stmtParser.ParseFromLexer(p.lex, participle.AllowTrailing(true))
	if err != nil {
		p.lex.LoadCheckpoint(checkpoint)
		p.syntaxError(start, err)
		p.recover(start)
		return
	}
	end := p.lex.Cursor()
	p.pos = end
	last := p.toks[end-1]
	if g, ok := box.Stmt.(*gForHeader); ok {
		p.openFor(p.conv.forHeader(g), first, last)
		return
	}
	if s := p.conv.stmt(box.Stmt); s != nil {
		p.place(s, first, last)
	}
}

// place records s as the next statement of the current block, attaching
// the pending comments and those inside s's source span.
func (p *parser) place(s Stmt, first, last lexer.Token) {
	tr := s.Comments()
	tr.Doc, p.pending = p.pending, nil
	tr.BlankBefore = !p.atStart && first.Pos.Line > p.prevLine+1
	for p.nextComment < len(p.comments) && p.comments[p.nextComment].Slash.Offset < last.Pos.Offset {
		c := p.comments[p.nextComment]
		c.BlankBefore = false
		tr.Doc = append(tr.Doc, c)
		p.nextComment++
	}
	p.atStart = false
	p.prevLine = last.Pos.Line
	p.trailLine, p.trail = last.Pos.Line, &tr.Comment
	if p.detached > 0 {
		return
	}
	if n := len(p.blocks); n > 0 {
		p.blocks[n-1].Body = append(p.blocks[n-1].Body, s)
	} else {
		p.file.Stmts = append(p.file.Stmts, s)
	}
}

// openFor places the loop header fb, which spans the tokens first to last,
// and makes its body the current block. A loop that would bring more than
// MaxLoopIndices loop indices into scope is reported (once for a run of
// such loops, at the outermost) and detached: it and its body are parsed
// but left out of the tree, which bounds the nesting every later stage
// recurses over.
func (p *parser) openFor(fb *ForBlock, first, last lexer.Token) {
	if p.detached == 0 {
		n := max(len(fb.Ranges), 1)
		for _, b := range p.blocks {
			n += max(len(b.Ranges), 1)
		}
		if n > MaxLoopIndices {
			p.add(fb.For, fmt.Sprintf("loops nested too deeply (more than %d loop indices in scope)", MaxLoopIndices))
			p.detached = 1
			p.place(fb, first, last)
			p.open(fb)
			return
		}
	}
	p.place(fb, first, last)
	if p.detached > 0 {
		p.detached++
	}
	p.open(fb)
}

// open makes fb the current block; its header has already been placed.
func (p *parser) open(fb *ForBlock) {
	p.blocks = append(p.blocks, fb)
	p.atStart = true
	p.trail = &fb.Comment
}

// closeBlock handles a "}".
func (p *parser) closeBlock(tok lexer.Token) {
	n := len(p.blocks)
	if n == 0 {
		p.add(tok.Pos, `unexpected "}" with no open block`)
		p.advance(1)
		return
	}
	p.takeComments(tok.Pos.Offset)
	fb := p.blocks[n-1]
	p.blocks = p.blocks[:n-1]
	if p.detached > 0 {
		p.detached--
	}
	fb.EndComments, p.pending = p.pending, nil
	fb.Rbrace = tok.Pos
	p.atStart = false
	p.prevLine = tok.Pos.Line
	p.trailLine, p.trail = tok.Pos.Line, &fb.CloseComment
	p.advance(1)
}

// finish places the comments left at the end of the input and reports
// blocks that were never closed.
func (p *parser) finish() {
	p.takeComments(math.MaxInt)
	if n := len(p.blocks); n > 0 {
		p.blocks[n-1].EndComments = p.pending
	} else {
		p.file.EndComments = p.pending
	}
	p.pending = nil
	for i := len(p.blocks) - 1; i >= 0; i-- {
		p.add(p.blocks[i].Lbrace, `unterminated block: missing "}"`)
	}
	p.blocks = nil
}

// takeComments hands out the comments that start before offset: one on
// the line where the last statement or brace ended becomes its trailing
// comment; the others wait in pending for the next item.
func (p *parser) takeComments(offset int) {
	for p.nextComment < len(p.comments) {
		c := p.comments[p.nextComment]
		if c.Slash.Offset >= offset {
			return
		}
		p.nextComment++
		if p.trail != nil && c.Slash.Line == p.trailLine {
			*p.trail, p.trail = c, nil
			continue
		}
		c.BlankBefore = !p.atStart && c.Slash.Line > p.prevLine+1
		p.atStart = false
		p.prevLine = c.Slash.Line
		p.pending = append(p.pending, c)
	}
}

// advance consumes n tokens.
func (p *parser) advance(n int) {
	for ; n > 0 && !p.toks[p.pos].EOF(); n-- {
		p.lex.Next()
		p.pos++
	}
}
