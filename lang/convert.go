package lang

import "fmt"

// This file converts the participle grammar structs into the public AST.
// Binary operator chains are folded here: left-associative for + - * /,
// right-associative for ^ (the grammar already nests ^ to the right).

// converter turns grammar structs into AST nodes, reporting the few errors
// that the grammar cannot express (such as an unknown type kind).
type converter struct {
	errs *ErrorList
}

// stmt converts a simple statement. For-loop headers are converted by
// forHeader instead; stmt returns nil for them.
func (c *converter) stmt(g gStmt) Stmt {
	switch g := g.(type) {
	case *gDim:
		d := &DimDecl{Dim: g.Pos}
		for _, n := range g.Names {
			d.Names = append(d.Names, ident(n))
		}
		return d
	case *gConst:
		return &ConstDecl{Const: g.Pos, Name: ident(g.Name), Value: c.expr(g.Value)}
	case *gData:
		return &DataDecl{Data: g.Pos, Name: ident(g.Name), Type: c.typ(g.Type)}
	case *gParam:
		return &ParamDecl{Param: g.Pos, Name: ident(g.Name), Type: c.typ(g.Type)}
	case *gAssign:
		return &Assign{
			LHS:   &LValue{Name: ident(g.LHS.Name), Indices: c.exprs(g.LHS.Indices)},
			OpPos: g.Op.Pos,
			Op:    AssignOp(g.Op.Op),
			RHS:   c.expr(g.RHS),
		}
	}
	return nil
}

// forHeader converts a loop header into a ForBlock with an empty body.
func (c *converter) forHeader(g *gForHeader) *ForBlock {
	f := &ForBlock{For: g.Pos, Lbrace: g.Lbrace.Pos}
	for _, r := range g.Ranges {
		f.Ranges = append(f.Ranges, &Range{Var: ident(r.Var), Lo: c.expr(r.Lo), Hi: c.expr(r.Hi)})
	}
	return f
}

// typ converts a declared type, checking the kind name.
func (c *converter) typ(g *gType) *Type {
	t := &Type{KindPos: g.Pos, Kind: Kind(g.Kind), Arg: c.optExpr(g.Arg), Dims: c.exprs(g.Dims)}
	if !validKind(t.Kind) {
		names := make([]string, 0, len(Kinds()))
		for _, k := range Kinds() {
			names = append(names, string(k))
		}
		e := c.errs.Addf(g.Pos, "unknown type %q (want one of %s)", g.Kind, joinOr(names))
		e.Hint = Suggest(g.Kind, names)
	}
	return t
}

func validKind(k Kind) bool {
	for _, v := range Kinds() {
		if k == v {
			return true
		}
	}
	return false
}

func ident(g *gIdent) *Ident { return &Ident{NamePos: g.Pos, Name: g.Name} }

func (c *converter) exprs(gs []*gExpr) []Expr {
	if len(gs) == 0 {
		return nil
	}
	out := make([]Expr, len(gs))
	for i, g := range gs {
		out[i] = c.expr(g)
	}
	return out
}

// optExpr converts an optional expression, keeping a nil interface (not a
// typed nil pointer) when it is absent.
func (c *converter) optExpr(g *gExpr) Expr {
	if g == nil {
		return nil
	}
	return c.expr(g)
}

func (c *converter) expr(g *gExpr) Expr {
	x := c.term(g.Left)
	for _, op := range g.Rest {
		x = &Binary{X: x, OpPos: op.Pos, Op: op.Op, Y: c.term(op.Right)}
	}
	return x
}

func (c *converter) term(g *gTerm) Expr {
	x := c.unary(g.Left)
	for _, op := range g.Rest {
		x = &Binary{X: x, OpPos: op.Pos, Op: op.Op, Y: c.unary(op.Right)}
	}
	return x
}

func (c *converter) unary(g *gUnary) Expr {
	if g.Power != nil {
		return c.power(g.Power)
	}
	return &Unary{OpPos: g.Pos, Op: g.Op, X: c.unary(g.Operand)}
}

func (c *converter) power(g *gPower) Expr {
	x := c.primary(g.Base)
	if g.Exp == nil {
		return x
	}
	return &Binary{X: x, OpPos: g.Exp.Pos, Op: "^", Y: c.unary(g.Exp.Exp)}
}

func (c *converter) primary(g *gPrimary) Expr {
	switch {
	case g.Number != nil:
		return &Number{ValuePos: g.Pos, Lit: *g.Number}
	case g.Paren != nil:
		return &Paren{Lparen: g.Pos, X: c.expr(g.Paren)}
	}
	name := ident(g.Name.Name)
	switch {
	case g.Name.Call != nil:
		call := &Call{Func: name, Lparen: g.Name.Call.Pos}
		for _, a := range g.Name.Call.Args {
			call.Args = append(call.Args, c.arg(a))
		}
		return call
	case g.Name.Index != nil:
		return &Index{Base: name, Lbrack: g.Name.Index.Pos, Indices: c.exprs(g.Name.Index.Indices)}
	}
	return name
}

// arg converts a call argument. For a named argument the grammar has
// parsed the name as an expression; it must be a bare identifier.
func (c *converter) arg(g *gArg) *Arg {
	value := c.expr(g.Value)
	if g.Named == nil {
		return &Arg{Value: value}
	}
	name, ok := value.(*Ident)
	if !ok {
		c.errs.Addf(value.Pos(), "argument name must be an identifier")
		name = &Ident{NamePos: value.Pos(), Name: "_"}
	}
	return &Arg{Name: name, Value: c.expr(g.Named)}
}

// joinOr renders a list as `a, b or c`.
func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	s := ""
	for i, it := range items[:len(items)-1] {
		if i > 0 {
			s += ", "
		}
		s += it
	}
	return fmt.Sprintf("%s or %s", s, items[len(items)-1])
}
