package lang

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/alecthomas/participle/v2/lexer"
)

// Position is a location in a source file: file name, byte offset, and
// 1-based line and column (columns count runes).
type Position = lexer.Position

// Node is implemented by every AST node.
type Node interface {
	// Pos is the position of the node's first token.
	Pos() Position
}

// Expr is an expression: *Number, *Ident, *Call, *Index, *Unary, *Binary
// or *Paren.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement: *DimDecl, *ConstDecl, *DataDecl, *ParamDecl,
// *Assign or *ForBlock.
type Stmt interface {
	Node
	// Comments returns the statement's attached comments and spacing, for
	// reading or editing.
	Comments() *Trivia
	stmtNode()
}

// Comment is a single `#` or `//` line comment.
type Comment struct {
	Slash Position // position of the comment marker
	Text  string   // comment text including the marker, without the newline
	// BlankBefore records a blank line between the comment and whatever
	// precedes it in the same block.
	BlankBefore bool
}

// Trivia is the non-semantic part of a statement: comments and spacing. It
// is embedded in every statement so the formatter can reproduce them.
type Trivia struct {
	// BlankBefore records a blank line directly before the statement (after
	// its Doc comments, if any). It is never set on the first item of a
	// file or block.
	BlankBefore bool
	// Doc holds the comment lines before the statement, in order. Comments
	// found inside a multi-line statement are appended here too, as the
	// formatter prints every statement on one line.
	Doc []*Comment
	// Comment is the comment on the statement's last line, if any. For a
	// ForBlock it is the comment on the line of the opening brace.
	Comment *Comment
}

// Comments returns t; it lets every statement expose its Trivia through the
// Stmt interface.
func (t *Trivia) Comments() *Trivia { return t }

// File is a parsed source file.
type File struct {
	Name  string // file name as passed to Parse
	Stmts []Stmt
	// EndComments are the comment lines after the last statement.
	EndComments []*Comment
}

// Pos returns the start of the file (line 1, column 1).
func (f *File) Pos() Position { return Position{Filename: f.Name, Line: 1, Column: 1} }

// Ident is an identifier. It is used both as an expression and for
// declared names.
type Ident struct {
	NamePos Position
	Name    string
}

// DimDecl declares one or more dimension names: `dim N, D`.
type DimDecl struct {
	Trivia
	Dim   Position // position of the "dim" keyword
	Names []*Ident
}

// ConstDecl declares a compile-time constant: `const K = 10`.
type ConstDecl struct {
	Trivia
	Const Position // position of the "const" keyword
	Name  *Ident
	Value Expr
}

// DataDecl declares an observed variable: `data X : real[N, D]`.
type DataDecl struct {
	Trivia
	Data Position // position of the "data" keyword
	Name *Ident
	Type *Type
}

// ParamDecl declares a latent variable with a shape: `param Z : real[N, D]`.
type ParamDecl struct {
	Trivia
	Param Position // position of the "param" keyword
	Name  *Ident
	Type  *Type
}

// Kind is the element kind of a declared variable.
type Kind string

// The kinds accepted in a Type.
const (
	KindReal        Kind = "real"
	KindBinary      Kind = "binary"
	KindCount       Kind = "count"
	KindCategorical Kind = "categorical"
	KindInt         Kind = "int"
	KindPos         Kind = "pos"
	KindUnit        Kind = "unit"
)

// Kinds lists every valid Kind in the order of the language definition.
func Kinds() []Kind {
	return []Kind{KindReal, KindBinary, KindCount, KindCategorical, KindInt, KindPos, KindUnit}
}

// Type is a declared type: a kind, an optional kind argument and optional
// dimensions, as in `categorical(K)[N]`.
type Type struct {
	KindPos Position
	Kind    Kind
	Arg     Expr   // kind argument, or nil
	Dims    []Expr // dimensions; empty for a scalar
}

// AssignOp distinguishes stochastic from deterministic assignment.
type AssignOp string

// The two assignment operators.
const (
	Sample AssignOp = "~" // stochastic: the left side is drawn from a distribution
	Define AssignOp = "=" // deterministic: the left side is a function of the right
)

// Assign is `lhs ~ expr` or `lhs = expr`.
type Assign struct {
	Trivia
	LHS   *LValue
	OpPos Position
	Op    AssignOp
	RHS   Expr
}

// LValue is the target of an assignment: a name with optional indices.
type LValue struct {
	Name    *Ident
	Indices []Expr // empty when not indexed
}

// ForBlock is `for i in 1:N, j in 1:M { ... }`.
type ForBlock struct {
	Trivia
	For    Position // position of the "for" keyword
	Ranges []*Range
	Lbrace Position
	Body   []Stmt
	// EndComments are the comment lines after the last body statement.
	EndComments []*Comment
	Rbrace      Position
	// CloseComment is the comment on the line of the closing brace.
	CloseComment *Comment
}

// Range binds a loop variable to the inclusive range Lo:Hi.
type Range struct {
	Var *Ident
	Lo  Expr
	Hi  Expr
}

// Number is a numeric literal, kept as written.
type Number struct {
	ValuePos Position
	Lit      string
}

// Float returns the literal's value. A literal too large for a float64
// (1e400) is an error "number 1e400 is out of range for a float64"; one too
// small (1e-400) rounds to zero, as in Go.
func (n *Number) Float() (float64, error) {
	v, err := strconv.ParseFloat(n.Lit, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("number %s is out of range for a float64", n.Lit)
		}
		return 0, fmt.Errorf("%q is not a number", n.Lit)
	}
	return v, nil
}

// Call is a function or distribution application: `Gamma(2, rate = 0.5)`.
type Call struct {
	Func   *Ident
	Lparen Position
	Args   []*Arg
}

// Arg is a call argument. Name is nil for a positional argument.
type Arg struct {
	Name  *Ident
	Value Expr
}

// Index is an indexed variable: `Z[i, d]`.
type Index struct {
	Base    Expr
	Lbrack  Position
	Indices []Expr
}

// Unary is a prefix operation. The only unary operator is "-".
type Unary struct {
	OpPos Position
	Op    string
	X     Expr
}

// Binary is an infix operation: one of + - * / ^.
type Binary struct {
	X     Expr
	OpPos Position
	Op    string
	Y     Expr
}

// Paren is a parenthesised expression, kept so that the formatter
// reproduces the user's grouping.
type Paren struct {
	Lparen Position
	X      Expr
}

// Operator precedence levels, loosest first.
const (
	precSum     = 1 // + -
	precProduct = 2 // * /
	precUnary   = 3 // prefix -
	precPower   = 4 // ^ (right associative)
	precPrimary = 5 // literals, names, calls, indices, parentheses
)

// Precedence returns the binding strength of a binary operator: 1 for + -,
// 2 for * /, 4 for ^; 0 for anything else. Unary minus (3) binds more
// loosely than ^ and more tightly than * /, so -x^2 is -(x^2) and -a*b is
// (-a)*b.
func Precedence(op string) int {
	switch op {
	case "+", "-":
		return precSum
	case "*", "/":
		return precProduct
	case "^":
		return precPower
	}
	return 0
}

// Precedence returns the precedence of b's operator (see Precedence).
func (b *Binary) Precedence() int { return Precedence(b.Op) }

// Pos returns the position of the identifier.
func (n *Ident) Pos() Position { return n.NamePos }

// Pos returns the position of the "dim" keyword.
func (n *DimDecl) Pos() Position { return n.Dim }

// Pos returns the position of the "const" keyword.
func (n *ConstDecl) Pos() Position { return n.Const }

// Pos returns the position of the "data" keyword.
func (n *DataDecl) Pos() Position { return n.Data }

// Pos returns the position of the "param" keyword.
func (n *ParamDecl) Pos() Position { return n.Param }

// Pos returns the position of the kind name.
func (n *Type) Pos() Position { return n.KindPos }

// Pos returns the position of the assignment target.
func (n *Assign) Pos() Position { return n.LHS.Pos() }

// Pos returns the position of the target name.
func (n *LValue) Pos() Position { return n.Name.Pos() }

// Pos returns the position of the "for" keyword.
func (n *ForBlock) Pos() Position { return n.For }

// Pos returns the position of the loop variable.
func (n *Range) Pos() Position { return n.Var.Pos() }

// Pos returns the position of the literal.
func (n *Number) Pos() Position { return n.ValuePos }

// Pos returns the position of the function name.
func (n *Call) Pos() Position { return n.Func.Pos() }

// Pos returns the position of the indexed expression.
func (n *Index) Pos() Position { return n.Base.Pos() }

// Pos returns the position of the operator.
func (n *Unary) Pos() Position { return n.OpPos }

// Pos returns the position of the left operand. It follows a chain of
// left operands without recursing, so it is safe on long chains.
func (n *Binary) Pos() Position {
	var e Expr = n
	for {
		switch x := e.(type) {
		case *Binary:
			e = x.X
		case *Index:
			e = x.Base
		default:
			return e.Pos()
		}
	}
}

// Pos returns the position of the opening parenthesis.
func (n *Paren) Pos() Position { return n.Lparen }

// Pos returns the position of the argument's name, or of its value when it
// is positional.
func (n *Arg) Pos() Position {
	if n.Name != nil {
		return n.Name.Pos()
	}
	return n.Value.Pos()
}

func (*Number) exprNode() {}
func (*Ident) exprNode()  {}
func (*Call) exprNode()   {}
func (*Index) exprNode()  {}
func (*Unary) exprNode()  {}
func (*Binary) exprNode() {}
func (*Paren) exprNode()  {}

func (*DimDecl) stmtNode()   {}
func (*ConstDecl) stmtNode() {}
func (*DataDecl) stmtNode()  {}
func (*ParamDecl) stmtNode() {}
func (*Assign) stmtNode()    {}
func (*ForBlock) stmtNode()  {}
