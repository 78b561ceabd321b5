package lang

import "reflect"

// A Visitor's Visit method is invoked for each node encountered by Walk. If
// the result w is not nil, Walk visits each of the children of node with w,
// followed by a call of w.Visit(nil).
type Visitor interface {
	Visit(node Node) (w Visitor)
}

// Walk traverses an AST in depth-first order: it starts by calling
// v.Visit(node); node must not be nil. If the visitor w returned by
// v.Visit(node) is not nil, Walk is invoked recursively with visitor w for
// each of the non-nil children of node, followed by a call of w.Visit(nil).
//
// Children are visited in source order. Comments are not visited; reach
// them through Stmt.Comments.
func Walk(v Visitor, node Node) {
	if v = v.Visit(node); v == nil {
		return
	}
	switch n := node.(type) {
	case *File:
		walkStmts(v, n.Stmts)
	case *DimDecl:
		for _, name := range n.Names {
			walkNode(v, name)
		}
	case *ConstDecl:
		walkNode(v, n.Name)
		walkNode(v, n.Value)
	case *DataDecl:
		walkNode(v, n.Name)
		walkNode(v, n.Type)
	case *ParamDecl:
		walkNode(v, n.Name)
		walkNode(v, n.Type)
	case *Type:
		walkNode(v, n.Arg)
		walkExprs(v, n.Dims)
	case *Assign:
		walkNode(v, n.LHS)
		walkNode(v, n.RHS)
	case *LValue:
		walkNode(v, n.Name)
		walkExprs(v, n.Indices)
	case *ForBlock:
		for _, r := range n.Ranges {
			walkNode(v, r)
		}
		walkStmts(v, n.Body)
	case *Range:
		walkNode(v, n.Var)
		walkNode(v, n.Lo)
		walkNode(v, n.Hi)
	case *Call:
		walkNode(v, n.Func)
		for _, a := range n.Args {
			walkNode(v, a)
		}
	case *Arg:
		walkNode(v, n.Name)
		walkNode(v, n.Value)
	case *Index:
		walkNode(v, n.Base)
		walkExprs(v, n.Indices)
	case *Unary:
		walkNode(v, n.X)
	case *Binary:
		walkNode(v, n.X)
		walkNode(v, n.Y)
	case *Paren:
		walkNode(v, n.X)
	case *Ident, *Number:
		// leaves
	}
	v.Visit(nil)
}

// walkNode walks n unless it is nil, including a typed nil pointer stored
// in an interface (an absent optional child).
func walkNode(v Visitor, n Node) {
	if !isNil(n) {
		Walk(v, n)
	}
}

func walkExprs(v Visitor, list []Expr) {
	for _, e := range list {
		walkNode(v, e)
	}
}

func walkStmts(v Visitor, list []Stmt) {
	for _, s := range list {
		walkNode(v, s)
	}
}

// isNil reports whether n is nil or a nil pointer stored in the interface.
func isNil(n Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// inspector adapts a function to the Visitor interface.
type inspector func(Node) bool

// Visit calls f and continues into node's children while f returns true.
func (f inspector) Visit(node Node) Visitor {
	if f(node) {
		return f
	}
	return nil
}

// Inspect traverses an AST in depth-first order: it starts by calling
// f(node); node must not be nil. If f returns true, Inspect invokes f
// recursively for each of the non-nil children of node, followed by a call
// of f(nil).
func Inspect(node Node, f func(Node) bool) {
	Walk(inspector(f), node)
}
