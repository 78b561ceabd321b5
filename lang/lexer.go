package lang

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token type names produced by the lexer. They double as the token
// references (@Ident, @Number, ...) used in the grammar tags.
const (
	tokComment    = "Comment"
	tokWhitespace = "Whitespace"
	tokNumber     = "Number"
	tokKeyword    = "Keyword"
	tokIdent      = "Ident"
	tokPunct      = "Punct"
	tokInvalid    = "Invalid"
)

// keywords are the reserved words of the language. They cannot be used as
// identifiers. Type kinds (real, binary, ...) are deliberately not reserved.
var keywords = []string{"dim", "const", "data", "param", "for", "in"}

// lexDef is the participle lexer definition. The rules are tried in order;
// the final catch-all Invalid rule means lexing never fails: stray characters
// become Invalid tokens which the parser reports, so that one bad character
// does not hide the rest of the file's diagnostics.
var lexDef = lexer.MustSimple([]lexer.SimpleRule{
	{Name: tokComment, Pattern: `(?:#|//)[^\n]*`},
	{Name: tokWhitespace, Pattern: `\s+`},
	{Name: tokNumber, Pattern: `(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`},
	{Name: tokKeyword, Pattern: `(?:` + strings.Join(keywords, "|") + `)\b`},
	{Name: tokIdent, Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: tokPunct, Pattern: `[-+*/^~=:,;()\[\]{}]`},
	{Name: tokInvalid, Pattern: `.`},
})

// The lexer's token types, looked up once.
var (
	tokenTypes     = lexDef.Symbols()
	typeComment    = tokenTypes[tokComment]
	typeWhitespace = tokenTypes[tokWhitespace]
	typeNumber     = tokenTypes[tokNumber]
	typeKeyword    = tokenTypes[tokKeyword]
	typeIdent      = tokenTypes[tokIdent]
	typePunct      = tokenTypes[tokPunct]
	typeInvalid    = tokenTypes[tokInvalid]
)

// scanned is the result of lexing a whole file.
type scanned struct {
	tokens   []lexer.Token // significant tokens, terminated by an EOF token
	comments []*Comment    // every comment, in source order
}

// bom is the UTF-8 encoding of U+FEFF, the byte order mark some editors
// put at the start of a file.
const bom = "\uFEFF"

// scan splits src into significant tokens and comments. Whitespace is
// dropped. Because of the catch-all Invalid rule it only fails if the
// underlying lexer does, which would be a bug in the rules above.
//
// A byte order mark at the start of src is skipped (the first token is at
// column 1; offsets still count its bytes), and every line ending, "\n",
// "\r\n" or a lone "\r" (old Mac files), ends a line. A byte order mark
// anywhere else is an invalid character.
func scan(filename string, src []byte) (*scanned, error) {
	text := string(src)
	skip := 0
	if strings.HasPrefix(text, bom) {
		skip = len(bom)
		text = text[skip:]
	}
	text = normaliseCR(text)
	lex, err := lexDef.LexString(filename, text)
	if err != nil {
		return nil, fmt.Errorf("lexing %s: %w", filename, err)
	}
	s := &scanned{}
	for {
		tok, err := lex.Next()
		if err != nil {
			return nil, fmt.Errorf("lexing %s: %w", filename, err)
		}
		tok.Pos.Offset += skip
		switch tok.Type {
		case typeWhitespace:
			continue
		case typeComment:
			s.comments = append(s.comments, &Comment{
				Slash: tok.Pos,
				Text:  strings.TrimRight(tok.Value, " \t\r"),
			})
			continue
		}
		s.tokens = append(s.tokens, tok)
		if tok.EOF() {
			return s, nil
		}
	}
}

// normaliseCR replaces every "\r" not followed by "\n" with "\n", so that
// the lexer, which counts lines by "\n", numbers the lines of a file with
// old Mac line endings correctly. Byte offsets are unchanged.
func normaliseCR(text string) string {
	i := strings.IndexByte(text, '\r')
	if i < 0 {
		return text
	}
	b := []byte(text)
	for ; i < len(b); i++ {
		if b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			b[i] = '\n'
		}
	}
	return string(b)
}

// sliceLexer replays pre-lexed tokens; it lets the parser run participle
// over a token stream that has already had comments removed.
type sliceLexer struct {
	tokens []lexer.Token
	next   int
}

// Next implements lexer.Lexer. The token slice always ends with EOF, which
// is returned repeatedly once reached.
func (l *sliceLexer) Next() (lexer.Token, error) {
	tok := l.tokens[l.next]
	if l.next < len(l.tokens)-1 {
		l.next++
	}
	return tok, nil
}

// isPunct reports whether tok is the punctuation token p.
func isPunct(tok lexer.Token, p string) bool {
	return tok.Type == typePunct && tok.Value == p
}

// isKeyword reports whether tok is a reserved word.
func isKeyword(tok lexer.Token) bool {
	return tok.Type == typeKeyword
}

// describe renders a token for use in a diagnostic: `"~"`, `"alpha"`,
// `end of file`.
func describe(tok lexer.Token) string {
	if tok.EOF() {
		return "end of file"
	}
	if tok.Type == typeKeyword {
		return fmt.Sprintf("keyword %q", tok.Value)
	}
	return fmt.Sprintf("%q", tok.Value)
}
