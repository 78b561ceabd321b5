package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/stdlib"
)

// Expr is a compiled expression. It is evaluated against an Env holding the
// current value of every variable and loop index.
type Expr interface {
	// Eval returns the expression's value.
	Eval(env *Env) float64
	// String prints the expression in model syntax.
	String() string
	// write appends String() to b; it keeps printing linear in the size
	// of the expression however deeply it nests.
	write(b *strings.Builder)
	// walk calls f for every variable the expression reads.
	walk(f func(*Var))
}

// str returns what x writes.
func str(x Expr) string {
	var b strings.Builder
	x.write(&b)
	return b.String()
}

// Env holds the values an expression reads: one slice per variable, indexed
// by Var.ID, and the current values of loop indices (1-based, as written).
type Env struct {
	Values [][]float64
	Loop   []int
}

// NewEnv returns an environment with room for every variable of g, holding
// the values fixed at compile time (constants, data and clamped values).
func NewEnv(g *Graph) *Env {
	env := &Env{Values: make([][]float64, len(g.Vars)), Loop: make([]int, g.maxLoops)}
	for _, v := range g.Vars {
		if v.Value != nil {
			env.Values[v.ID] = append([]float64(nil), v.Value...)
		} else {
			env.Values[v.ID] = make([]float64, v.Len())
		}
	}
	return env
}

// Clone returns a deep copy of env.
func (env *Env) Clone() *Env {
	c := &Env{Values: make([][]float64, len(env.Values)), Loop: append([]int(nil), env.Loop...)}
	for i, v := range env.Values {
		c.Values[i] = append([]float64(nil), v...)
	}
	return c
}

// Num is a constant.
type Num struct{ V float64 }

// Eval returns the constant.
func (n Num) Eval(*Env) float64 { return n.V }
func (n Num) String() string    { return strconv.FormatFloat(n.V, 'g', -1, 64) }
func (n Num) write(b *strings.Builder) {
	b.WriteString(n.String())
}
func (Num) walk(func(*Var)) {}

// Ref reads a scalar variable.
type Ref struct{ V *Var }

// Eval returns the variable's value.
func (r Ref) Eval(env *Env) float64 { return env.Values[r.V.ID][0] }
func (r Ref) String() string        { return r.V.Name }
func (r Ref) write(b *strings.Builder) {
	b.WriteString(r.V.Name)
}
func (r Ref) walk(f func(*Var)) { f(r.V) }

// Elem reads one element of an array variable. Indices are 1-based.
type Elem struct {
	V   *Var
	Idx []Expr
}

// Eval returns the element's value.
func (e Elem) Eval(env *Env) float64 { return env.Values[e.V.ID][e.Offset(env)] }

// Offset returns the row-major position of the element, or panics with an
// index-range error the engine reports.
func (e Elem) Offset(env *Env) int {
	off := 0
	for k, ix := range e.Idx {
		i := int(ix.Eval(env)) - 1
		if i < 0 || i >= e.V.Dims[k] {
			panic(IndexError{Var: e.V.Name, Index: i + 1, Dim: e.V.Dims[k]})
		}
		off = off*e.V.Dims[k] + i
	}
	return off
}

func (e Elem) String() string { return str(e) }

func (e Elem) write(b *strings.Builder) {
	b.WriteString(e.V.Name)
	implicit := true
	for _, ix := range e.Idx {
		if li, ok := ix.(LoopIndex); !ok || !strings.HasPrefix(li.Name, "_") {
			implicit = false
		}
	}
	if implicit {
		return // an elementwise factor written without loops
	}
	b.WriteByte('[')
	for i, ix := range e.Idx {
		if i > 0 {
			b.WriteString(", ")
		}
		ix.write(b)
	}
	b.WriteByte(']')
}

func (e Elem) walk(f func(*Var)) {
	f(e.V)
	for _, ix := range e.Idx {
		ix.walk(f)
	}
}

// IndexError reports an index outside its dimension at run time.
type IndexError struct {
	Var        string
	Index, Dim int
}

func (e IndexError) Error() string {
	return fmt.Sprintf("index %d of %s is outside 1..%d", e.Index, e.Var, e.Dim)
}

// LoopIndex reads the current value of a for-loop index.
type LoopIndex struct {
	Slot int
	Name string
}

// Eval returns the loop index.
func (l LoopIndex) Eval(env *Env) float64 { return float64(env.Loop[l.Slot]) }
func (l LoopIndex) String() string        { return l.Name }
func (l LoopIndex) write(b *strings.Builder) {
	b.WriteString(l.Name)
}
func (LoopIndex) walk(func(*Var)) {}

// Neg is unary minus.
type Neg struct{ X Expr }

// Eval returns -X.
func (n Neg) Eval(env *Env) float64 { return -n.X.Eval(env) }
func (n Neg) String() string        { return str(n) }
func (n Neg) write(b *strings.Builder) {
	b.WriteByte('-')
	wrap(b, n.X, 4)
}
func (n Neg) walk(f func(*Var)) { n.X.walk(f) }

// Op is a binary arithmetic operation: one of + - * / ^.
type Op struct {
	Op   byte
	X, Y Expr
}

// Eval applies the operator.
func (o Op) Eval(env *Env) float64 {
	x, y := o.X.Eval(env), o.Y.Eval(env)
	switch o.Op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	case '/':
		return x / y
	case '^':
		return math.Pow(x, y)
	}
	panic("graph: unknown operator " + string(o.Op))
}

func opPrec(op byte) int {
	switch op {
	case '+', '-':
		return 1
	case '*', '/':
		return 2
	}
	return 3
}

func (o Op) String() string { return str(o) }

func (o Op) write(b *strings.Builder) {
	p := opPrec(o.Op)
	if o.Op == '^' { // right associative, written without spaces
		wrap(b, o.X, p+1)
		b.WriteByte('^')
		wrap(b, o.Y, p)
		return
	}
	wrap(b, o.X, p)
	b.WriteString(" " + string(o.Op) + " ")
	wrap(b, o.Y, p+1)
}

func (o Op) walk(f func(*Var)) { o.X.walk(f); o.Y.walk(f) }

// wrap writes x, parenthesised when it binds more loosely than prec.
func wrap(b *strings.Builder, x Expr, prec int) {
	_, neg := x.(Neg)
	if o, ok := x.(Op); ok && opPrec(o.Op) < prec || neg && prec > 3 {
		b.WriteByte('(')
		x.write(b)
		b.WriteByte(')')
		return
	}
	x.write(b)
}

// Call applies a deterministic function.
type Call struct {
	F    *stdlib.Func
	Args []Expr
	buf  []float64
}

// Eval applies the function.
func (c *Call) Eval(env *Env) float64 {
	for i, a := range c.Args {
		c.buf[i] = a.Eval(env)
	}
	return c.F.Eval(c.buf)
}

func (c *Call) String() string { return str(c) }

func (c *Call) write(b *strings.Builder) {
	b.WriteString(c.F.Name)
	b.WriteByte('(')
	for i, a := range c.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		a.write(b)
	}
	b.WriteByte(')')
}

func (c *Call) walk(f func(*Var)) {
	for _, a := range c.Args {
		a.walk(f)
	}
}

// Vars returns the distinct variables that x reads, in order of appearance.
func Vars(x Expr) []*Var {
	var out []*Var
	seen := map[*Var]bool{}
	x.walk(func(v *Var) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	})
	return out
}

// AsRef reports whether x is a plain reference to a scalar variable, and
// which.
func AsRef(x Expr) (*Var, bool) {
	r, ok := x.(Ref)
	return r.V, ok
}

// AsReciprocal reports whether x is 1 / v for a scalar variable v, the form
// in which a precision enters as a variance.
func AsReciprocal(x Expr) (*Var, bool) {
	o, ok := x.(Op)
	if !ok || o.Op != '/' {
		return nil, false
	}
	if n, ok := o.X.(Num); !ok || n.V != 1 {
		return nil, false
	}
	return AsRef(o.Y)
}

// support infers a support that x's value always lies in, from the supports
// of the variables it reads. It is conservative: Real when unsure.
func support(x Expr) stdlib.Support {
	switch x := x.(type) {
	case Num:
		switch {
		case x.V > 0 && x.V < 1:
			return stdlib.Unit
		case x.V > 0:
			return stdlib.Positive
		case x.V == 0:
			return stdlib.NonNegative
		}
		return stdlib.Real
	case Ref:
		return x.V.Support
	case Elem:
		return x.V.Support
	case Op:
		sx, sy := support(x.X), support(x.Y)
		pos := func(s stdlib.Support) bool { return s.Within(stdlib.Positive) }
		switch x.Op {
		case '+', '*', '/':
			if pos(sx) && pos(sy) {
				return stdlib.Positive
			}
		case '^':
			if pos(sx) {
				return stdlib.Positive
			}
		}
	case *Call:
		switch x.F.Name {
		case "exp", "Phi", "inv_logit":
			return stdlib.Positive
		case "sqrt":
			if support(x.Args[0]).Within(stdlib.Positive) {
				return stdlib.Positive
			}
		}
	}
	return stdlib.Real
}

// inspect calls f for x and every expression nested in it, parents first.
func inspect(x Expr, f func(Expr)) {
	f(x)
	switch x := x.(type) {
	case Neg:
		inspect(x.X, f)
	case Op:
		inspect(x.X, f)
		inspect(x.Y, f)
	case *Call:
		for _, a := range x.Args {
			inspect(a, f)
		}
	case Elem:
		for _, a := range x.Idx {
			inspect(a, f)
		}
	}
}
