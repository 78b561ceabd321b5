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
	// Eval returns the expression's value. It never panics: an index
	// outside its dimension, or not a whole number, makes the value NaN
	// and is recorded in env, where the checked entry points Eval (the
	// function), (*Factor).ForEach and (*Graph).EvalDeterministic report
	// it, as does env.Err.
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
// It also holds the scratch space of function calls and the first
// evaluation error not yet reported, so an Env must not be used by two
// goroutines at once; distinct Envs may evaluate one Graph concurrently.
type Env struct {
	Values [][]float64
	Loop   []int

	stack []float64 // the arguments of the calls being evaluated
	err   error     // the first evaluation error (see Err)
}

// Err returns the first evaluation error recorded in env, or nil. An
// error stays recorded: an Env whose evaluation failed holds values that
// must not be trusted, and every checked evaluation (Eval,
// (*Factor).ForEach, (*Graph).EvalDeterministic) in it reports the error.
// Code that evaluates with the Expr method directly checks Err before
// trusting the values, or leaves the report to the next checked evaluation.
func (env *Env) Err() error { return env.err }

// fail records err unless an earlier error is recorded.
func (env *Env) fail(err error) {
	if env.err == nil {
		env.err = err
	}
}

// failed reports the error recorded in env since a point at which pending
// was the recorded error, wrapped by wrap and recorded in its place; or
// the error that was already pending, as it is; or nil.
func (env *Env) failed(pending error, wrap func(error) error) error {
	switch {
	case env.err == nil:
		return nil
	case pending == nil:
		env.err = wrap(env.err)
	}
	return env.err
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
	c := &Env{Values: make([][]float64, len(env.Values)), Loop: append([]int(nil), env.Loop...), err: env.err}
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

// Eval returns the element's value, or NaN with an IndexError recorded in
// env.
func (e Elem) Eval(env *Env) float64 {
	off, ok := e.offset(env)
	if !ok {
		return math.NaN()
	}
	return env.Values[e.V.ID][off]
}

// Offset returns the row-major position of the element, or an IndexError
// (also recorded in env) when an index is not a whole number within its
// dimension.
func (e Elem) Offset(env *Env) (int, error) {
	if off, ok := e.offset(env); ok {
		return off, nil
	}
	return 0, env.err
}

// offset returns the row-major position of the element; an invalid index
// is recorded in env and reported as false.
func (e Elem) offset(env *Env) (int, bool) {
	off := 0
	for k, ix := range e.Idx {
		x := ix.Eval(env)
		i := int(x)
		if float64(i) != x || i < 1 || i > e.V.Dims[k] { // NaN too
			env.fail(IndexError{Var: e.V.Name, Index: x, Dim: e.V.Dims[k]})
			return 0, false
		}
		off = off*e.V.Dims[k] + i - 1
	}
	return off, true
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
	writeIdx(b, e.Idx)
}

// writeIdx writes the indices idx in brackets, [i, j].
func writeIdx(b *strings.Builder, idx []Expr) {
	b.WriteByte('[')
	for i, ix := range idx {
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

// Row reads a vector: the whole of a vector variable (pi0, no indices) or
// a row of an array, all of its indices but the last given (trans[k],
// trans[z[t - 1]]). It is the argument of a vector parameter
// (stdlib.Param.Vector) and evaluates, with View, to a view of the
// variable's values, never a copy; it has no scalar value.
type Row struct {
	V   *Var
	Idx []Expr
}

// Len is the length of the vector: the variable's last dimension.
func (r Row) Len() int { return r.V.Dims[len(r.V.Dims)-1] }

// Eval records an error and returns NaN: a vector has no scalar value.
// The compiler never places a Row where a scalar is read.
func (r Row) Eval(env *Env) float64 {
	env.fail(fmt.Errorf("%s is a vector, read where a scalar is needed", r))
	return math.NaN()
}

// View returns the vector's values in env (a view: writing to it writes
// the variable), or an IndexError, also recorded in env, when an index is
// not a whole number within its dimension.
func (r Row) View(env *Env) ([]float64, error) {
	if x, ok := r.view(env); ok {
		return x, nil
	}
	return nil, env.err
}

// view is View reporting an invalid index, recorded in env, as false.
func (r Row) view(env *Env) ([]float64, bool) {
	off, ok := Elem{V: r.V, Idx: r.Idx}.offset(env)
	if !ok {
		return nil, false
	}
	n := r.Len()
	off *= n
	return env.Values[r.V.ID][off : off+n : off+n], true
}

// Offset returns the row-major position of the vector's first element,
// or an IndexError (also recorded in env).
func (r Row) Offset(env *Env) (int, error) {
	off, err := Elem{V: r.V, Idx: r.Idx}.Offset(env)
	return off * r.Len(), err
}

func (r Row) String() string { return str(r) }

func (r Row) write(b *strings.Builder) {
	b.WriteString(r.V.Name)
	if len(r.Idx) == 0 {
		return
	}
	writeIdx(b, r.Idx)
}

func (r Row) walk(f func(*Var)) {
	f(r.V)
	for _, ix := range r.Idx {
		ix.walk(f)
	}
}

// IndexError reports, at run time, an index of an array variable that is
// outside its dimension or not a whole number.
type IndexError struct {
	Var   string  // the array's name
	Index float64 // the index's value
	Dim   int     // the size of the dimension indexed
}

func (e IndexError) Error() string {
	if e.Index != math.Trunc(e.Index) || math.IsInf(e.Index, 0) {
		return fmt.Sprintf("index %v of %s is not a whole number", e.Index, e.Var)
	}
	return fmt.Sprintf("index %v of %s is outside 1..%d", e.Index, e.Var, e.Dim)
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
	if env != nil { // nil only for the compiler's own constant folding
		env.fail(fmt.Errorf("unknown operator %q", o.Op))
	}
	return math.NaN()
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
}

// Eval applies the function. Its arguments are held in env's scratch
// stack, not in the Call, so that chains with their own Envs may evaluate
// one graph at once.
func (c *Call) Eval(env *Env) float64 {
	base := len(env.stack)
	for _, a := range c.Args {
		x := a.Eval(env) // may push and pop above base
		env.stack = append(env.stack, x)
	}
	y := c.F.Eval(env.stack[base:])
	env.stack = env.stack[:base]
	return y
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

// ReciprocalOf reports whether x is 1 / y, and returns y: the form in
// which a precision enters as a variance.
func ReciprocalOf(x Expr) (Expr, bool) {
	o, ok := x.(Op)
	if !ok || o.Op != '/' {
		return nil, false
	}
	if n, ok := o.X.(Num); !ok || n.V != 1 {
		return nil, false
	}
	return o.Y, true
}

// AsReciprocal reports whether x is 1 / v for a scalar variable v, the form
// in which a precision enters as a variance.
func AsReciprocal(x Expr) (*Var, bool) {
	y, ok := ReciprocalOf(x)
	if !ok {
		return nil, false
	}
	return AsRef(y)
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
	case Row:
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

// mapRefs returns x with every variable reference r outside indices
// replaced by f(r); the rest of the expression is copied.
func mapRefs(x Expr, f func(Ref) Expr) Expr {
	switch x := x.(type) {
	case Ref:
		return f(x)
	case Neg:
		return Neg{mapRefs(x.X, f)}
	case Op:
		return Op{Op: x.Op, X: mapRefs(x.X, f), Y: mapRefs(x.Y, f)}
	case *Call:
		c := &Call{F: x.F, Args: make([]Expr, len(x.Args))}
		for i, a := range x.Args {
			c.Args[i] = mapRefs(a, f)
		}
		return c
	}
	return x
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
	case Row:
		for _, a := range x.Idx {
			inspect(a, f)
		}
	case *ArrayDef:
		for _, p := range x.Parts {
			for _, a := range p.Index {
				inspect(a, f)
			}
			inspect(p.X, f)
		}
	}
}
