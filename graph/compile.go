package graph

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// Options binds a model to values at compile time.
type Options struct {
	// Data binds data variables to tables read from files.
	Data map[string]*dataset.Matrix
	// Set clamps scalars and binds dimensions, as with --set NAME=VALUE.
	Set map[string]float64
	// Partial lets dimensions stay unbound and data variables unobserved,
	// for checking a model without data. Unbound shapes are then -1 and
	// shape checks that need them are skipped.
	Partial bool
	// NeedPYDT makes a model without a PYDT statement an error, reported
	// at its first stochastic statement: the pydtlang commands fit,
	// sample and score the tree of a PYDT. Without it such a model
	// compiles, as the fragments of the language reference do.
	NeedPYDT bool
	// Library holds the node types, functions and divergence
	// constructors the model may use; nil means stdlib.Default(). The
	// compiler resolves names against it alone.
	Library *stdlib.Library
}

// SetPos returns the position reported for errors about --set NAME=VALUE.
func SetPos(name string) lang.Position { return lang.Position{Filename: "--set " + name} }

// DataPos returns the position reported for errors about a --data binding.
func DataPos(name string) lang.Position { return lang.Position{Filename: "--data " + name} }

// compiler holds the state of one compilation.
type compiler struct {
	g    *Graph
	opts Options
	lib  *stdlib.Library
	errs lang.ErrorList

	consts   map[*Var]lang.Expr // unevaluated const definitions
	dimExprs map[*Var][]lang.Expr
	kindArg  map[*Var]lang.Expr
	evaluing map[*Var]bool
	loops    []Loop // enclosing loops while compiling a for-block
	// attempted marks variables whose definition was compiled, even if
	// it failed, so that no second error says they have none.
	attempted map[*Var]bool
	// failed marks constants whose definition was reported as invalid, so
	// that their uses are not reported again.
	failed map[*Var]bool
	isDimV map[*Var]bool // the dimension variables
	// indexedDefs records, per variable with a definition, whether every
	// statement defining it indexes it; pending holds the coverage errors
	// of indexed statements, reported unless further statements define
	// the rest (coverage).
	indexedDefs map[*Var]bool
	pending     map[*Factor]pendingDef
	sorted      []string // every variable name, sorted; see names
	hints       int      // "did you mean" hints computed so far
	depth       int      // nesting of expr and eval calls
	// tooDeep is set once an expression too deep to compile is reported.
	tooDeep bool
	// bound, when not nil, is the record of the program that Bind binds.
	bound *progRec
	// rec, when not nil, records what Program.Bind needs to bind the
	// graph without compiling it again (CompileProgram).
	rec *progRec
	// loopDefs parallels loops: each loop's index in rec.loops.
	loopDefs []int
	// cur is the factor whose expressions are being compiled, and inArgs
	// is set while its parameters are (for rec's index checks).
	cur    *Factor
	inArgs bool
	// fused lists the vector functions (softmax) that the last call of
	// args found at vector parameters, for the caller to fuse into the
	// node type (stdlib.Fuser).
	fused []fusedArg
	// badLoops is set inside loops whose index names were reported, so
	// that the statements in them are not also reported for not covering
	// their targets.
	badLoops bool
}

// maxHints bounds the "did you mean" hints one compilation computes: each
// compares a name with every name of the model, so a file with very many
// unknown names would otherwise take time quadratic in its size.
const maxHints = 100

// maxExprDepth bounds the nesting of the expressions the compiler recurses
// over. A tree that Parse returns nests at most one level per token of its
// statement, so it never comes near.
const maxExprDepth = lang.MaxStatementTokens

// Compile turns a parsed file into a factor graph with opts' bindings
// (Data, Set, Partial) in one step: a model that CompileProgram accepts
// gives the graph that its Bind gives with the same bindings. The error,
// if not nil, is a lang.ErrorList holding every problem found, those that
// need data and those that do not, at once. To bind one model to several
// data sets, use CompileProgram and Program.Bind.
//
// Compile is CompileProgram followed by Bind, so that the graph of every
// caller is Bind's; a model with diagnostics that need no data is compiled
// in one pass with the bindings instead, to report those that do as well.
func Compile(f *lang.File, opts Options) (*Graph, error) {
	p, err := CompileProgram(f, Options{NeedPYDT: opts.NeedPYDT, Library: opts.Library})
	if err != nil {
		g, _, err := compileOnce(f, opts, false)
		return g, err
	}
	return p.Bind(Bindings{Data: opts.Data, Set: opts.Set, Partial: opts.Partial})
}

// compileOnce compiles f with opts' bindings in one pass over the syntax
// tree. With record, it also returns what Program.Bind needs.
func compileOnce(f *lang.File, opts Options, record bool) (*Graph, *progRec, error) {
	c := &compiler{
		g:           &Graph{File: f, ByName: map[string]*Var{}},
		opts:        opts,
		lib:         opts.Library,
		consts:      map[*Var]lang.Expr{},
		dimExprs:    map[*Var][]lang.Expr{},
		kindArg:     map[*Var]lang.Expr{},
		evaluing:    map[*Var]bool{},
		attempted:   map[*Var]bool{},
		failed:      map[*Var]bool{},
		isDimV:      map[*Var]bool{},
		indexedDefs: map[*Var]bool{},
		pending:     map[*Factor]pendingDef{},
	}
	if c.lib == nil {
		c.lib = stdlib.Default()
	}
	if record {
		c.rec = &progRec{}
	}
	c.declare(f.Stmts)
	c.implicit(f.Stmts)
	c.bindSets()
	c.bindData()
	c.shapes()
	c.sizes()
	c.markArrayDefs(f.Stmts)
	c.defines(f.Stmts)
	c.statements(f.Stmts)
	c.arrayDefCoverage()
	c.coverage()
	c.roles()
	c.order()
	c.g.readers = c.g.index()
	c.stochastic(f)
	if len(c.errs) == 0 && c.opts.NeedPYDT {
		c.needPYDT(f)
	}
	if len(c.errs) == 0 {
		c.checkClamped()
	}
	c.errs.Sort()
	c.errs.RemoveDuplicates()
	if err := c.errs.Err(); err != nil {
		return c.g, nil, err
	}
	if c.rec != nil {
		c.finishRec()
	}
	return c.g, c.rec, nil
}

func (c *compiler) newVar(name *lang.Ident, kind lang.Kind) *Var {
	if prev, dup := c.g.ByName[name.Name]; dup {
		c.errs.Addf(name.Pos(), "%s redeclared (first declared at %s)", name.Name, shortPos(prev.Pos))
		return nil
	}
	v := &Var{ID: len(c.g.Vars), Name: name.Name, Pos: name.Pos(), Kind: kind, Support: kindSupport(kind)}
	c.g.Vars = append(c.g.Vars, v)
	c.g.ByName[v.Name] = v
	return v
}

func shortPos(p lang.Position) string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// kindSupport maps a declared kind to its support.
func kindSupport(k lang.Kind) stdlib.Support {
	switch k {
	case lang.KindBinary:
		return stdlib.Binary
	case lang.KindCount, lang.KindCategorical, lang.KindInt:
		return stdlib.Count
	case lang.KindPos:
		return stdlib.Positive
	case lang.KindUnit:
		return stdlib.Unit
	}
	return stdlib.Real
}

// declare registers dim, const, data and param declarations anywhere in
// the file, so that statements may refer to names declared later.
func (c *compiler) declare(stmts []lang.Stmt) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *lang.DimDecl:
			for _, n := range s.Names {
				if v := c.newVar(n, lang.KindInt); v != nil {
					v.Role = Constant
					v.Support = stdlib.Count
					c.g.Dims = append(c.g.Dims, v)
					c.isDimV[v] = true
				}
			}
		case *lang.ConstDecl:
			if v := c.newVar(s.Name, lang.KindReal); v != nil {
				v.Role = Constant
				c.consts[v] = s.Value
			}
		case *lang.DataDecl:
			if v := c.newVar(s.Name, s.Type.Kind); v != nil {
				v.Declared, v.IsData = true, true
				v.Role = Observed
				c.dimExprs[v] = s.Type.Dims
				c.kindArg[v] = s.Type.Arg
			}
		case *lang.ParamDecl:
			if v := c.newVar(s.Name, s.Type.Kind); v != nil {
				v.Declared = true
				v.Role = Latent
				c.dimExprs[v] = s.Type.Dims
				c.kindArg[v] = s.Type.Arg
			}
		case *lang.ForBlock:
			c.declare(s.Body)
		}
	}
}

// implicit creates the scalar variables introduced by "x ~ ..." and
// "x = ..." without a declaration.
func (c *compiler) implicit(stmts []lang.Stmt) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *lang.Assign:
			if _, ok := c.g.ByName[s.LHS.Name.Name]; ok || len(s.LHS.Indices) > 0 {
				continue
			}
			if v := c.newVar(s.LHS.Name, lang.KindReal); v != nil {
				v.Role = Latent
				if s.Op == lang.Define {
					v.Role = Deterministic
				}
				// Know the support before any expression reads v.
				if call, ok := unparen(s.RHS).(*lang.Call); ok && s.Op == lang.Sample {
					if d, ok := c.lib.Scalar(call.Func.Name); ok {
						v.Support = d.Support()
						v.Kind = supportKind(d.Support())
					}
				}
			}
		case *lang.ForBlock:
			c.implicit(s.Body)
		}
	}
}

// names returns every variable name, sorted, for "did you mean" hints.
// The list is made once, after implicit has declared every name.
func (c *compiler) names() []string {
	if c.sorted == nil {
		c.sorted = slices.Sorted(maps.Keys(c.g.ByName))
	}
	return c.sorted
}

// suggest returns lang.Suggest(name, cands), or "" once maxHints hints
// have been computed.
func (c *compiler) suggest(name string, cands []string) string {
	if c.hints >= maxHints {
		return ""
	}
	c.hints++
	return lang.Suggest(name, cands)
}

// bindSets applies --set values to dimensions and scalars.
func (c *compiler) bindSets() {
	for _, name := range slices.Sorted(maps.Keys(c.opts.Set)) {
		x := c.opts.Set[name]
		v, ok := c.g.ByName[name]
		if !ok {
			e := c.errs.Addf(SetPos(name), "the model has no variable %s", name)
			e.Hint = c.suggest(name, c.names())
			continue
		}
		switch {
		case c.isDim(v):
			if x < 1 || x != math.Trunc(x) || x > MaxValues {
				c.errs.Addf(SetPos(name), "value %v: a dimension must be a whole number from 1 to %d", x, MaxValues)
				continue
			}
			v.Value = []float64{x}
		case v.Role == Constant:
			c.errs.Addf(SetPos(name), "%s is a constant of the model (declared at %s); edit the model to change it", name, shortPos(v.Pos))
		case v.Role == Deterministic:
			c.errs.Addf(SetPos(name), "%s is deterministic (defined with =) and cannot be clamped", name)
		case c.rank(v) > 0:
			c.errs.Addf(SetPos(name), "%s is an array; bind it with --data %s=FILE", name, name)
		default:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				c.errs.Addf(SetPos(name), "value %v: the value must be finite", x)
				continue
			}
			if v.IsData && !v.Support.Contains(x) {
				c.errs.Addf(SetPos(name), "value %v: %s is declared %s, so its value must be %s", x, name, v.Kind, v.Support.Phrase())
				continue
			}
			v.Value = []float64{x}
			if !v.IsData {
				v.Role = Clamped
			}
		}
	}
}

func (c *compiler) isDim(v *Var) bool { return c.isDimV[v] }

// rank is the number of dimensions declared for v (0 for a scalar).
func (c *compiler) rank(v *Var) int {
	if c.bound != nil {
		return len(c.bound.dims[v.ID])
	}
	return len(c.dimExprs[v])
}

// declDim returns the dimension variable that dimension k of v's
// declaration names directly (N in real[N, D]), or nil.
func (c *compiler) declDim(v *Var, k int) *Var {
	if c.bound != nil {
		if id := c.bound.direct[v.ID][k]; id >= 0 {
			return c.g.Vars[id]
		}
		return nil
	}
	return c.directDim(c.dimExprs[v][k])
}

// bindData binds data variables to their tables, and dimensions to the
// tables' shapes.
func (c *compiler) bindData() {
	for _, name := range slices.Sorted(maps.Keys(c.opts.Data)) {
		m := c.opts.Data[name]
		v, ok := c.g.ByName[name]
		if !ok || !v.IsData {
			var datas []string
			for _, w := range c.g.Vars {
				if w.IsData {
					datas = append(datas, w.Name)
				}
			}
			hint := c.suggest(name, datas)
			switch {
			case hint != "":
				e := c.errs.Addf(DataPos(name), "the model declares no data variable %s", name)
				e.Hint = hint
			case len(datas) > 0:
				c.errs.Addf(DataPos(name), "the model declares no data variable %s; its data: %s", name, strings.Join(datas, ", "))
			default:
				c.errs.Addf(DataPos(name), "the model declares no data variable %s (it has no data statement)", name)
			}
			continue
		}
		rank := c.rank(v)
		shape := []int{m.Rows, m.Cols}
		switch rank {
		case 0:
			if m.Rows*m.Cols != 1 {
				c.errs.Addf(DataPos(name), "%s is a scalar but %s holds %d×%d values", name, m.Source, m.Rows, m.Cols)
				continue
			}
			shape = nil
		case 1:
			if m.Cols != 1 {
				c.errs.Addf(DataPos(name), "%s is a vector but %s has %d columns", name, m.Source, m.Cols)
				continue
			}
			shape = []int{m.Rows}
		case 2:
		default:
			c.errs.Addf(DataPos(name), "data files hold matrices; %s has %d dimensions", name, rank)
			continue
		}
		v.Data = m
		v.Value = m.Data
		// Bind dimensions named directly in the declaration.
		for k := range rank {
			dv := c.declDim(v, k)
			if dv == nil {
				continue
			}
			if dv.Value == nil {
				dv.Value = []float64{float64(shape[k])}
				dv.Data = m
				continue
			}
			if int(dv.Value[0]) != shape[k] {
				from := "--set"
				if dv.Data != nil {
					from = dv.Data.Source
				}
				c.errs.Addf(DataPos(name), "dimension %s is %d in %s but %d from %s", dv.Name, shape[k], m.Source, int(dv.Value[0]), from)
			}
		}
	}
}

func unparen(e lang.Expr) lang.Expr {
	for {
		p, ok := e.(*lang.Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

// shapes evaluates constants and the dimensions of declared arrays.
func (c *compiler) shapes() {
	for _, v := range c.g.Dims {
		if v.Value == nil && !c.opts.Partial {
			c.errs.Addf(v.Pos, "dimension %s is not bound: give data whose shape fixes it (--data NAME=FILE) or --set %s=VALUE", v.Name, v.Name)
		}
	}
	for _, v := range c.g.Vars {
		if _, ok := c.consts[v]; ok {
			c.constValue(v)
		}
	}
	for _, v := range c.g.Vars {
		if arg := c.kindArg[v]; arg != nil {
			if x, ok := c.eval(arg); ok && (x < 1 || x != math.Trunc(x) || x > MaxValues) {
				c.errs.Addf(arg.Pos(), "the number of categories of %s is %v; it must be a whole number from 1 to %d", v.Name, x, MaxValues)
			} else if ok && v.Kind == lang.KindCategorical {
				v.Categories = int(x)
			}
		}
		exprs := c.dimExprs[v]
		if len(exprs) == 0 {
			continue
		}
		v.Dims = make([]int, len(exprs))
		for k, e := range exprs {
			x, ok := c.eval(e)
			switch {
			case !ok:
				v.Dims[k] = -1
			case x < 1 || x != math.Trunc(x):
				c.errs.Addf(e.Pos(), "dimension %d of %s is %v; it must be a positive whole number", k+1, v.Name, x)
				v.Dims[k] = -1
			case x > MaxValues:
				// Caught here, with a position, before int(x) overflows.
				c.errs.Addf(e.Pos(), "dimension %d of %s is %v; it must be at most %d (2^25)", k+1, v.Name, x, MaxValues)
				v.Dims[k] = -1
			default:
				v.Dims[k] = int(x)
			}
		}
		c.dataShape(v)
	}
}

// dataShape checks the shape and values of the data bound to the array v
// against its declaration.
func (c *compiler) dataShape(v *Var) {
	if v.Data != nil && !c.opts.Partial {
		want := []int{v.Data.Rows, v.Data.Cols}[:len(v.Dims)]
		if len(v.Dims) == 1 {
			want = []int{v.Data.Rows}
		}
		for k := range v.Dims {
			if v.Dims[k] >= 0 && v.Dims[k] != want[k] {
				c.errs.Addf(DataPos(v.Name), "%s is declared with dimension %d = %d but %s has %d", v.Name, k+1, v.Dims[k], v.Data.Source, want[k])
			}
		}
	}
	if v.Data != nil {
		c.checkValues(v, v.Support, fmt.Sprintf("declared %s", v.Kind))
		if v.Categories > 0 {
			c.checkCategories(v)
		}
	}
}

// constValue evaluates a const declaration, guarding against cycles.
func (c *compiler) constValue(v *Var) (float64, bool) {
	if v.Value != nil {
		return v.Value[0], true
	}
	e, ok := c.consts[v]
	if !ok || c.failed[v] {
		return 0, false
	}
	if c.evaluing[v] {
		c.errs.Addf(v.Pos, "constant %s is defined in terms of itself", v.Name)
		c.failed[v] = true
		return 0, false
	}
	c.evaluing[v] = true
	x, ok := c.eval(e)
	c.evaluing[v] = false
	return c.settleConst(v, e.Pos(), x, ok)
}

// settleConst records the value x of constant v (evaluated at pos, ok if
// known), or marks v failed when x is unknown or not finite.
func (c *compiler) settleConst(v *Var, pos lang.Position, x float64, ok bool) (float64, bool) {
	if ok && (math.IsNaN(x) || math.IsInf(x, 0)) {
		c.errs.Addf(pos, "constant %s is %v; constants must be finite", v.Name, x)
		ok = false
	}
	if !ok {
		// Reported already (or unknown for want of a dimension, which
		// stays unknown): uses of v add no errors of their own.
		c.failed[v] = true
		return 0, false
	}
	v.Value = []float64{x}
	v.Support = support(Num{x})
	return x, true
}

// eval evaluates a compile-time expression of numbers, dimensions and
// constants. It reports whether the value is known; errors are recorded.
func (c *compiler) eval(e lang.Expr) (float64, bool) {
	if !c.enter(e) {
		return 0, false
	}
	defer c.leave()
	switch e := e.(type) {
	case *lang.Number:
		x, err := e.Float()
		if err != nil {
			c.errs.Addf(e.Pos(), "%v", err)
			return 0, false
		}
		return x, true
	case *lang.Paren:
		return c.eval(e.X)
	case *lang.Unary:
		x, ok := c.eval(e.X)
		return -x, ok
	case *lang.Binary:
		x, okx := c.eval(e.X)
		y, oky := c.eval(e.Y)
		if !okx || !oky {
			return 0, false
		}
		return Op{Op: e.Op[0], X: Num{x}, Y: Num{y}}.Eval(nil), true
	case *lang.Ident:
		v, ok := c.g.ByName[e.Name]
		if !ok {
			c.unknown(e)
			return 0, false
		}
		if c.isDim(v) {
			if v.Value == nil {
				return 0, false
			}
			return v.Value[0], true
		}
		if _, isConst := c.consts[v]; isConst {
			return c.constValue(v)
		}
		c.errs.Addf(e.Pos(), "%s is not a constant; sizes and constants may use only numbers, dimensions and constants", e.Name)
		return 0, false
	case *lang.Call:
		f, ok := c.lib.Func(e.Func.Name)
		if !ok || len(e.Args) != f.Arity {
			c.errs.Addf(e.Pos(), "%s(...) cannot be evaluated at compile time", e.Func.Name)
			return 0, false
		}
		args := make([]float64, len(e.Args))
		for i, a := range e.Args {
			x, ok := c.eval(a.Value)
			if !ok {
				return 0, false
			}
			args[i] = x
		}
		return f.Eval(args), true
	}
	c.errs.Addf(e.Pos(), "this expression cannot be evaluated at compile time")
	return 0, false
}

func (c *compiler) unknown(id *lang.Ident) {
	e := c.errs.Addf(id.Pos(), "undefined: %s", id.Name)
	if len(c.loops) == 0 {
		e.Hint = c.suggest(id.Name, c.names())
		return
	}
	cands := slices.Clone(c.names())
	for _, l := range c.loops {
		cands = append(cands, l.Name)
	}
	e.Hint = c.suggest(id.Name, cands)
}

// stochastic reports a model without a stochastic statement (x ~ ...),
// such as an empty file: it defines no distribution to fit or sample.
func (c *compiler) stochastic(f *lang.File) {
	found := false
	var find func([]lang.Stmt)
	find = func(stmts []lang.Stmt) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *lang.Assign:
				found = found || s.Op == lang.Sample
			case *lang.ForBlock:
				find(s.Body)
			}
		}
	}
	find(f.Stmts)
	if !found {
		c.errs.Add(f.Pos(), "the model has no stochastic statement: add at least one, such as X ~ PYDT(alpha, beta, c, 1 / prec)")
	}
}

// needPYDT reports a model that has stochastic statements but no PYDT, at
// its first stochastic statement. It runs only on an otherwise correct
// model, since a PYDT statement with an error is not recorded.
func (c *compiler) needPYDT(f *lang.File) {
	if c.g.PYDT != nil {
		return
	}
	pos := f.Pos()
	var find func([]lang.Stmt) bool
	find = func(stmts []lang.Stmt) bool {
		for _, s := range stmts {
			switch s := s.(type) {
			case *lang.Assign:
				if s.Op == lang.Sample {
					pos = s.OpPos
					return true
				}
			case *lang.ForBlock:
				if find(s.Body) {
					return true
				}
			}
		}
		return false
	}
	find(f.Stmts)
	c.errs.Add(pos, "the model has no PYDT: pydtlang fits, samples and scores the tree of a PYDT statement, such as X ~ PYDT(alpha, beta, c, 1 / prec)")
}

// defines compiles the deterministic definitions "x = ..." first, so that
// the distributions compiled by statements know their supports. They are
// scalar, so only the top level holds them; statements rejects the others.
func (c *compiler) defines(stmts []lang.Stmt) {
	for _, s := range stmts {
		if a, ok := s.(*lang.Assign); ok && a.Op == lang.Define {
			c.assign(a)
		}
	}
}

// statements compiles the distributions "x ~ ..." into factors, entering
// loops.
func (c *compiler) statements(stmts []lang.Stmt) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *lang.Assign:
			switch {
			case s.Op != lang.Define:
				c.assign(s)
			case len(c.loops) > 0:
				c.assign(s) // an element of a deterministic array
			}
		case *lang.ForBlock:
			c.forBlock(s)
		}
	}
}

func (c *compiler) forBlock(fb *lang.ForBlock) {
	outer, badOuter := len(c.loops), c.badLoops
	for _, r := range fb.Ranges {
		if _, clash := c.g.ByName[r.Var.Name]; clash {
			c.errs.Addf(r.Var.Pos(), "loop index %s hides the variable %s; choose another name", r.Var.Name, r.Var.Name)
			c.badLoops = true
		}
		for _, l := range c.loops {
			if l.Name == r.Var.Name {
				c.errs.Addf(r.Var.Pos(), "loop index %s is already in use by an enclosing loop", r.Var.Name)
				c.badLoops = true
				break // once, however many enclosing loops use it
			}
		}
		lo, okLo := c.eval(r.Lo)
		hi, okHi := c.eval(r.Hi)
		if okLo && okHi {
			switch {
			case lo != math.Trunc(lo) || hi != math.Trunc(hi):
				c.errs.Addf(r.Lo.Pos(), "loop range %v:%v must have whole-number bounds", lo, hi)
				okLo = false
			case math.Abs(lo) > MaxValues || math.Abs(hi) > MaxValues:
				c.errs.Addf(r.Lo.Pos(), "loop range %v:%v is too large: bounds must lie within ±%d (2^25)", lo, hi, MaxValues)
				okLo = false
			}
		}
		l := Loop{Name: r.Var.Name, Slot: len(c.loops), Lo: int(lo), Hi: int(hi)}
		if !okLo || !okHi {
			l.Lo, l.Hi, l.unknown = 1, -1, true // an empty range, checks skipped
		}
		c.loops = append(c.loops, l)
		if c.rec != nil {
			c.loopDefs = append(c.loopDefs, len(c.rec.loops))
			c.rec.loops = append(c.rec.loops, loopRec{lo: r.Lo, hi: r.Hi})
		}
	}
	c.g.maxLoops = max(c.g.maxLoops, len(c.loops))
	c.statements(fb.Body)
	c.loops, c.badLoops = c.loops[:outer], badOuter
	if c.rec != nil {
		c.loopDefs = c.loopDefs[:outer]
	}
}

func (c *compiler) assign(s *lang.Assign) {
	v, ok := c.g.ByName[s.LHS.Name.Name]
	if !ok {
		if len(s.LHS.Indices) > 0 {
			c.errs.Addf(s.LHS.Pos(), "%s is indexed but not declared; declare its shape first, e.g. param %s : real[N]", s.LHS.Name.Name, s.LHS.Name.Name)
		}
		return
	}
	if v.Role == Constant {
		c.errs.Addf(s.LHS.Pos(), "%s is a %s and cannot be assigned", v.Name, map[bool]string{true: "dimension", false: "constant"}[c.isDim(v)])
		return
	}
	c.attempted[v] = true
	if s.Op == lang.Define {
		c.define(v, s)
		return
	}
	if v.Role == Deterministic {
		c.errs.Addf(s.OpPos, "%s is deterministic (defined with =) and cannot also have a distribution", v.Name)
		return
	}
	if v.Def != nil && (len(s.LHS.Indices) == 0 || !c.indexedDefs[v]) {
		c.errs.Addf(s.OpPos, "%s already has a distribution (at %s); each variable has exactly one", v.Name, shortPos(v.Def.Pos))
		return
	}
	call, ok := unparen(s.RHS).(*lang.Call)
	if !ok {
		c.errs.Addf(s.RHS.Pos(), "expected a distribution after ~, such as Normal(0, 1)")
		return
	}
	name := call.Func.Name
	t, ok := c.lib.NodeType(name)
	if !ok {
		msg := fmt.Sprintf("unknown distribution %s", name)
		if _, isFunc := c.lib.Func(name); isFunc {
			msg = fmt.Sprintf("%s is a function, not a distribution; use = for a deterministic definition", name)
		}
		e := c.errs.Add(call.Func.Pos(), msg)
		e.Hint = c.suggest(name, c.lib.NodeTypeNames())
		return
	}
	if tree, ok := t.(stdlib.PYDT); ok {
		c.pydt(v, s, call, tree)
		return
	}
	dist, isScalar := t.(stdlib.Scalar)
	vt, isVec := t.(stdlib.Vector)
	if !isScalar && !isVec {
		c.errs.Addf(call.Func.Pos(), "%s is a node type this compiler cannot use: it is neither a scalar distribution, a vector one, nor a PYDT", name)
		return
	}
	var sup func() stdlib.Support
	if isScalar {
		sup = dist.Support
	} else {
		sup = vt.Support
	}
	vecValue := isVec && vt.VectorValue()
	f := &Factor{Pos: s.OpPos, Target: v, Type: t, Loops: slices.Clone(c.loops)}
	if c.rec != nil {
		f.meta = &factorMeta{loops: slices.Clone(c.loopDefs), lhsPos: s.LHS.Pos(), callPos: call.Pos()}
		c.cur = f
		defer func() { c.cur = nil }()
	}
	if vecValue {
		if v.Scalar() {
			c.errs.Addf(s.LHS.Pos(), "%s is a distribution over vectors but %s is a scalar: declare it a vector (param %s : unit[K]) or give the distribution to a row of a matrix (%s[k] ~ %s(...))", name, v.Name, v.Name, v.Name, name)
			return
		}
		f.VecLen = v.Dims[len(v.Dims)-1]
	}
	c.addDef(v, f, len(s.LHS.Indices) > 0)
	if sup := sup(); !v.Declared {
		v.Support = sup
		v.Kind = supportKind(sup)
	} else if !sup.Within(v.Support) && !v.Support.Within(sup) {
		c.errs.Addf(call.Func.Pos(), "%s is a distribution on %v values but %s is declared %s", name, sup, v.Name, v.Kind)
	}
	// Target indexing: every dimension, or for a vector value all but the
	// last (a row).
	rank := len(v.Dims)
	if vecValue {
		rank--
	}
	argsPos := make([]lang.Position, 0)
	switch {
	case len(s.LHS.Indices) > 0:
		if len(s.LHS.Indices) != rank {
			if vecValue && rank == 0 {
				c.errs.Addf(s.LHS.Pos(), "%s is a distribution over vectors and %s is a vector: write %s ~ %s(...), without indices", name, v.Name, v.Name, name)
				return
			}
			if vecValue {
				c.errs.Addf(s.LHS.Pos(), "%s is a distribution over vectors: index all but the last dimension of %s (%d of %d, a row), but it is indexed with %d", name, v.Name, rank, len(v.Dims), len(s.LHS.Indices))
				return
			}
			c.errs.Addf(s.LHS.Pos(), "%s has %d dimensions but is indexed with %d", v.Name, len(v.Dims), len(s.LHS.Indices))
			return
		}
		for _, ix := range s.LHS.Indices {
			x := c.expr(ix)
			if x == nil {
				return
			}
			f.Index = append(f.Index, x)
		}
		if len(c.loops) == 0 {
			c.pending[f] = pendingDef{s.LHS.Pos(), fmt.Sprintf("%s[...] outside a loop gives one element a distribution; write a for-loop over every element of %s, or %s ~ ... for all of them, or define the other elements in further statements", v.Name, v.Name, v.Name)}
			break
		}
		if f.meta != nil {
			f.meta.indexed = true
		}
		f.Elementwise = c.coversAll(v, f)
		if !f.Elementwise && c.coverageKnown(v, f) && !c.badLoops {
			c.pending[f] = pendingDef{s.LHS.Pos(), fmt.Sprintf("the loops must cover every element of %s exactly once, each index a loop variable over 1:%s", v.Name, dimList(v))}
		}
	case rank > 0:
		if len(c.loops) > 0 {
			c.errs.Addf(s.LHS.Pos(), "%s is an array: inside a loop, index it (%s[...])", v.Name, v.Name)
			return
		}
		// Vectorised form: x ~ Dist(args) applies elementwise (to each
		// row of a vector-valued type).
		f.Elementwise = true
		for k := range rank {
			name := fmt.Sprintf("_%d", k+1)
			f.Loops = append(f.Loops, Loop{Name: name, Slot: k, Lo: 1, Hi: v.Dims[k]})
			f.Index = append(f.Index, LoopIndex{Slot: k, Name: name})
		}
		c.g.maxLoops = max(c.g.maxLoops, rank)
	case len(c.loops) > 0:
		if vecValue {
			c.errs.Addf(s.LHS.Pos(), "%s is a vector given a distribution inside a loop", v.Name)
			return
		}
		c.errs.Addf(s.LHS.Pos(), "%s is a scalar but is given a distribution inside a loop", v.Name)
		return
	}
	c.inArgs = true
	f.Args = c.args(call, t.Name(), t.Params(), &argsPos)
	c.inArgs = false
	if f.Args == nil {
		return
	}
	for _, fa := range c.fused {
		fu, ok := t.(stdlib.Fuser)
		var nt stdlib.Vector
		if ok {
			nt, ok = fu.Fuse(fa.param, fa.fn)
		}
		if !ok {
			c.errs.Addf(fa.pos, "%s(...) cannot be the parameter %s of %s: %s", fa.fn.Name, t.Params()[fa.param].Name, name, vectorFuncUse(fa.fn))
			return
		}
		f.Type, t, vt = nt, nt, nt
		sup = nt.Support
	}
	if f.meta != nil {
		f.meta.argPos = argsPos
	}
	if isScalar && len(v.Dims) > 0 && len(s.LHS.Indices) == 0 {
		c.vectorise(f, call)
	}
	for k, a := range f.Args {
		if w := arrayRef(a); w != nil {
			c.errs.Addf(argsPos[k], "%s is an array: index it (%s[...]), or pass it alone as the argument of a vectorised statement", w.Name, w.Name)
			return
		}
	}
	if isVec && !c.vectorLengths(f, argsPos) {
		return
	}
	c.checkArgs(f, t.Params(), argsPos)
	if v.Data != nil && !v.Support.Within(sup()) {
		c.checkValues(v, sup(), name)
	}
}

// pendingDef is an error about a statement that defines part of an array,
// reported only if no other statement defines the rest (see coverage).
type pendingDef struct {
	pos lang.Position
	msg string
}

// addDef records f as a definition of v. A second definition is allowed
// only when every statement defining v indexes it (indexed): the
// statements must then cover each element exactly once (coverage).
func (c *compiler) addDef(v *Var, f *Factor, indexed bool) {
	if v.Def == nil {
		v.Def = f
		c.indexedDefs[v] = indexed
	} else {
		c.indexedDefs[v] = c.indexedDefs[v] && indexed
	}
	v.Defs = append(v.Defs, f)
}

// vectorLengths checks the vector arguments of the vector factor f: each
// has the length of its value (the target's last dimension, for a vector
// value; the declared categories of a categorical(K) target, for a
// category), and all have one length. It reports false after an error.
func (c *compiler) vectorLengths(f *Factor, pos []lang.Position) bool {
	want, what := -1, ""
	switch {
	case f.VecLen > 0:
		want, what = f.VecLen, fmt.Sprintf("the value, %s, has length", f.Target.Name)
	case f.VecLen < 0: // unbound in partial mode
	case f.Target.Categories > 0:
		want, what = f.Target.Categories, fmt.Sprintf("%s is declared categorical(%d), so its length must be", f.Target.Name, f.Target.Categories)
	}
	for k, a := range f.Args {
		r, ok := a.(Row)
		if !ok {
			continue
		}
		n := r.Len()
		switch {
		case n < 0:
		case want < 0:
			want, what = n, fmt.Sprintf("%s has length", r)
		case n != want:
			c.errs.Addf(pos[k], "%s has length %d but %s %d", r, n, what, want)
			return false
		}
	}
	return true
}

// vecExpr compiles the argument of a vector parameter: a vector variable
// (pi0) or a row of an array with all indices but the last (trans[k],
// trans[z[t - 1]]), or, where the parameter allows it (Broadcast), a
// scalar expression shared by every component. nil after an error.
func (c *compiler) vecExpr(e lang.Expr, p Param, what string) Expr {
	switch x := unparen(e).(type) {
	case *lang.Ident:
		v, ok := c.g.ByName[x.Name]
		if ok && !v.Scalar() && !slices.ContainsFunc(c.loops, func(l Loop) bool { return l.Name == x.Name }) {
			if len(v.Dims) > 1 {
				c.errs.Addf(x.Pos(), "%s is an array of %d dimensions, but %s is a vector: pass a row, indexing all but the last dimension (such as %s[k])", v.Name, len(v.Dims), vecWhat(what, p), v.Name)
				return nil
			}
			return Row{V: v}
		}
	case *lang.Index:
		if id, ok := unparen(x.Base).(*lang.Ident); ok {
			if v, ok := c.g.ByName[id.Name]; ok && len(x.Indices) == len(v.Dims)-1 {
				idx, ok := c.indices(v, x.Indices)
				if !ok {
					return nil
				}
				return Row{V: v, Idx: idx}
			}
		}
	}
	y := c.expr(e)
	if y == nil || p.Broadcast {
		return y
	}
	c.errs.Addf(e.Pos(), "%s is a vector: pass a vector variable or a row of a matrix (such as trans[k]), not %s", vecWhat(what, p), y)
	return nil
}

// vecWhat names the vector that vecExpr compiles in its messages: "what
// parameter p" for a node type's parameter, "the argument of what" for a
// vector function's (p.Name empty).
func vecWhat(what string, p Param) string {
	if p.Name == "" {
		return "the argument of " + what
	}
	return what + " parameter " + p.Name
}

func dimList(v *Var) string {
	parts := make([]string, len(v.Dims))
	for i, d := range v.Dims {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ", ")
}

func supportKind(s stdlib.Support) lang.Kind {
	switch s {
	case stdlib.Binary:
		return lang.KindBinary
	case stdlib.Count:
		return lang.KindCount
	case stdlib.Positive:
		return lang.KindPos
	case stdlib.Unit:
		return lang.KindUnit
	}
	return lang.KindReal
}

// coversAll reports whether the factor's target indices are distinct loop
// indices each running over a whole dimension.
func (c *compiler) coversAll(v *Var, f *Factor) bool {
	used := map[int]bool{}
	for k, ix := range f.Index {
		li, ok := ix.(LoopIndex)
		if !ok || used[li.Slot] {
			return false
		}
		used[li.Slot] = true
		l := f.Loops[li.Slot]
		if l.Lo != 1 || l.Hi != v.Dims[k] {
			return false
		}
	}
	return len(used) == len(f.Loops)
}

// vectorise turns array arguments of an elementwise factor written without
// loops into element references.
func (c *compiler) vectorise(f *Factor, call *lang.Call) {
	for i, a := range f.Args {
		r, ok := a.(Ref)
		if !ok || r.V.Scalar() {
			continue
		}
		if !sameShape(r.V.Dims, f.Target.Dims) {
			c.errs.Addf(call.Pos(), "%s has shape [%s] but %s has shape [%s]", r.V.Name, dimList(r.V), f.Target.Name, dimList(f.Target))
			continue
		}
		f.Args[i] = Elem{V: r.V, Idx: slices.Clone(f.Index)}
		if f.meta != nil {
			f.meta.vecArgs = append(f.meta.vecArgs, i)
		}
	}
}

// fusedArg is a vector function written at a vector parameter:
// Categorical(softmax(eta[k])) has softmax at parameter 0.
type fusedArg struct {
	param int
	fn    *stdlib.VectorFunc
	pos   lang.Position
}

// vectorFuncUse says where a vector function may be written.
func vectorFuncUse(fn *stdlib.VectorFunc) string {
	return fmt.Sprintf("%s is a vector function, which may be written only as a vector argument of a node type that accepts it: "+
		"the probability vector of Categorical, as in w[t] ~ Categorical(%s(eta[z[t]])) (deterministic vector arrays such as phi[k] = %s(eta[k]) are not supported)",
		fn.Name, fn.Name, fn.Name)
}

// vectorCall returns the vector function e calls, and the call, or nil.
func (c *compiler) vectorCall(e lang.Expr) (*lang.Call, *stdlib.VectorFunc) {
	call, ok := unparen(e).(*lang.Call)
	if !ok {
		return nil, nil
	}
	fn, ok := c.lib.VectorFunc(call.Func.Name)
	if !ok {
		return nil, nil
	}
	return call, fn
}

// args matches a call's arguments to parameters, filling defaults. A
// vector function written at a vector parameter (softmax(eta[k])) is
// compiled to its argument and listed in c.fused.
func (c *compiler) args(call *lang.Call, what string, params []Param, pos *[]lang.Position) []Expr {
	c.fused = c.fused[:0]
	out := make([]Expr, len(params))
	*pos = make([]lang.Position, len(params))
	set := make([]bool, len(params))
	ok := true
	var names []string
	for _, p := range params {
		names = append(names, p.Name)
	}
	for i, a := range call.Args {
		k := i
		if a.Name != nil {
			k = slices.Index(names, a.Name.Name)
			if k < 0 {
				e := c.errs.Addf(a.Name.Pos(), "%s has no parameter %s (its parameters: %s)", what, a.Name.Name, strings.Join(names, ", "))
				e.Hint = c.suggest(a.Name.Name, names)
				ok = false
				continue
			}
		} else if i >= len(params) {
			c.errs.Addf(a.Pos(), "too many arguments: %s takes %d (%s)", what, len(params), strings.Join(names, ", "))
			ok = false
			break
		}
		if set[k] {
			c.errs.Addf(a.Pos(), "parameter %s of %s given twice", names[k], what)
			ok = false
			continue
		}
		set[k] = true
		(*pos)[k] = a.Value.Pos()
		if what == stdlib.PYDTName && k == 2 {
			continue // the divergence: compiled by the caller
		}
		if vc, fn := c.vectorCall(a.Value); params[k].Vector && fn != nil {
			if len(vc.Args) != 1 || vc.Args[0].Name != nil {
				c.errs.Addf(vc.Lparen, "%s takes one vector argument, such as %s(eta[k])", fn.Name, fn.Name)
				ok = false
				continue
			}
			out[k] = c.vecExpr(vc.Args[0].Value, Param{Vector: true}, fn.Name)
			c.fused = append(c.fused, fusedArg{param: k, fn: fn, pos: a.Value.Pos()})
		} else if params[k].Vector {
			out[k] = c.vecExpr(a.Value, params[k], what)
		} else {
			out[k] = c.expr(a.Value)
		}
		if out[k] == nil {
			ok = false
		}
	}
	for k, p := range params {
		if set[k] {
			continue
		}
		if p.HasDefault {
			out[k] = Num{p.Default}
			(*pos)[k] = call.Pos()
			continue
		}
		c.errs.Addf(call.Pos(), "missing argument %s of %s", p.Name, what)
		ok = false
	}
	if !ok {
		return nil
	}
	return out
}

// namedType names a parameter list that is not a node type (a divergence
// constructor) in checkArgs's messages.
type namedType string

func (n namedType) Name() string    { return string(n) }
func (n namedType) Doc() string     { return "" }
func (n namedType) Params() []Param { return nil }

// Param aliases stdlib.Param for brevity.
type Param = stdlib.Param

// checkArgs checks arguments against parameter supports at compile time:
// constants by value, variables by their declared or inferred support.
func (c *compiler) checkArgs(f *Factor, params []Param, pos []lang.Position) {
	before := len(c.errs)
	var vals []float64
	allConst := true
	for k, a := range f.Args {
		if a == nil {
			allConst = false
			continue
		}
		p := params[k]
		if len(Vars(a)) == 0 && !hasLoop(a) {
			x := a.Eval(&Env{})
			vals = append(vals, x)
			if !p.Support.Contains(x) {
				c.errs.Addf(pos[k], "%s parameter %s = %v is invalid: it must be %s", f.TypeName(), p.Name, x, p.Support.Phrase())
			}
			continue
		}
		allConst = false
		if c.readsUnknown(a) {
			continue // its support is unknown
		}
		switch a.(type) {
		case Ref, Elem, Row:
			if s := support(a); !s.Within(p.Support) {
				v := Vars(a)[0]
				c.errs.Addf(pos[k], "%s parameter %s must be %s, but %s is %v", f.TypeName(), p.Name, p.Support.Phrase(), v.Name, s)
			}
		default:
			if v := signFree(a, p.Support); v != nil {
				c.errs.Addf(pos[k], "%s parameter %s must be %s, but %s can be non-positive: %s is %v",
					f.TypeName(), p.Name, p.Support.Phrase(), a, v.Name, v.Support)
			}
		}
	}
	// With every parameter constant and within its support, the type's
	// own check of their combination.
	if s, ok := f.Scalar(); ok && allConst && len(c.errs) == before {
		if err := s.CheckParams(vals); err != nil {
			c.errs.Addf(f.Pos, "%v", err)
		}
	}
}

func hasLoop(e Expr) bool {
	found := false
	inspect(e, func(x Expr) {
		if _, ok := x.(LoopIndex); ok {
			found = true
		}
	})
	return found
}

// checkValues checks every observed value of v against a support, naming
// the file, row and column of the first few offenders.
func (c *compiler) checkValues(v *Var, s stdlib.Support, what string) {
	if v.Data == nil {
		return
	}
	m := v.Data
	bad := 0
	for i := 0; i < m.Rows; i++ {
		for j := 0; j < m.Cols; j++ {
			x := m.At(i, j)
			if math.IsNaN(x) || s.Contains(x) {
				continue
			}
			bad++
			if bad <= 3 {
				c.errs.Addf(DataPos(v.Name), "%s: %v is not a valid value of %s (%s): it must be %s", m.Where(i, j), x, v.Name, what, s.Phrase())
			}
		}
	}
	if bad > 3 {
		c.errs.Addf(DataPos(v.Name), "%s: %d more invalid values in %s", m.Source, bad-3, v.Name)
	}
}

// pydt compiles "X ~ PYDT(alpha, beta, divergence, variance)".
func (c *compiler) pydt(v *Var, s *lang.Assign, call *lang.Call, tree stdlib.PYDT) {
	f := &Factor{Pos: s.OpPos, Target: v, Type: tree}
	if c.rec != nil {
		f.meta = &factorMeta{}
		c.cur, c.inArgs = f, true
		defer func() { c.cur, c.inArgs = nil, false }()
	}
	c.addDef(v, f, false)
	if len(c.loops) > 0 || len(s.LHS.Indices) > 0 {
		c.errs.Addf(s.LHS.Pos(), "PYDT defines a whole N×D matrix: write %s ~ PYDT(...) outside loops, without indices", v.Name)
		return
	}
	if len(v.Dims) != 2 || v.Support != stdlib.Real {
		c.errs.Addf(s.LHS.Pos(), "PYDT is a distribution over an N×D real matrix; declare %s : real[N, D]", v.Name)
		return
	}
	if c.g.PYDT == nil {
		c.g.PYDT = f
	}
	c.g.Trees = append(c.g.Trees, f)
	var pos []lang.Position
	f.Args = c.args(call, tree.Name(), tree.Params(), &pos)
	if f.Args == nil {
		return
	}
	if f.meta != nil {
		f.meta.argPos = pos
	}
	// The divergence argument.
	var divArg lang.Expr
	for i, a := range call.Args {
		if a.Name != nil && a.Name.Name == "divergence" || a.Name == nil && i == 2 {
			divArg = a.Value
		}
	}
	if dc, ok := unparen(divArg).(*lang.Call); ok {
		if dt, ok := c.lib.Divergence(dc.Func.Name); ok {
			var dpos []lang.Position
			args := c.args(dc, dt.Name, dt.Params, &dpos)
			if args == nil {
				return
			}
			f.Divergence = &DivergenceExpr{Type: dt, Args: args}
			if f.meta != nil {
				f.meta.divPos = dpos
			}
			tmp := &Factor{Pos: f.Pos, Target: v, Type: namedType(dt.Name), Args: args}
			before := len(c.errs)
			c.checkArgs(tmp, dt.Params, dpos)
			if len(c.errs) == before {
				c.checkDivergence(f.Divergence, dc.Pos())
			}
		}
	}
	if f.Divergence == nil {
		x := c.expr(divArg)
		if x == nil {
			return
		}
		dt, ok := c.lib.Divergence("DivInv")
		if !ok {
			c.errs.Addf(pos[2], "the library has no DivInv, the divergence function of a plain divergence argument; name one of: %s", strings.Join(c.lib.DivergenceNames(), ", "))
			return
		}
		f.Divergence = &DivergenceExpr{Type: dt, Args: []Expr{x}}
		tmp := &Factor{Pos: f.Pos, Target: v, Type: tree, Args: []Expr{x}}
		c.checkArgs(tmp, dt.Params, []lang.Position{pos[2]})
	}
	for k, a := range f.Args {
		if w := arrayRef(a); w != nil && k != PYDTVariance {
			c.errs.Addf(pos[k], "%s is an array, but PYDT parameter %s is a scalar: index it (%s[...]); only the variance may be a vector (of length D)", w.Name, tree.Params()[k].Name, w.Name)
			return
		}
	}
	for _, a := range f.Divergence.Args {
		if w := arrayRef(a); w != nil {
			c.errs.Addf(pos[2], "%s is an array, but the divergence parameters are scalars: index it (%s[...])", w.Name, w.Name)
			return
		}
	}
	if !c.dimVariance(f, pos[PYDTVariance]) {
		return
	}
	tmp := *f
	args := slices.Clone(f.Args)
	args[PYDTDivergence] = nil
	tmp.Args = args
	before := len(c.errs)
	c.checkArgs(&tmp, tree.Params(), pos)
	// alpha >= -2 beta when both are constants and individually valid;
	// a constant alpha with a variable beta must be above -2, since
	// -2 beta > -2 for every beta in [0, 1).
	if a, b := f.Args[PYDTAlpha], f.Args[PYDTBeta]; len(c.errs) == before && len(Vars(a)) == 0 && !hasLoop(a) {
		alpha := a.Eval(&Env{})
		if len(Vars(b)) == 0 && !hasLoop(b) {
			if err := stdlib.CheckPYDT(alpha, b.Eval(&Env{})); err != nil {
				c.errs.Addf(pos[0], "%v", err)
			}
		} else if err := fixedAlpha(alpha); err != nil {
			c.errs.Addf(pos[0], "%v", err)
		}
	}
	if v.Data != nil {
		c.checkValues(v, stdlib.Real, "PYDT")
	}
}

// dimVariance lets the variance argument of the PYDT f be a vector of
// length D, one diffusion variance per dimension of the target (N×D), as
// Neal's Dirichlet diffusion tree has: every array it reads must have
// shape [D], and each such reference becomes the element indexed by the
// dimension loop f.DimLoop (so 1 / prec, with prec : positive[D], reads
// 1 / prec[d] in dimension d). It reports false after an error.
func (c *compiler) dimVariance(f *Factor, pos lang.Position) bool {
	x := f.Args[PYDTVariance]
	if arrayRef(x) == nil {
		return true
	}
	v := f.Target
	D := v.Dims[1]
	ok := true
	inspect(x, func(e Expr) {
		r, isRef := e.(Ref)
		if !isRef || r.V.Scalar() {
			return
		}
		switch {
		case !ok: // one error is enough
		case len(r.V.Dims) != 1:
			c.errs.Addf(pos, "the PYDT variance reads %s, an array of %d dimensions: a per-dimension variance must be a vector of length D, the number of columns of %s (or a scalar)",
				r.V.Name, len(r.V.Dims), v.Name)
			ok = false
		case D >= 0 && r.V.Dims[0] >= 0 && r.V.Dims[0] != D:
			c.errs.Addf(pos, "the PYDT variance reads %s, a vector of length %d: a per-dimension variance must have length D = %d, the number of columns of %s",
				r.V.Name, r.V.Dims[0], D, v.Name)
			ok = false
		}
	})
	if !ok {
		return false
	}
	loop := Loop{Name: "_d", Slot: 0, Lo: 1, Hi: D}
	f.DimLoop = &loop
	f.Args[PYDTVariance] = mapRefs(x, func(r Ref) Expr {
		if r.V.Scalar() {
			return r
		}
		return Elem{V: r.V, Idx: []Expr{LoopIndex{Slot: loop.Slot, Name: loop.Name}}}
	})
	c.g.maxLoops = max(c.g.maxLoops, 1)
	return true
}

// checkDivergence checks a divergence function whose parameters are all
// constants, e.g. DivNeal(1, 0, 0), which never diverges before t = 1.
func (c *compiler) checkDivergence(d *DivergenceExpr, pos lang.Position) {
	vals := make([]float64, len(d.Args))
	for i, a := range d.Args {
		if len(Vars(a)) > 0 {
			return
		}
		vals[i] = a.Eval(&Env{})
	}
	if err := d.Type.New(vals).Check(); err != nil {
		c.errs.Addf(pos, "%s: %v", d, err)
	}
}

// signFree returns a variable that can make a positive parameter's
// expression non-positive: the expression uses only +, *, / and ^ (no
// subtraction or negation, whose sign the compiler does not track) and reads
// a variable whose support includes non-positive values. It returns nil when
// the parameter need not be positive or the expression is safe.
func signFree(x Expr, need stdlib.Support) *Var {
	if need != stdlib.Positive {
		return nil
	}
	var culprit *Var
	subtracts := false
	inspect(x, func(e Expr) {
		switch e := e.(type) {
		case Neg:
			subtracts = true
		case Op:
			if e.Op == '-' {
				subtracts = true
			}
		case *Call:
			subtracts = true // functions have their own ranges
		case Ref:
			if culprit == nil && !e.V.Support.Within(stdlib.Positive) {
				culprit = e.V
			}
		case Elem:
			if culprit == nil && !e.V.Support.Within(stdlib.Positive) {
				culprit = e.V
			}
		}
	})
	if subtracts {
		return nil
	}
	return culprit
}

// arrayRef returns an array variable that x reads whole (not an element),
// or nil.
func arrayRef(x Expr) *Var {
	var found *Var
	inspect(x, func(e Expr) {
		if r, ok := e.(Ref); ok && !r.V.Scalar() && found == nil {
			found = r.V
		}
	})
	return found
}

// define compiles a deterministic definition "x = expr".
func (c *compiler) define(v *Var, s *lang.Assign) {
	if len(s.LHS.Indices) > 0 || len(c.loops) > 0 {
		c.defineElems(v, s)
		return
	}
	if v.Declared {
		c.errs.Addf(s.OpPos, "a deterministic scalar (=) must not be declared; %s is declared: remove the declaration, or index it to define the elements of an array", v.Name)
		return
	}
	if v.Role != Deterministic {
		c.errs.Addf(s.OpPos, "%s has a distribution (~) and cannot also be defined with =", v.Name)
		return
	}
	if v.Expr != nil {
		c.errs.Addf(s.OpPos, "%s is defined twice", v.Name)
		return
	}
	x := c.expr(s.RHS)
	if x == nil {
		return
	}
	if w := arrayRef(x); w != nil {
		c.errs.Addf(s.RHS.Pos(), "%s is an array; index it to use one element", w.Name)
		return
	}
	v.Expr = x
	v.Support = support(x)
	if c.rec != nil {
		c.rec.defines = append(c.rec.defines, v)
	}
}

// enter counts one more level of expression nesting for expr and eval. It
// reports false, with an error, when e lies deeper than maxExprDepth,
// which Parse never produces but a tree built in Go might; the caller must
// then return at once, without calling leave.
func (c *compiler) enter(e lang.Expr) bool {
	syntaxVisits.Add(1)
	if c.depth >= maxExprDepth {
		if !c.tooDeep {
			c.errs.Addf(e.Pos(), "expression too deep: more than %d nested operations", maxExprDepth)
			c.tooDeep = true
		}
		return false
	}
	c.depth++
	return true
}

// leave undoes enter.
func (c *compiler) leave() { c.depth-- }

// expr compiles an expression; nil after an error.
func (c *compiler) expr(e lang.Expr) Expr {
	if !c.enter(e) {
		return nil
	}
	defer c.leave()
	switch e := e.(type) {
	case *lang.Number:
		x, err := e.Float()
		if err != nil {
			c.errs.Addf(e.Pos(), "%v", err)
			return nil
		}
		return Num{x}
	case *lang.Paren:
		return c.expr(e.X)
	case *lang.Unary:
		x := c.expr(e.X)
		if x == nil {
			return nil
		}
		return Neg{x}
	case *lang.Binary:
		x, y := c.expr(e.X), c.expr(e.Y)
		if x == nil || y == nil {
			return nil
		}
		return Op{Op: e.Op[0], X: x, Y: y}
	case *lang.Ident:
		for _, l := range slices.Backward(c.loops) {
			if l.Name == e.Name {
				return LoopIndex{Slot: l.Slot, Name: l.Name}
			}
		}
		v, ok := c.g.ByName[e.Name]
		if !ok {
			c.unknown(e)
			return nil
		}
		return Ref{v}
	case *lang.Index:
		id, ok := unparen(e.Base).(*lang.Ident)
		if !ok {
			c.errs.Addf(e.Pos(), "only variables can be indexed")
			return nil
		}
		v, ok := c.g.ByName[id.Name]
		if !ok {
			c.unknown(id)
			return nil
		}
		if len(e.Indices) != len(v.Dims) {
			c.errs.Addf(e.Lbrack, "%s has %d dimensions but is indexed with %d", v.Name, len(v.Dims), len(e.Indices))
			return nil
		}
		idx, ok := c.indices(v, e.Indices)
		if !ok {
			return nil
		}
		return Elem{V: v, Idx: idx}
	case *lang.Call:
		name := e.Func.Name
		f, ok := c.lib.Func(name)
		if !ok {
			msg := fmt.Sprintf("unknown function %s", name)
			cands := c.lib.FuncNames()
			if _, isDist := c.lib.NodeType(name); isDist {
				msg = fmt.Sprintf("%s is a distribution; use it after ~", name)
				cands = nil
			} else if _, isDiv := c.lib.Divergence(name); isDiv {
				msg = fmt.Sprintf("%s is a divergence function; it may only be the divergence argument of PYDT", name)
				cands = nil
			} else if fn, isVec := c.lib.VectorFunc(name); isVec {
				msg = vectorFuncUse(fn)
				cands = nil
			}
			err := c.errs.Add(e.Func.Pos(), msg)
			err.Hint = c.suggest(name, cands)
			return nil
		}
		if len(e.Args) != f.Arity {
			c.errs.Addf(e.Lparen, "%s takes %d argument(s), got %d", name, f.Arity, len(e.Args))
			return nil
		}
		call := &Call{F: f}
		for _, a := range e.Args {
			if a.Name != nil {
				c.errs.Addf(a.Name.Pos(), "function %s takes no named arguments", name)
				return nil
			}
			x := c.expr(a.Value)
			if x == nil {
				return nil
			}
			call.Args = append(call.Args, x)
		}
		return call
	}
	c.errs.Addf(e.Pos(), "unsupported expression")
	return nil
}

// indices compiles the indices ixs of the variable v (a row's, all but
// its last, or an element's), each checked by constIndex and
// categoryIndex; false when one fails (the error recorded).
func (c *compiler) indices(v *Var, ixs []lang.Expr) ([]Expr, bool) {
	var idx []Expr
	for k, ix := range ixs {
		x := c.expr(ix)
		if x == nil {
			return nil, false
		}
		if !c.constIndex(x, v, k, ix.Pos()) || !c.categoryIndex(x, v, k, ix.Pos()) {
			return nil, false
		}
		idx = append(idx, x)
	}
	return idx, true
}

// constIndex checks an index that reads neither variables nor loop indices
// against dimension k of v, which inference could only report by panicking
// outside loops. It reports whether the index may be valid.
func (c *compiler) constIndex(x Expr, v *Var, k int, pos lang.Position) bool {
	if len(Vars(x)) > 0 || hasLoop(x) {
		return true
	}
	i, dim := x.Eval(&Env{}), v.Dims[k]
	if c.rec != nil && dim < 0 && i == math.Trunc(i) && i >= 1 {
		c.rec.indices = append(c.rec.indices, indexRec{f: c.cur, args: c.inArgs, v: v, k: k, i: i, pos: pos})
	}
	switch {
	case i != math.Trunc(i):
		c.errs.Addf(pos, "index %v of %s is not a whole number", i, v.Name)
	case i < 1 || dim >= 0 && i > float64(dim):
		bound := "?" // unbound in partial mode
		if dim >= 0 {
			bound = fmt.Sprint(dim)
		}
		c.errs.Addf(pos, "index %v of %s is outside 1..%s", i, v.Name, bound)
	default:
		return true
	}
	return false
}

// categoryIndex checks an index that is a categorical(K) variable's value
// (z[t] in mu[z[t], d]) against dimension k of v: the categories 1..K must
// all be valid indices. It reports whether the index may be valid.
func (c *compiler) categoryIndex(x Expr, v *Var, k int, pos lang.Position) bool {
	var w *Var
	switch x := x.(type) {
	case Elem:
		w = x.V
	case Ref:
		w = x.V
	default:
		return true
	}
	if c.rec != nil && w.Kind == lang.KindCategorical && (w.Categories == 0 || v.Dims[k] < 0) {
		c.rec.indices = append(c.rec.indices, indexRec{f: c.cur, args: c.inArgs, v: v, k: k, cat: w, pos: pos})
	}
	if dim := v.Dims[k]; w.Categories > 0 && dim >= 0 && w.Categories > dim {
		c.errs.Addf(pos, "%s takes the categories 1..%d but indexes dimension %d of %s, which has %d", w.Name, w.Categories, k+1, v.Name, dim)
		return false
	}
	return true
}

// roles finishes observed/latent roles and checks every random variable
// has a distribution.
func (c *compiler) roles() {
	for _, v := range c.g.Vars {
		switch {
		case v.Role == Constant || v.Role == Deterministic:
			// Nothing to finish; a failed definition was reported by define.
		case v.IsData && v.Value == nil:
			if !c.opts.Partial {
				c.errs.Addf(v.Pos, "no data for %s: pass --data %s=FILE", v.Name, v.Name)
			}
			v.Role = Latent
		case v.IsData:
			v.Role = Observed
		}
		if v.IsData && v.Def == nil && c.indexOnly(v) {
			// Data read only as an index (theta[doc[t]]): a covariate the
			// model conditions on, given no distribution. Nothing could
			// impute a missing entry.
			c.completeIndex(v)
			continue
		}
		if (v.Role == Latent || v.Role == Observed || v.Role == Clamped) && v.Def == nil && !c.attempted[v] {
			c.errs.Addf(v.Pos, "%s has no distribution: add %s ~ ... (a data or param variable must be modelled, "+
				"unless it is data read only as an index, as doc in theta[doc[t]])", v.Name, v.Name)
		}
		if v.Role == Clamped && v.Def != nil {
			if _, ok := v.Def.Scalar(); ok {
				c.clampedOwn(v)
			}
		}
	}
}

// indexOnly reports whether v is read, and read only inside the indices
// of array elements and rows (doc in theta[doc[t]]), by every factor and
// deterministic variable.
func (c *compiler) indexOnly(v *Var) bool {
	read := false
	check := func(x Expr) bool {
		if x == nil || !Reads(x, v) {
			return true
		}
		read = true
		return !ReadsValue(x, v)
	}
	for _, w := range c.g.Vars {
		if !check(w.Expr) {
			return false
		}
		for _, f := range w.Defs {
			for _, x := range f.Exprs() {
				if !check(x) {
					return false
				}
			}
		}
	}
	return read
}

// completeIndex checks that the data v, read only as an index and given no
// distribution, has no missing entries.
func (c *compiler) completeIndex(v *Var) {
	if v.Data == nil {
		return // no data: reported as such
	}
	for i := range v.Data.Rows {
		for j := range v.Data.Cols {
			if math.IsNaN(v.Data.At(i, j)) {
				c.errs.Addf(DataPos(v.Name), "%s: %s is missing, but %s is read only as an index and has no distribution, so nothing can impute it",
					v.Data.Where(i, j), v.Name, v.Name)
				return
			}
		}
	}
}

// ReadsValue reports whether x reads the value of v other than as (part
// of) an index of an array element or row: x[v] reads v only as an index,
// v + 1 and v[i] read its value.
func ReadsValue(x Expr, v *Var) bool {
	switch x := x.(type) {
	case nil:
		return false
	case Num, LoopIndex:
		return false
	case Ref:
		return x.V == v
	case Elem:
		return x.V == v
	case Row:
		return x.V == v
	case Neg:
		return ReadsValue(x.X, v)
	case Op:
		return ReadsValue(x.X, v) || ReadsValue(x.Y, v)
	case *Call:
		return slices.ContainsFunc(x.Args, func(a Expr) bool { return ReadsValue(a, v) })
	}
	return Reads(x, v) // an expression of another form: assume a value read
}

// deps returns the variables that v's definition reads.
func deps(v *Var) []*Var {
	var out []*Var
	add := func(e Expr) {
		if e != nil {
			out = append(out, Vars(e)...)
		}
	}
	if v.Expr != nil {
		add(v.Expr)
	}
	defs := v.Defs
	if len(defs) == 0 && v.Def != nil {
		defs = []*Factor{v.Def}
	}
	for _, f := range defs {
		for _, a := range f.Args {
			add(a)
		}
		if f.Divergence != nil {
			for _, a := range f.Divergence.Args {
				add(a)
			}
		}
	}
	return out
}

// order detects cycles and sorts factors and deterministic variables so
// that every definition follows what it reads.
func (c *compiler) order() {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(c.g.Vars))
	var stack []*Var
	var visit func(v *Var) bool
	visit = func(v *Var) bool {
		switch color[v.ID] {
		case black:
			return true
		case grey:
			i := slices.Index(stack, v)
			names := make([]string, 0, len(stack)-i+1)
			for _, w := range stack[i:] {
				names = append(names, w.Name)
			}
			names = append(names, v.Name)
			c.errs.Addf(v.Pos, "cycle: %s", strings.Join(names, " -> "))
			return false
		}
		color[v.ID] = grey
		stack = append(stack, v)
		for _, w := range deps(v) {
			if w == v && v.Def != nil && v.Def.Index != nil {
				continue // x[t] may depend on earlier elements of x (coverage checks which)
			}
			if !visit(w) {
				color[v.ID] = black
				stack = stack[:len(stack)-1]
				return false
			}
		}
		stack = stack[:len(stack)-1]
		color[v.ID] = black
		for _, f := range v.Defs {
			if f.Args != nil || f.Divergence != nil {
				c.g.Factors = append(c.g.Factors, f)
			}
		}
		if v.Role == Deterministic && v.Expr != nil {
			c.g.Deterministic = append(c.g.Deterministic, v)
		}
		return true
	}
	for _, v := range c.g.Vars {
		visit(v)
	}
}

// clampedOwn checks a value clamped with --set against the variable's own
// definition. A declared kind is a promise about the values and is
// enforced. Outside its distribution's support the value is accepted, and
// its factor omitted from the joint density (Factor.Omitted), when every
// parameter of that distribution is fixed: if a latent variable were read,
// leaving the factor out would change that variable's posterior. Whether
// the value suits the factors that read it is checked by checkClamped.
func (c *compiler) clampedOwn(v *Var) {
	x, f := v.Value[0], v.Def
	dist, _ := f.Scalar()
	switch {
	case v.Declared && !v.Support.Contains(x):
		c.errs.Addf(SetPos(v.Name), "value %v: %s is declared %s, so its value must be %s", x, v.Name, v.Kind, v.Support.Phrase())
	case !dist.Support().Contains(x):
		if w := c.latentInput(f); w != nil {
			c.errs.Addf(SetPos(v.Name), "value %v: %s ~ %s takes values that are %s; a clamped value outside its distribution's support is allowed only when the distribution's parameters are fixed, but %s is latent",
				x, v.Name, dist.Name(), dist.Support().Phrase(), w.Name)
			return
		}
		f.Omitted = true
	}
}

// latentInput returns a latent variable that a parameter of f reads,
// directly or through deterministic variables, or nil.
func (c *compiler) latentInput(f *Factor) *Var {
	seen := map[*Var]bool{}
	var walk func(vs []*Var) *Var
	walk = func(vs []*Var) *Var {
		for _, w := range vs {
			if seen[w] {
				continue
			}
			seen[w] = true
			switch {
			case w.Role == Latent:
				return w
			case w.Role == Deterministic && w.Expr != nil:
				if l := walk(Vars(w.Expr)); l != nil {
					return l
				}
			}
		}
		return nil
	}
	var vs []*Var
	for _, a := range f.Args {
		if a != nil {
			vs = append(vs, Vars(a)...)
		}
	}
	return walk(vs)
}

// fixedInputs reports whether the expression x reads only values fixed at
// compile time (constants, observed scalars, clamped values and
// deterministic variables of those), no loop index and no array, and
// returns the clamped variables it reads.
func fixedInputs(x Expr) (clamped []*Var, ok bool) {
	if x == nil || hasLoop(x) {
		return nil, false
	}
	ok = true
	var walk func(e Expr)
	walk = func(e Expr) {
		for _, w := range Vars(e) {
			switch {
			case !w.Scalar():
				ok = false
			case w.Role == Clamped:
				if !slices.Contains(clamped, w) {
					clamped = append(clamped, w)
				}
			case w.Role == Constant || w.Role == Observed && w.Value != nil:
			case w.Role == Deterministic && w.Expr != nil:
				walk(w.Expr)
			default:
				ok = false
			}
		}
	}
	walk(x)
	return clamped, ok
}

// checkClamped checks every parameter whose value follows from values
// clamped with --set (and constants) against the parameter's support, and
// the combinations of such parameters (alpha >= -2 beta for the PYDT): a
// clamped value must be valid for every factor that reads it. It runs once
// the graph is complete and ordered, and evaluates deterministic variables
// of fixed values.
func (c *compiler) checkClamped() {
	// Only scalars are evaluated (fixedInputs refuses arrays), and the
	// dimensions may be unbound in partial mode: no NewEnv.
	env := &Env{Values: make([][]float64, len(c.g.Vars)), Loop: make([]int, c.g.maxLoops)}
	for _, v := range c.g.Vars {
		if v.Scalar() {
			env.Values[v.ID] = []float64{0}
			if v.Value != nil {
				env.Values[v.ID][0] = v.Value[0]
			}
		}
	}
	for _, v := range c.g.Deterministic {
		if _, ok := fixedInputs(v.Expr); ok {
			env.Values[v.ID][0] = v.Expr.Eval(env)
		}
	}
	// check evaluates the arguments against params; vals holds their
	// values and all reports whether every one was fixed, and some
	// whether any read a clamped value.
	check := func(f *Factor, what string, args []Expr, params []Param) (vals []float64, all, some bool, name string) {
		all = true
		for k, a := range args {
			cl, ok := fixedInputs(a)
			if !ok {
				all = false
				vals = append(vals, math.NaN())
				continue
			}
			x := a.Eval(env)
			vals = append(vals, x)
			if len(cl) == 0 {
				continue // constants only: checked by checkArgs
			}
			some = true
			name = cl[0].Name
			if !params[k].Support.Contains(x) {
				c.errs.Addf(SetPos(name), "value %v: with it, %s parameter %s = %v (%s at %s) is invalid: it must be %s",
					cl[0].Value[0], what, params[k].Name, x, a, shortPos(f.Pos), params[k].Support.Phrase())
				all = false
			}
		}
		return vals, all, some, name
	}
	for _, f := range c.g.Factors {
		if dist, ok := f.Scalar(); ok {
			vals, all, some, name := check(f, dist.Name(), f.Args, dist.Params())
			if all && some {
				if err := dist.CheckParams(vals); err != nil {
					c.errs.Addf(SetPos(name), "value %v: with it, %s at %s is invalid: %v", c.g.ByName[name].Value[0], dist.Name(), shortPos(f.Pos), err)
				}
			}
			continue
		}
		if !f.IsPYDT() {
			continue // a vector type: its parameters are arrays, never clamped
		}
		args := slices.Clone(f.Args)
		args[PYDTDivergence] = Num{1} // the divergence, checked below
		before := len(c.errs)
		vals, _, _, _ := check(f, f.TypeName(), args, f.Type.Params())
		clA, okA := fixedInputs(f.Args[PYDTAlpha])
		clB, okB := fixedInputs(f.Args[PYDTBeta])
		if okA && okB && len(clA)+len(clB) > 0 && len(c.errs) == before {
			if err := stdlib.CheckPYDT(vals[0], vals[1]); err != nil {
				name := append(clA, clB...)[0].Name
				c.errs.Addf(SetPos(name), "value %v: with it, the PYDT at %s is invalid: %v", c.g.ByName[name].Value[0], shortPos(f.Pos), err)
			}
		}
		if okA && !okB && len(clA) > 0 && len(c.errs) == before {
			if err := fixedAlpha(vals[0]); err != nil {
				name := clA[0].Name
				c.errs.Addf(SetPos(name), "value %v: with it, the PYDT at %s is invalid: %v", c.g.ByName[name].Value[0], shortPos(f.Pos), err)
			}
		}
		if d := f.Divergence; d != nil {
			dvals, all, some, name := check(f, d.Type.Name, d.Args, d.Type.Params)
			if all && some {
				if err := d.Type.New(dvals).Check(); err != nil {
					c.errs.Addf(SetPos(name), "value %v: with it, %s at %s is invalid: %v", c.g.ByName[name].Value[0], d, shortPos(f.Pos), err)
				}
			}
		}
	}
}

// fixedAlpha checks a fixed PYDT alpha whose beta is not fixed: no beta in
// [0, 1) satisfies alpha >= -2 beta unless alpha > -2.
func fixedAlpha(alpha float64) error {
	if !(alpha > -2) || math.IsInf(alpha, 1) {
		return fmt.Errorf("PYDT alpha = %v is fixed, but no beta in [0, 1) satisfies alpha >= -2 beta: a fixed alpha must be finite and greater than -2", alpha)
	}
	return nil
}

// sameShape reports whether two shapes may be equal: equal, or equal in
// rank with a dimension unknown (-1: unbound in partial mode, or invalid
// and reported) where they differ.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] && a[k] >= 0 && b[k] >= 0 {
			return false
		}
	}
	return true
}

// readsUnknown reports whether x reads, directly or through deterministic
// variables, a constant whose value is unknown: one that depends on a
// dimension not bound (in partial mode), or whose definition was reported
// invalid. Its support, and so x's, is then unknown, and x's support is
// not checked: with the dimension bound the model may be valid.
func (c *compiler) readsUnknown(x Expr) bool {
	return readsVia(func(v *Var) bool { return c.failed[v] }, x)
}

// readsVia reports whether one of xs reads, directly or through
// deterministic variables, a variable for which bad holds. A nil
// expression reads nothing.
func readsVia(bad func(v *Var) bool, xs ...Expr) bool {
	seen := map[*Var]bool{}
	var reads func(x Expr) bool
	reads = func(x Expr) bool {
		if x == nil {
			return false
		}
		for _, v := range Vars(x) {
			switch {
			case seen[v]:
			case bad(v):
				return true
			case v.Role == Deterministic && v.Expr != nil:
				seen[v] = true
				if reads(v.Expr) {
					return true
				}
			default:
				seen[v] = true
			}
		}
		return false
	}
	return slices.ContainsFunc(xs, reads)
}

// coverageKnown reports whether the check that f's loops cover every
// element of v can be made: with the shapes bound, when the first
// dimension is known; in partial mode, when every dimension of v and
// every loop bound of f is known (param x : real[3] with for i in 1:2 is
// an error without data).
func (c *compiler) coverageKnown(v *Var, f *Factor) bool {
	if !c.opts.Partial {
		return v.Dims[0] >= 0
	}
	return !slices.ContainsFunc(v.Dims, func(d int) bool { return d < 0 }) &&
		!slices.ContainsFunc(f.Loops, func(l Loop) bool { return l.unknown })
}
