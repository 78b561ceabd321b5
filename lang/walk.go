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
		walkList(v, n.Stmts)
	case *DimDecl:
		walkList(v, n.Names)
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
		walkList(v, n.Dims)
	case *Assign:
		walkNode(v, n.LHS)
		walkNode(v, n.RHS)
	case *LValue:
		walkNode(v, n.Name)
		walkList(v, n.Indices)
	case *ForBlock:
		walkList(v, n.Ranges)
		walkList(v, n.Body)
	case *Range:
		walkNode(v, n.Var)
		walkNode(v, n.Lo)
		walkNode(v, n.Hi)
	case *Call:
		walkNode(v, n.Func)
		walkList(v, n.Args)
	case *Arg:
		walkNode(v, n.Name)
		walkNode(v, n.Value)
	case *Index:
		walkNode(v, n.Base)
		walkList(v, n.Indices)
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

// walkList walks the non-nil nodes of a list in order.
func walkList[N Node](v Visitor, list []N) {
	for _, n := range list {
		walkNode(v, n)
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
