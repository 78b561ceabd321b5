package graph

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// syntaxVisits counts the syntax-tree nodes the compiler has visited
// (expressions compiled or evaluated): Program.Bind visits none, which
// its tests check.
var syntaxVisits atomic.Int64

// progRec is what CompileProgram records for Program.Bind: the
// expressions that give shapes, constants and loop bounds, compiled to
// Exprs of the unbound graph's variables, and the checks that waited for
// the bindings. Slices indexed by variable are indexed by Var.ID.
type progRec struct {
	loops   []loopRec  // every range of every for-block, in order
	indices []indexRec // constant indices into arrays of unknown shape
	defines []*Var     // deterministic variables in the order defined
	pending map[*Factor]pendingDef

	dims       [][]exprAt // the declared dimensions of an array
	direct     [][]int    // the dimension variable a declared dimension names, or -1
	consts     []exprAt   // a const declaration's value
	kinds      []exprAt   // the categories of categorical(K)
	isDim      []bool
	unknown    []bool // constants whose value needs the bindings
	anyUnknown bool
}

// exprAt is a compiled expression with the position of its source.
type exprAt struct {
	x   Expr
	pos lang.Position
}

// loopRec is one range of a for-block.
type loopRec struct {
	lo, hi lang.Expr // the source, compiled by finishRec
	x, y   Expr
	pos    lang.Position
}

// indexRec is an index of dimension k of v whose validity the program
// could not know (the dimension, or the categories, need bindings): the
// constant i, or the value of the categorical(K) variable cat, whose
// categories 1..K must all be valid. Bind checks it.
type indexRec struct {
	f    *Factor // the factor whose expression holds it (its checks stop at an error), or nil
	args bool    // in f's parameters, not its target's indices
	v    *Var
	k    int
	i    float64
	cat  *Var
	pos  lang.Position
}

// factorMeta is what Bind needs of a factor's source: positions for its
// messages, and which checks apply.
type factorMeta struct {
	loops   []int           // per enclosing loop, its index in progRec.loops
	lhsPos  lang.Position   // the target
	callPos lang.Position   // the distribution's call
	argPos  []lang.Position // each argument
	divPos  []lang.Position // the arguments of a divergence constructor
	vecArgs []int           // arguments made elements by vectorise
	indexed bool            // the target is indexed inside loops
}

// finishRec compiles the recorded source expressions of a program that
// compiled without errors.
func (c *compiler) finishRec() {
	r := c.rec
	n := len(c.g.Vars)
	r.dims, r.direct = make([][]exprAt, n), make([][]int, n)
	r.consts, r.kinds = make([]exprAt, n), make([]exprAt, n)
	r.isDim, r.unknown = make([]bool, n), make([]bool, n)
	r.pending = c.pending
	compile := func(e lang.Expr) exprAt {
		before := len(c.errs)
		x := c.expr(e) // valid: eval accepted it
		c.errs = c.errs[:before]
		return exprAt{x, e.Pos()}
	}
	for _, v := range c.g.Vars {
		r.isDim[v.ID] = c.isDim(v)
		if e, ok := c.consts[v]; ok {
			r.consts[v.ID] = compile(e)
			r.unknown[v.ID] = v.Value == nil
			r.anyUnknown = r.anyUnknown || v.Value == nil
		}
		if e := c.kindArg[v]; e != nil {
			r.kinds[v.ID] = compile(e)
		}
		for _, d := range c.dimExprs[v] {
			r.dims[v.ID] = append(r.dims[v.ID], compile(d))
			id := -1
			if w := c.directDim(d); w != nil {
				id = w.ID
			}
			r.direct[v.ID] = append(r.direct[v.ID], id)
		}
	}
	for i, l := range r.loops {
		a, b := compile(l.lo), compile(l.hi)
		r.loops[i] = loopRec{x: a.x, y: b.x, pos: a.pos}
	}
}

// directDim returns the dimension variable that the declared dimension d
// names directly (N in real[N, D]), or nil.
func (c *compiler) directDim(d lang.Expr) *Var {
	id, ok := unparen(d).(*lang.Ident)
	if !ok {
		return nil
	}
	if c.bound != nil {
		return nil // Bind uses progRec.direct
	}
	dv, ok := c.g.ByName[id.Name]
	if !ok || !c.isDim(dv) {
		return nil
	}
	return dv
}

// copier copies the unbound graph's expressions and factors onto the
// variables of a bound graph: a mapping of pointers, with no name
// resolved and nothing checked.
type copier struct {
	vars []*Var
	err  error
}

func (cp *copier) v(v *Var) *Var { return cp.vars[v.ID] }

func (cp *copier) expr(x Expr) Expr {
	switch x := x.(type) {
	case nil:
		return nil
	case Num, LoopIndex:
		return x
	case Ref:
		return Ref{cp.v(x.V)}
	case Elem:
		return Elem{V: cp.v(x.V), Idx: cp.exprs(x.Idx)}
	case Row:
		return Row{V: cp.v(x.V), Idx: cp.exprs(x.Idx)}
	case Neg:
		return Neg{cp.expr(x.X)}
	case Op:
		return Op{Op: x.Op, X: cp.expr(x.X), Y: cp.expr(x.Y)}
	case *Call:
		return &Call{F: x.F, Args: cp.exprs(x.Args)}
	case *ArrayDef:
		a := &ArrayDef{V: cp.v(x.V)}
		for _, p := range x.Parts {
			a.Parts = append(a.Parts, &DefPart{Pos: p.Pos, Loops: slices.Clone(p.Loops), Index: cp.exprs(p.Index), X: cp.expr(p.X), loopRecs: p.loopRecs})
		}
		return a
	}
	if cp.err == nil {
		cp.err = fmt.Errorf("graph: Bind cannot copy the expression %s (%T)", x, x)
	}
	return x
}

func (cp *copier) exprs(xs []Expr) []Expr {
	if xs == nil {
		return nil
	}
	out := make([]Expr, len(xs))
	for i, x := range xs {
		out[i] = cp.expr(x)
	}
	return out
}

// Bind binds the program to data and --set values and returns the
// complete graph. The error, if not nil, is a lang.ErrorList holding every
// problem of the binding: unbound dimensions, shapes that disagree,
// invalid data values, clamped values outside supports, indices outside
// the bound dimensions.
//
// Bind does not compile the model again: it copies the program's graph
// onto new variables (no name is resolved, no node type looked up, no
// expression compiled from the syntax tree), evaluates the shapes,
// constants and loop bounds with the bindings, binds the values, and makes
// the checks that waited for them: data values against supports, shapes
// against data, constant indices and loops against the bound dimensions,
// the supports of parameters that read constants of dimensions, clamped
// values against the factors that read them.
func (p *Program) Bind(b Bindings) (*Graph, error) {
	opts := p.opts
	opts.Data, opts.Set, opts.Partial = b.Data, b.Set, b.Partial
	r, t := p.rec, p.Unbound
	c := &compiler{
		g:           &Graph{File: t.File, ByName: make(map[string]*Var, len(t.Vars)), maxLoops: t.maxLoops},
		opts:        opts,
		lib:         p.lib,
		evaluing:    map[*Var]bool{},
		attempted:   map[*Var]bool{},
		failed:      map[*Var]bool{},
		isDimV:      map[*Var]bool{},
		indexedDefs: map[*Var]bool{},
		pending:     map[*Factor]pendingDef{},
		bound:       r,
	}
	g := c.g
	cp := &copier{vars: make([]*Var, len(t.Vars))}
	for i, tv := range t.Vars {
		v := *tv
		cp.vars[i] = &v
	}
	for i, tv := range t.Vars {
		v := cp.vars[i]
		v.Def, v.Defs = nil, nil
		v.Expr = cp.expr(tv.Expr)
		switch {
		case r.isDim[i]:
			v.Value, v.Data = nil, nil
			c.isDimV[v] = true
		case v.IsData:
			v.Value, v.Data, v.Role = nil, nil, Observed
		case r.unknown[i]:
			v.Value, v.Support = nil, kindSupport(lang.KindReal)
		}
		if r.dims[i] != nil {
			v.Dims = nil
		}
		if r.kinds[i].x != nil {
			v.Categories = 0
		}
		c.attempted[v] = true // "no distribution" was checked
		g.ByName[v.Name] = v
	}
	g.Vars = cp.vars
	for _, d := range t.Dims {
		g.Dims = append(g.Dims, cp.v(d))
	}
	fm := map[*Factor]*Factor{}
	factor := func(tf *Factor) *Factor {
		if tf == nil {
			return nil
		}
		if f, ok := fm[tf]; ok {
			return f
		}
		f := *tf
		f.Target = cp.v(tf.Target)
		f.Args, f.Index = cp.exprs(tf.Args), cp.exprs(tf.Index)
		f.Loops = slices.Clone(tf.Loops)
		if d := tf.Divergence; d != nil {
			f.Divergence = &DivergenceExpr{Type: d.Type, Args: cp.exprs(d.Args)}
		}
		if tf.DimLoop != nil {
			l := *tf.DimLoop
			f.DimLoop = &l
		}
		f.Omitted = false
		fm[tf] = &f
		if pd, ok := r.pending[tf]; ok && (tf.meta == nil || !tf.meta.indexed) {
			c.pending[&f] = pd // not a matter of shapes: bindFactor makes the others
		}
		return &f
	}
	var all []*Factor // every factor, in the order of their targets
	for i, tv := range t.Vars {
		v := cp.vars[i]
		v.Def = factor(tv.Def)
		for _, tf := range tv.Defs {
			f := factor(tf)
			v.Defs = append(v.Defs, f)
			all = append(all, f)
		}
		c.indexedDefs[v] = len(v.Defs) > 1
	}
	for _, f := range t.Factors {
		g.Factors = append(g.Factors, factor(f))
	}
	for _, f := range t.Trees {
		g.Trees = append(g.Trees, factor(f))
	}
	g.PYDT = factor(t.PYDT)
	for _, v := range t.Deterministic {
		g.Deterministic = append(g.Deterministic, cp.v(v))
	}
	if cp.err != nil {
		return nil, cp.err
	}

	c.bindSets()
	c.bindData()
	c.bindShapes()
	c.sizes()
	c.bindSupports()
	c.bindFactors(all)
	c.arrayDefCoverage()
	c.coverage()
	c.roles()
	g.readers = g.index()
	if len(c.errs) == 0 {
		c.checkClamped()
	}
	c.errs.Sort()
	c.errs.RemoveDuplicates()
	if err := c.errs.Err(); err != nil {
		return g, err
	}
	return g, nil
}

// bindEval evaluates an expression of numbers, dimensions and constants
// recorded by CompileProgram, as eval evaluates its source. It reports
// whether the value is known.
func (c *compiler) bindEval(x Expr) (float64, bool) {
	switch x := x.(type) {
	case Num:
		return x.V, true
	case Neg:
		y, ok := c.bindEval(x.X)
		return -y, ok
	case Op:
		a, okA := c.bindEval(x.X)
		b, okB := c.bindEval(x.Y)
		if !okA || !okB {
			return 0, false
		}
		return Op{Op: x.Op, X: Num{a}, Y: Num{b}}.Eval(nil), true
	case Ref:
		v := c.g.Vars[x.V.ID]
		if c.bound.isDim[v.ID] {
			if v.Value == nil {
				return 0, false
			}
			return v.Value[0], true
		}
		return c.bindConst(v)
	case *Call:
		args := make([]float64, len(x.Args))
		for i, a := range x.Args {
			y, ok := c.bindEval(a)
			if !ok {
				return 0, false
			}
			args[i] = y
		}
		return x.F.Eval(args), true
	}
	return 0, false
}

// bindConst evaluates a constant, as constValue does.
func (c *compiler) bindConst(v *Var) (float64, bool) {
	if v.Value != nil {
		return v.Value[0], true
	}
	e := c.bound.consts[v.ID]
	if e.x == nil || c.failed[v] || c.evaluing[v] {
		return 0, false // cycles were reported by CompileProgram
	}
	c.evaluing[v] = true
	x, ok := c.bindEval(e.x)
	c.evaluing[v] = false
	return c.settleConst(v, e.pos, x, ok)
}

// bindShapes is shapes with the recorded expressions.
func (c *compiler) bindShapes() {
	r := c.bound
	for _, v := range c.g.Dims {
		if v.Value == nil && !c.opts.Partial {
			c.errs.Addf(v.Pos, "dimension %s is not bound: give data whose shape fixes it (--data NAME=FILE) or --set %s=VALUE", v.Name, v.Name)
		}
	}
	for _, v := range c.g.Vars {
		if r.unknown[v.ID] {
			c.bindConst(v)
		}
	}
	for _, v := range c.g.Vars {
		if arg := r.kinds[v.ID]; arg.x != nil {
			if x, ok := c.bindEval(arg.x); ok && (x < 1 || x != math.Trunc(x) || x > MaxValues) {
				c.errs.Addf(arg.pos, "the number of categories of %s is %v; it must be a whole number from 1 to %d", v.Name, x, MaxValues)
			} else if ok && v.Kind == lang.KindCategorical {
				v.Categories = int(x)
			}
		}
		exprs := r.dims[v.ID]
		if len(exprs) == 0 {
			continue
		}
		v.Dims = make([]int, len(exprs))
		for k, e := range exprs {
			x, ok := c.bindEval(e.x)
			switch {
			case !ok:
				v.Dims[k] = -1
			case x < 1 || x != math.Trunc(x):
				c.errs.Addf(e.pos, "dimension %d of %s is %v; it must be a positive whole number", k+1, v.Name, x)
				v.Dims[k] = -1
			case x > MaxValues:
				c.errs.Addf(e.pos, "dimension %d of %s is %v; it must be at most %d (2^25)", k+1, v.Name, x, MaxValues)
				v.Dims[k] = -1
			default:
				v.Dims[k] = int(x)
			}
		}
		c.dataShape(v)
	}
}

// bindSupports recomputes the supports of deterministic variables, in the
// order they were defined, when a constant they may read was unknown to
// the program.
func (c *compiler) bindSupports() {
	if !c.bound.anyUnknown {
		return
	}
	for _, v := range c.bound.defines {
		c.g.Vars[v.ID].Support = kindSupport(lang.KindReal)
	}
	for _, v := range c.bound.defines {
		w := c.g.Vars[v.ID]
		w.Support = support(w.Expr)
		if a, ok := w.Expr.(*ArrayDef); ok {
			w.Support = arraySupport(a)
		}
	}
}

// deferred reports whether x reads, directly or through deterministic
// variables, a constant whose value the program did not know: its support
// was checked only by Bind.
func (c *compiler) deferred(xs ...Expr) bool {
	if !c.bound.anyUnknown {
		return false
	}
	return readsVia(func(v *Var) bool { return c.bound.unknown[v.ID] }, xs...)
}

// bindFactors binds the loops, shapes and vector lengths of the factors
// and makes their checks that waited for the bindings.
func (c *compiler) bindFactors(all []*Factor) {
	r := c.bound
	type bounds struct {
		lo, hi  int
		unknown bool
	}
	loops := make([]bounds, len(r.loops))
	for i, l := range r.loops {
		lo, okLo := c.bindEval(l.x)
		hi, okHi := c.bindEval(l.y)
		if okLo && okHi {
			switch {
			case lo != math.Trunc(lo) || hi != math.Trunc(hi):
				c.errs.Addf(l.pos, "loop range %v:%v must have whole-number bounds", lo, hi)
				okLo = false
			case math.Abs(lo) > MaxValues || math.Abs(hi) > MaxValues:
				c.errs.Addf(l.pos, "loop range %v:%v is too large: bounds must lie within ±%d (2^25)", lo, hi, MaxValues)
				okLo = false
			}
		}
		loops[i] = bounds{int(lo), int(hi), false}
		if !okLo || !okHi {
			loops[i] = bounds{1, -1, true}
		}
	}
	for _, v := range c.g.Vars {
		if a, ok := v.Expr.(*ArrayDef); ok {
			for _, p := range a.Parts {
				for k := range p.Loops {
					b := loops[p.loopRecs[k]]
					p.Loops[k].Lo, p.Loops[k].Hi, p.Loops[k].unknown = b.lo, b.hi, b.unknown
				}
			}
		}
	}
	// Constant indices against the bound dimensions.
	// bad holds the factors whose checks stop at an invalid index, by
	// their record: true in the parameters (after the target's
	// coverage), false in the target's indices (before it).
	bad := map[*factorMeta]bool{}
	for _, ix := range r.indices {
		v := c.g.Vars[ix.v.ID]
		dim := v.Dims[ix.k]
		switch {
		case ix.cat != nil:
			w := c.g.Vars[ix.cat.ID]
			if w.Categories == 0 || dim < 0 || w.Categories <= dim {
				continue
			}
			c.errs.Addf(ix.pos, "%s takes the categories 1..%d but indexes dimension %d of %s, which has %d", w.Name, w.Categories, ix.k+1, v.Name, dim)
		case dim >= 0 && ix.i > float64(dim):
			c.errs.Addf(ix.pos, "index %v of %s is outside 1..%d", ix.i, v.Name, dim)
		default:
			continue
		}
		if ix.f != nil {
			inArgs, seen := bad[ix.f.meta]
			bad[ix.f.meta] = ix.args && (!seen || inArgs)
		}
	}
	for _, f := range all {
		m := f.meta
		if m == nil {
			continue
		}
		v := f.Target
		for k := range f.Loops {
			l := &f.Loops[k]
			if k < len(m.loops) {
				b := loops[m.loops[k]]
				l.Lo, l.Hi, l.unknown = b.lo, b.hi, b.unknown
			} else { // vectorised: the target's dimension
				l.Lo, l.Hi = 1, v.Dims[k]
			}
		}
		if f.VecLen != 0 {
			f.VecLen = v.Dims[len(v.Dims)-1]
		}
		if f.DimLoop != nil {
			f.DimLoop.Hi = v.Dims[1]
		}
		if inArgs, ok := bad[m]; ok {
			// As the one-pass compiler leaves a statement whose
			// expressions have an invalid index: without parameters, its
			// other checks not made (but the coverage of its target when
			// the index is in a parameter).
			f.Args, f.Elementwise = nil, false
			if inArgs && !f.IsPYDT() {
				c.bindCoverage(f)
			}
			continue
		}
		if f.IsPYDT() {
			c.bindPYDT(f)
			continue
		}
		c.bindFactor(f)
	}
}

// bindFactor makes the checks of a scalar or vector factor that waited for
// the bindings, as assign makes them.
func (c *compiler) bindFactor(f *Factor) {
	m, v := f.meta, f.Target
	c.bindCoverage(f)
	first := -1
	for _, i := range m.vecArgs {
		el := f.Args[i].(Elem)
		if !sameShape(el.V.Dims, v.Dims) {
			c.errs.Addf(m.callPos, "%s has shape [%s] but %s has shape [%s]", el.V.Name, dimList(el.V), v.Name, dimList(v))
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		w := f.Args[first].(Elem).V
		c.errs.Addf(m.argPos[first], "%s is an array: index it (%s[...]), or pass it alone as the argument of a vectorised statement", w.Name, w.Name)
		return
	}
	vt, isVec := f.Vector()
	if isVec && !c.vectorLengths(f, m.argPos) {
		return
	}
	if c.deferred(f.Args...) {
		c.checkArgs(f, f.Type.Params(), m.argPos)
	}
	var sup stdlib.Support
	if s, ok := f.Scalar(); ok {
		sup = s.Support()
	} else if isVec {
		sup = vt.Support()
	}
	if v.Data != nil && !v.Support.Within(sup) {
		c.checkValues(v, sup, f.TypeName())
	}
}

// bindCoverage decides whether the factor f, whose target is indexed in
// loops, covers it elementwise; a statement that does not is pending (see
// coverage).
func (c *compiler) bindCoverage(f *Factor) {
	m, v := f.meta, f.Target
	if !m.indexed {
		return
	}
	f.Elementwise = c.coversAll(v, f)
	if !f.Elementwise && c.coverageKnown(v, f) {
		c.pending[f] = pendingDef{m.lhsPos, fmt.Sprintf("the loops must cover every element of %s exactly once, each index a loop variable over 1:%s", v.Name, dimList(v))}
	}
}

// bindPYDT makes the checks of a PYDT factor that waited for the bindings.
func (c *compiler) bindPYDT(f *Factor) {
	m, v := f.meta, f.Target
	tree := f.Type
	if d := f.Divergence; d != nil && c.deferred(d.Args...) {
		if m.divPos != nil {
			c.checkArgs(&Factor{Pos: f.Pos, Target: v, Type: namedType(d.Type.Name), Args: d.Args}, d.Type.Params, m.divPos)
		} else {
			c.checkArgs(&Factor{Pos: f.Pos, Target: v, Type: tree, Args: d.Args}, d.Type.Params, []lang.Position{m.argPos[PYDTDivergence]})
		}
	}
	if f.DimLoop != nil {
		D := v.Dims[1]
		ok := true
		inspect(f.Args[PYDTVariance], func(e Expr) {
			el, isElem := e.(Elem)
			if !isElem || !ok || len(el.Idx) != 1 {
				return
			}
			if li, isLoop := el.Idx[0].(LoopIndex); !isLoop || li.Name != f.DimLoop.Name {
				return
			}
			if D >= 0 && el.V.Dims[0] >= 0 && el.V.Dims[0] != D {
				c.errs.Addf(m.argPos[PYDTVariance], "the PYDT variance reads %s, a vector of length %d: a per-dimension variance must have length D = %d, the number of columns of %s",
					el.V.Name, el.V.Dims[0], D, v.Name)
				ok = false
			}
		})
		if !ok {
			return
		}
	}
	args := slices.Clone(f.Args)
	args[PYDTDivergence] = nil
	if c.deferred(args...) {
		tmp := *f
		tmp.Args = args
		c.checkArgs(&tmp, tree.Params(), m.argPos)
	}
	if v.Data != nil {
		c.checkValues(v, stdlib.Real, "PYDT")
	}
}
