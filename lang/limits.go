package lang

import (
	"fmt"
	"math"

	"github.com/alecthomas/participle/v2/lexer"
)

// MaxStatementTokens bounds the length of one statement (a loop header
// counts as one), in tokens. Parsing a statement takes time in proportion
// to its length, and so does every later stage that recurses over its
// expressions: with brackets nested at most 200 deep (see maxNesting) the
// longest remaining structure is a chain such as a + b + c + ..., whose
// tree nests one level per operator. The bound keeps that recursion
// shallow enough for the goroutine stack and a hostile file fast to reject.
// No real model comes near it.
const MaxStatementTokens = 10000

// MaxLoopIndices bounds the loop indices in scope at any point of a file:
// the ranges of every enclosing loop header, counting a header without
// ranges as one. Deeper loops are reported and left out of the tree.
const MaxLoopIndices = 100

// limitLength reports every statement longer than MaxStatementTokens
// tokens, at its first token, and turns its tokens from there on into empty
// Invalid tokens, so that participle stops there and the parser
// resynchronises at the next statement. Statements are delimited as the
// parser's recovery does it: at ";", "{" and "}" and at a token that
// starts a statement on a new line. A statement with an invalid token
// (reported already, by reportInvalid or limitNesting) is not reported
// again: participle stops at that token.
func (p *parser) limitLength() {
	start, n, cut := 0, 0, false
	for i := range p.toks[:len(p.toks)-1] { // never the final EOF token
		tok := &p.toks[i]
		if i > 0 && (isBoundary(p.toks[i-1]) || isBoundary(*tok) || p.startsStatement(i)) {
			start, n, cut = i, 0, false
		}
		if tok.Type == typeInvalid && !cut {
			// Parsing stops here anyway (the token has been reported), so
			// the rest of the statement costs only a scan.
			n = math.MinInt
		}
		if n++; n > MaxStatementTokens && !cut {
			p.add(p.toks[start].Pos, fmt.Sprintf("statement too long (more than %d tokens): split it into smaller statements", MaxStatementTokens))
			cut = true
		}
		if cut {
			// Clearing the value matters: participle matches literals
			// such as "(" by value whatever the token type.
			tok.Type, tok.Value = typeInvalid, ""
		}
	}
}

// isBoundary reports whether tok separates statements.
func isBoundary(tok lexer.Token) bool {
	return isPunct(tok, ";") || isPunct(tok, "{") || isPunct(tok, "}")
}
