package graph

import (
	"fmt"
	"math"
	"strings"

	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// ArrayDef is the definition of a deterministic array, the Expr of its
// Var: statements "m[k] = ..." (in loops, or at constant indices), each
// defining some of its elements, which together define every element
// exactly once. Eval computes every element into the environment and
// returns the first; walk visits what every statement reads.
type ArrayDef struct {
	V     *Var
	Parts []*DefPart
}

// DefPart is one statement of an ArrayDef: V[Index...] = X at every
// position of the plate Loops (once, without loops).
type DefPart struct {
	Pos   lang.Position
	Loops []Loop
	Index []Expr
	X     Expr
	// loopRecs gives each loop's index in progRec.loops, for Bind.
	loopRecs []int
}

// Eval computes every element of the array into env and returns the
// first. An index outside the array's dimensions is recorded in env and
// makes the value NaN.
func (a *ArrayDef) Eval(env *Env) float64 {
	vals := env.Values[a.V.ID]
	for _, p := range a.Parts {
		ok := p.each(env, func(off int) bool {
			vals[off] = p.X.Eval(env)
			return env.err == nil
		}, a.V)
		if !ok {
			return math.NaN()
		}
	}
	if len(vals) == 0 {
		return math.NaN()
	}
	return vals[0]
}

// each calls fn with the row-major offset of every element p defines, the
// loop indices set in env, until fn reports false. It reports false when
// it stopped early or an index was invalid (recorded in env).
func (p *DefPart) each(env *Env, fn func(off int) bool, v *Var) bool {
	el := Elem{V: v, Idx: p.Index}
	visit := func() bool {
		off, ok := el.offset(env)
		if !ok {
			return false
		}
		return fn(off)
	}
	if len(p.Loops) == 0 {
		return visit()
	}
	for _, l := range p.Loops {
		if l.Lo > l.Hi {
			return true // an empty range
		}
		env.Loop[l.Slot] = l.Lo
	}
	for {
		if !visit() {
			return false
		}
		if !nextLoops(env, p.Loops) {
			return true
		}
	}
}

// String prints the statements, separated by "; ".
func (a *ArrayDef) String() string { return str(a) }

func (a *ArrayDef) write(b *strings.Builder) {
	for i, p := range a.Parts {
		if i > 0 {
			b.WriteString("; ")
		}
		for _, l := range p.Loops {
			fmt.Fprintf(b, "for %s in %d:%d { ", l.Name, l.Lo, l.Hi)
		}
		b.WriteString(a.V.Name)
		b.WriteString("[")
		for k, ix := range p.Index {
			if k > 0 {
				b.WriteString(", ")
			}
			ix.write(b)
		}
		b.WriteString("] = ")
		p.X.write(b)
		b.WriteString(strings.Repeat(" }", len(p.Loops)))
	}
}

func (a *ArrayDef) walk(f func(*Var)) {
	for _, p := range a.Parts {
		for _, ix := range p.Index {
			ix.walk(f)
		}
		p.X.walk(f)
	}
}

// arraySupport is the support of every value an ArrayDef's statements
// give: the widest of theirs when one contains the others, else Real.
func arraySupport(a *ArrayDef) stdlib.Support {
	if len(a.Parts) == 0 {
		return stdlib.Real
	}
	s := support(a.Parts[0].X)
	for _, p := range a.Parts[1:] {
		t := support(p.X)
		switch {
		case t.Within(s):
		case s.Within(t):
			s = t
		default:
			return stdlib.Real
		}
	}
	return s
}

// defineElems compiles a statement "v[i, ...] = expr" (in loops or at
// constant indices) defining elements of the declared array v.
func (c *compiler) defineElems(v *Var, s *lang.Assign) {
	switch {
	case len(s.LHS.Indices) == 0:
		c.errs.Addf(s.OpPos, "deterministic definitions (=) inside loops define elements of a declared array, as m[k] = ... with param m : real[K]; %s is not indexed", v.Name)
		return
	case v.IsData:
		c.errs.Addf(s.OpPos, "%s is data and cannot be defined with =", v.Name)
		return
	case !v.Declared || v.Scalar():
		c.errs.Addf(s.OpPos, "%s is not a declared array; declare it, e.g. param %s : real[K], to define its elements with =", v.Name, v.Name)
		return
	case v.Def != nil || v.Role != Deterministic:
		c.errs.Addf(s.OpPos, "%s has a distribution (~) and cannot also be defined with =", v.Name)
		return
	case v.Kind != lang.KindReal && v.Kind != lang.KindPos && v.Kind != lang.KindUnit:
		c.errs.Addf(s.OpPos, "deterministic arrays are real, positive or unit; %s is declared %s", v.Name, v.Kind)
		return
	case len(s.LHS.Indices) != len(v.Dims):
		c.errs.Addf(s.LHS.Pos(), "%s has %d dimensions but is given %d indices", v.Name, len(v.Dims), len(s.LHS.Indices))
		return
	}
	if c.badLoops {
		return
	}
	p := &DefPart{Pos: s.OpPos, Loops: append([]Loop(nil), c.loops...)}
	ok := true
	for _, e := range s.LHS.Indices {
		ix := c.expr(e)
		if ix == nil {
			ok = false
			continue
		}
		ix.walk(func(w *Var) {
			if w.Role != Constant && ok {
				c.errs.Addf(e.Pos(), "the index %s of %s must be a loop index or a constant: an element's definition cannot move", ix, v.Name)
				ok = false
			}
		})
		p.Index = append(p.Index, ix)
	}
	x := c.expr(s.RHS)
	if x == nil || !ok {
		return
	}
	if w := arrayRef(x); w != nil {
		c.errs.Addf(s.RHS.Pos(), "%s is an array; index it to use one element", w.Name)
		return
	}
	p.X = x
	if c.rec != nil {
		p.loopRecs = append([]int(nil), c.loopDefs...)
	}
	a, _ := v.Expr.(*ArrayDef)
	if a == nil {
		a = &ArrayDef{V: v}
		v.Expr = a
		if c.rec != nil {
			c.rec.defines = append(c.rec.defines, v)
		}
	}
	a.Parts = append(a.Parts, p)
	if sup := arraySupport(a); !sup.Within(kindSupport(v.Kind)) {
		c.errs.Addf(s.RHS.Pos(), "%s is declared %s but its definition %s may take values that are %s; declare it real", v.Name, v.Kind, x, sup.Phrase())
		return
	}
	v.Support = arraySupport(a)
}

// markArrayDefs gives the deterministic role, before any statement is
// compiled, to the declared arrays whose elements "=" statements define
// (in loops or not), so that every reader knows them as deterministic.
func (c *compiler) markArrayDefs(stmts []lang.Stmt) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *lang.Assign:
			if s.Op != lang.Define || len(s.LHS.Indices) == 0 {
				continue
			}
			if v, ok := c.g.ByName[s.LHS.Name.Name]; ok && v.Declared && !v.IsData && !v.Scalar() && v.Role == Latent {
				v.Role = Deterministic
			}
		case *lang.ForBlock:
			c.markArrayDefs(s.Body)
		}
	}
}

// arrayDefCoverage checks that the statements defining each
// deterministic array define every element exactly once. It waits for
// the loop bounds and dimensions to be known (Bind).
func (c *compiler) arrayDefCoverage() {
	for _, v := range c.g.Vars {
		a, ok := v.Expr.(*ArrayDef)
		if !ok || v.Role != Deterministic {
			continue
		}
		known := true
		for _, d := range v.Dims {
			known = known && d >= 0
		}
		for _, p := range a.Parts {
			for _, l := range p.Loops {
				known = known && !l.unknown
			}
		}
		if !known {
			continue
		}
		env := c.staticEnv()
		count := make([]int, v.Len())
		for _, p := range a.Parts {
			if !p.each(env, func(off int) bool { count[off]++; return true }, v) {
				c.errs.Addf(p.Pos, "%s: %v", v.Name, env.err)
				env.err = nil
			}
		}
		missing, double := false, false // one element of each reported
		for off, n := range count {
			switch {
			case n == 0 && !missing:
				c.errs.Addf(v.Pos, "%s is never defined: the = statements must define every element of %s exactly once", elemName(v, off, 1), v.Name)
				missing = true
			case n > 1 && !double:
				c.errs.Addf(v.Pos, "%s is defined %d times: the = statements must define every element of %s exactly once", elemName(v, off, 1), n, v.Name)
				double = true
			}
		}
	}
}
