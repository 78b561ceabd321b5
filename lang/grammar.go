package lang

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// This file holds the participle grammar. Its structs are private: they
// mirror the concrete syntax closely (one struct per precedence level) and
// are converted into the public AST by convert.go.
//
// The grammar describes a single statement. Block structure ("{" ... "}"),
// statement separators, comments and error recovery are handled by the
// driver in parser.go, which invokes participle once per statement. That is
// what lets a file with several syntax errors report all of them.

// gStmt is the union of statement forms. A for-loop contributes only its
// header; the driver collects the body.
type gStmt interface{ gstmt() }

type gDim struct {
	Pos   lexer.Position
	Names []*gIdent `parser:"'dim' @@ ( ',' @@ )*"`
}

type gConst struct {
	Pos   lexer.Position
	Name  *gIdent `parser:"'const' @@"`
	Value *gExpr  `parser:"'=' @@"`
}

type gData struct {
	Pos  lexer.Position
	Name *gIdent `parser:"'data' @@"`
	Type *gType  `parser:"':' @@"`
}

type gParam struct {
	Pos  lexer.Position
	Name *gIdent `parser:"'param' @@"`
	Type *gType  `parser:"':' @@"`
}

type gForHeader struct {
	Pos    lexer.Position
	Ranges []*gRange `parser:"'for' @@ ( ',' @@ )*"`
	Lbrace *gLbrace  `parser:"@@"`
}

// gLbrace exists only to capture the position of the opening brace.
type gLbrace struct {
	Pos   lexer.Position
	Brace string `parser:"@'{'"`
}

type gAssign struct {
	Pos lexer.Position
	LHS *gLValue   `parser:"@@"`
	Op  *gAssignOp `parser:"@@"`
	RHS *gExpr     `parser:"@@"`
}

type gAssignOp struct {
	Pos lexer.Position
	Op  string `parser:"@( '~' | '=' )"`
}

func (*gDim) gstmt()       {}
func (*gConst) gstmt()     {}
func (*gData) gstmt()      {}
func (*gParam) gstmt()     {}
func (*gForHeader) gstmt() {}
func (*gAssign) gstmt()    {}

type gIdent struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

type gType struct {
	Pos  lexer.Position
	Kind string   `parser:"@Ident"`
	Arg  *gExpr   `parser:"( '(' @@ ')' )?"`
	Dims []*gExpr `parser:"( '[' @@ ( ',' @@ )* ']' )?"`
}

type gRange struct {
	Var *gIdent `parser:"@@ 'in'"`
	Lo  *gExpr  `parser:"@@"`
	Hi  *gExpr  `parser:"':' @@"`
}

type gLValue struct {
	Name    *gIdent  `parser:"@@"`
	Indices []*gExpr `parser:"( '[' @@ ( ',' @@ )* ']' )?"`
}

// Expressions, lowest precedence first: + -, then * /, then unary minus,
// then ^ (right associative), then primaries.

type gExpr struct {
	Left *gTerm    `parser:"@@"`
	Rest []*gSumOp `parser:"@@*"`
}

type gSumOp struct {
	Pos   lexer.Position
	Op    string `parser:"@( '+' | '-' )"`
	Right *gTerm `parser:"@@"`
}

type gTerm struct {
	Left *gUnary    `parser:"@@"`
	Rest []*gProdOp `parser:"@@*"`
}

type gProdOp struct {
	Pos   lexer.Position
	Op    string  `parser:"@( '*' | '/' )"`
	Right *gUnary `parser:"@@"`
}

// gUnary binds more loosely than ^, as in mathematics, R and Stan:
// -x^2 is -(x^2), and an exponent may be negative: 2^-1.
type gUnary struct {
	Pos     lexer.Position
	Op      string  `parser:"(   @'-'"`
	Operand *gUnary `parser:"    @@"`
	Power   *gPower `parser:") | @@"`
}

type gPower struct {
	Base *gPrimary `parser:"@@"`
	Exp  *gPowTail `parser:"@@?"`
}

type gPowTail struct {
	Pos lexer.Position
	Exp *gUnary `parser:"'^' @@"`
}

type gPrimary struct {
	Pos    lexer.Position
	Number *string    `parser:"  @Number"`
	Name   *gNameExpr `parser:"| @@"`
	Paren  *gExpr     `parser:"| '(' @@ ')'"`
}

// gNameExpr is an identifier optionally followed by a call's argument list
// or an index list.
type gNameExpr struct {
	Name  *gIdent     `parser:"@@"`
	Call  *gCallTail  `parser:"(   @@"`
	Index *gIndexTail `parser:"  | @@ )?"`
}

type gCallTail struct {
	Pos  lexer.Position
	Args []*gArg `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
}

// gArg is a call argument. A named argument "name = value" is parsed as
// an expression followed by "= value", which keeps the grammar LL(1); the
// converter checks that the expression is a bare name.
type gArg struct {
	Value *gExpr `parser:"@@"`
	Named *gExpr `parser:"( '=' @@ )?"`
}

type gIndexTail struct {
	Pos     lexer.Position
	Indices []*gExpr `parser:"'[' @@ ( ',' @@ )* ']'"`
}

// stmtParser parses one statement and stops, leaving the rest of the token
// stream for the driver. The grammar is LL(1), so no backtracking is
// needed: with lookahead 0, a construct that has consumed a token and then
// fails is reported where it failed instead of being silently abandoned
// (participle's default lookahead of 1 would backtrack "a +" to "a" and
// report a confusing error at the "+").
var stmtParser = participle.MustBuild[gStmtBox](
	participle.Lexer(lexDef),
	participle.Union[gStmt](&gDim{}, &gConst{}, &gData{}, &gParam{}, &gForHeader{}, &gAssign{}),
	participle.UseLookahead(0),
)

// gStmtBox is the grammar root; participle needs a struct at the top.
type gStmtBox struct {
	Stmt gStmt `parser:"@@"`
}
