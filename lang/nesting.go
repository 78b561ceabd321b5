package lang

import (
	"fmt"

	"github.com/alecthomas/participle/v2/lexer"
)

// maxNesting bounds how deeply expressions may nest. participle parses by
// recursive descent, so absurdly deep input ("((((..." a hundred thousand
// times) would otherwise exhaust the goroutine stack, which is fatal rather
// than a recoverable panic. No real model comes near the limit.
const maxNesting = 200

// limitNesting reports the first token of every run of tokens nested more
// than maxNesting deep and turns all of them into empty Invalid tokens, so participle
// stops before recursing into them and the parser resynchronises after
// them.
//
// The depth it measures over-approximates the parser's recursion: each open
// bracket counts one, as does each prefix "-" and each "^" since the last
// binary operator, comma or assignment at the same bracket level (unary
// minus and right-associative ^ recurse; + - * / iterate).
func (p *parser) limitNesting() {
	levels := []int{0}                      // per open bracket: prefix operators seen since the last reset
	depth := 0                              // open brackets plus every level's count
	inRun := false                          // tok follows an over-deep token
	invalid := false                        // an over-deep token was seen since the last reset
	for i := range p.toks[:len(p.toks)-1] { // never the final EOF token
		tok := &p.toks[i]
		if invalid && p.startsStatement(i) {
			// participle cannot have got here through the over-deep
			// tokens, so recovery restarts at depth zero. Without
			// a preceding over-deep token there is no such guarantee (the
			// "statement" may be a named argument inside a call).
			levels, depth, invalid = levels[:1], 0, false
			levels[0] = 0
		}
		top := len(levels) - 1
		switch {
		case isPunct(*tok, "(") || isPunct(*tok, "["):
			levels = append(levels, 0)
			depth++
		case isPunct(*tok, ")") || isPunct(*tok, "]"):
			if top > 0 {
				depth -= 1 + levels[top]
				levels = levels[:top]
			}
		case isPunct(*tok, ";") || isPunct(*tok, "{") || isPunct(*tok, "}"):
			levels, depth = levels[:1], 0
			levels[0] = 0
		case isPunct(*tok, "^") || isPunct(*tok, "-") && (i == 0 || !endsOperand(p.toks[i-1])):
			levels[top]++
			depth++
		case tok.Type == typePunct: // binary operator, ",", "~", "=", ":"
			depth -= levels[top]
			levels[top] = 0
		}
		if depth <= maxNesting {
			inRun = false
			continue
		}
		if !inRun && tok.Type != typeInvalid {
			p.add(tok.Pos, fmt.Sprintf("expression nested too deeply (more than %d levels)", maxNesting))
		}
		inRun, invalid = true, true
		// Clearing the value matters: participle matches literals such as
		// "(" by value whatever the token type.
		tok.Type, tok.Value = typeInvalid, ""
	}
}

// endsOperand reports whether tok can end an operand, making a following
// "-" binary rather than prefix.
func endsOperand(tok lexer.Token) bool {
	return tok.Type == typeIdent || tok.Type == typeNumber ||
		isPunct(tok, ")") || isPunct(tok, "]")
}
