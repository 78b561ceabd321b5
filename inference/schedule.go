package inference

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
)

// This file holds the parts of the schedule that work element by element:
// which elements of which factors each element of a latent array touches,
// the elementwise slice update built on that, and the description of each
// update's target (the factors its density includes) that run --explain
// prints and the tests check.

// term is one term of an update's target density: a whole factor
// (Elem < 0) or the element of an elementwise factor whose target offset
// is Elem.
type term struct {
	F    *graph.Factor
	Elem int
}

// siteTarget is the target of the update of one latent element: variable
// V at offset Off (0 for a scalar), and the factor terms its density sums.
type siteTarget struct {
	V     *graph.Var
	Off   int
	Terms []term
}

// targeter is implemented by the steps that update latent variables of the
// graph: it lists, per element updated, the factors its target includes.
// The tree's parts count as terms of the PYDT factor (the tree prior and,
// with the locations integrated out, the marginal likelihood) and of the
// leaf factor (whose evidence belief propagation sums).
type targeter interface {
	targets() []siteTarget
}

// factorElem is one element of an elementwise factor's plate: the values
// of its loop indices (in the order of Factor.Loops) and the offset of its
// target element.
type factorElem struct {
	f    *graph.Factor
	loop []int
	off  int
}

// treeReach says how an updated value reaches the tree: through its prior
// (alpha, beta, the divergence function), its variance, or the evidence of
// the leaf factor. The slice targets add the matching tree terms.
type treeReach struct {
	prior bool // the tree prior (alpha, beta, divergence)
	// alphaBeta is set when the value reaches the tree prior through
	// alpha and beta only: the tree is then scored by statistics gathered
	// once per update (pydt.AlphaBetaStats), not by a walk per evaluation.
	alphaBeta bool
	variance  bool // the PYDT variance
	link      bool // the leaf factor's evidence (e.g. the Normal sd)
}

func (r treeReach) any() bool { return r.prior || r.variance || r.link }

// treeTerms returns the tree terms that rs (a reach per tree of m) add to
// a target.
func treeTerms(m *Model, rs []treeReach) []term {
	var out []term
	for k, r := range rs {
		b := m.Trees[k]
		if r.any() {
			out = append(out, term{F: b.Factor, Elem: -1})
		}
		if r.link && b.Leaf != nil {
			out = append(out, term{F: b.Leaf, Elem: -1})
		}
	}
	return out
}

// describeTrees names the parts of the trees' densities that rs (a reach
// per tree of m) add; in a model with several PYDTs, each tree by its
// variable.
func describeTrees(m *Model, rs []treeReach) []string {
	var parts []string
	for k, r := range rs {
		of := ""
		if m.Several() {
			of = " of " + m.Trees[k].Leaves.Name
		}
		if r.prior {
			parts = append(parts, "the tree prior"+of)
		}
		if r.variance || r.link {
			parts = append(parts, "the marginal likelihood"+of+" (belief propagation)")
		}
		if b := m.Trees[k]; r.link && b.auxLog != nil {
			parts = append(parts, fmt.Sprintf("the density of the %s auxiliaries of %s given them (stdlib.AuxLogProber)", b.Leaf.TypeName(), b.Data.Name))
		}
	}
	return parts
}

// fixedVar reports whether v's value is known when the schedule is built
// and never changes: constants, data and clamped values.
func fixedVar(v *graph.Var) bool {
	return v.Role == graph.Constant || v.Role == graph.Observed || v.Role == graph.Clamped
}

// staticEval evaluates an index expression that reads only fixed values
// and loop indices; ok is false when it reads anything else, or an element
// outside its array.
func staticEval(x graph.Expr, env *graph.Env) (float64, bool) {
	switch x := x.(type) {
	case graph.Num:
		return x.V, true
	case graph.LoopIndex:
		return x.Eval(env), true
	case graph.Ref:
		if !fixedVar(x.V) {
			return 0, false
		}
		return x.Eval(env), true
	case graph.Elem:
		if !fixedVar(x.V) {
			return 0, false
		}
		off, ok := staticOffset(x, env)
		if !ok {
			return 0, false
		}
		return env.Values[x.V.ID][off], true
	case graph.Neg:
		y, ok := staticEval(x.X, env)
		return -y, ok
	case graph.Op:
		if _, ok := staticEval(x.X, env); !ok {
			return 0, false
		}
		if _, ok := staticEval(x.Y, env); !ok {
			return 0, false
		}
		return x.Eval(env), true
	case *graph.Call:
		for _, a := range x.Args {
			if _, ok := staticEval(a, env); !ok {
				return 0, false
			}
		}
		return x.Eval(env), true
	}
	return 0, false
}

// staticOffset returns the offset of the element e reads when its indices
// are static (see staticEval) and in range.
func staticOffset(e graph.Elem, env *graph.Env) (int, bool) {
	off := 0
	for k, ix := range e.Idx {
		f, ok := staticEval(ix, env)
		i := int(f) - 1
		if !ok || f != math.Trunc(f) || i < 0 || i >= e.V.Dims[k] {
			return 0, false
		}
		off = off*e.V.Dims[k] + i
	}
	return off, true
}

// offsetSet is a set of offsets of one array variable; all marks a read
// whose element is not known when the schedule is built.
type offsetSet struct {
	offs []int
	all  bool
}

func (s *offsetSet) add(off int) {
	if !slices.Contains(s.offs, off) {
		s.offs = append(s.offs, off)
	}
}

func (s *offsetSet) union(t offsetSet) {
	s.all = s.all || t.all
	for _, o := range t.offs {
		s.add(o)
	}
}

func (s offsetSet) empty() bool { return !s.all && len(s.offs) == 0 }

// elemReads adds to s the elements of the array v that x reads at the loop
// values in env, directly or through the deterministic variables of dets
// (their own sets).
func elemReads(x graph.Expr, v *graph.Var, env *graph.Env, dets map[*graph.Var]offsetSet, s *offsetSet) {
	if x == nil {
		return
	}
	switch x := x.(type) {
	case graph.Num, graph.LoopIndex:
	case graph.Ref:
		if d, ok := dets[x.V]; ok {
			s.union(d)
		} else if x.V == v {
			s.all = true
		}
	case graph.Elem:
		if d, ok := dets[x.V]; ok {
			s.union(d) // an element of a deterministic array: what any element reads
		}
		if x.V == v {
			if off, ok := staticOffset(x, env); ok {
				s.add(off)
			} else {
				s.all = true
			}
		}
		for _, ix := range x.Idx {
			if graph.Reads(ix, v) {
				s.all = true // v read inside an index
			}
			elemReads(ix, v, env, dets, s)
		}
	case graph.Neg:
		elemReads(x.X, v, env, dets, s)
	case graph.Op:
		elemReads(x.X, v, env, dets, s)
		elemReads(x.Y, v, env, dets, s)
	case *graph.Call:
		for _, a := range x.Args {
			elemReads(a, v, env, dets, s)
		}
	default:
		// An expression this analysis does not know: conservatively,
		// every element.
		for _, w := range graph.Vars(x) {
			if w == v || dets[w].all || len(dets[w].offs) > 0 {
				s.all = true
			}
		}
	}
}

// detReads returns, for each deterministic variable that reads the array
// v, the elements of v it depends on.
func detReads(m *Model, v *graph.Var, env *graph.Env) map[*graph.Var]offsetSet {
	dets := map[*graph.Var]offsetSet{}
	for _, d := range m.G.Deterministic { // in dependency order
		var s offsetSet
		elemReads(d.Expr, v, env, dets, &s)
		if !s.empty() {
			dets[d] = s
		}
	}
	return dets
}

// plate lists the elements of f's plate with their loop values and target
// offsets.
func plate(f *graph.Factor, env *graph.Env) ([]factorElem, error) {
	var out []factorElem
	err := f.ForEach(env, func(off int) error {
		loop := make([]int, len(f.Loops))
		for k, l := range f.Loops {
			loop[k] = env.Loop[l.Slot]
		}
		out = append(out, factorElem{f: f, loop: loop, off: off})
		return nil
	})
	return out, err
}

// factorElemReads returns the elements of v that element e of f reads
// through its parameters.
func factorElemReads(e factorElem, v *graph.Var, env *graph.Env, dets map[*graph.Var]offsetSet) offsetSet {
	for k, l := range e.f.Loops {
		env.Loop[l.Slot] = e.loop[k]
	}
	var s offsetSet
	for _, a := range e.f.Args {
		elemReads(a, v, env, dets, &s)
	}
	if e.f.Divergence != nil {
		for _, a := range e.f.Divergence.Args {
			elemReads(a, v, env, dets, &s)
		}
	}
	return s
}

// elemSite is one element of a latent array and what its update's target
// reads: its own factor's element, the elements of other factors that read
// it, factors that must be evaluated whole (they read it at an index not
// known in advance), and the tree.
type elemSite struct {
	off    int
	own    factorElem
	elems  []factorElem
	wholes []*graph.Factor
	tree   []treeReach // parallel to Model.Trees
	// dets are the deterministic variables that read the element, in
	// dependency order: the only ones a change of it changes.
	dets []*graph.Var
}

// elemSites finds, for every element of the latent array v, the terms of
// its conditional density.
func elemSites(m *Model, v *graph.Var) ([]elemSite, error) {
	env := graph.NewEnv(m.G)
	own, err := plate(v.Def, env)
	if err != nil {
		return nil, err
	}
	sites := make([]elemSite, v.Len())
	seen := make([]bool, v.Len())
	for _, e := range own {
		if seen[e.off] {
			return nil, fmt.Errorf("%s: element %d has more than one distribution", v.Name, e.off+1)
		}
		seen[e.off] = true
		sites[e.off] = elemSite{off: e.off, own: e, tree: make([]treeReach, len(m.Trees))}
	}
	if !v.Def.Elementwise || slices.Contains(seen, false) {
		return nil, fmt.Errorf("%w: %s's distribution does not give every element its own density (%s)", ErrUnsupported, v.Name, v.Def)
	}
	dets := detReads(m, v, env)
	for _, d := range m.G.Deterministic { // in dependency order
		s, ok := dets[d]
		if !ok {
			continue
		}
		for k := range sites {
			if s.all || slices.Contains(s.offs, k) {
				sites[k].dets = append(sites[k].dets, d)
			}
		}
	}
	fs, _ := m.G.Readers(v)
	for _, f := range fs {
		if m.treeIndex(f) >= 0 || m.leafIndex(f) >= 0 {
			if err := treeSites(m, f, v, env, dets, sites); err != nil {
				return nil, err
			}
			continue
		}
		elems, err := plate(f, env)
		if err != nil {
			return nil, err
		}
		whole := false
		perSite := map[int][]factorElem{}
		for _, e := range elems {
			s := factorElemReads(e, v, env, dets)
			if s.all {
				whole = true
				break
			}
			for _, o := range s.offs {
				perSite[o] = append(perSite[o], e)
			}
		}
		for k := range sites {
			if whole {
				sites[k].wholes = append(sites[k].wholes, f)
			} else {
				sites[k].elems = append(sites[k].elems, perSite[k]...)
			}
		}
	}
	return sites, nil
}

// treeSites sets the tree reach of the elements of v that the PYDT factor
// or the leaf factor f reads.
func treeSites(m *Model, f *graph.Factor, v *graph.Var, env *graph.Env, dets map[*graph.Var]offsetSet, sites []elemSite) error {
	t := m.treeIndex(f)
	if t < 0 {
		t = m.leafIndex(f)
	}
	mark := func(x graph.Expr, set func(r *treeReach)) {
		var s offsetSet
		elemReads(x, v, env, dets, &s)
		for k := range sites {
			if s.all || slices.Contains(s.offs, k) {
				set(&sites[k].tree[t])
			}
		}
	}
	if f == m.Trees[t].Leaf {
		if err := m.Trees[t].paramUpdate(v); err != nil {
			return err
		}
		es, err := plate(f, env)
		if err != nil {
			return err
		}
		for _, e := range es {
			for k, l := range f.Loops {
				env.Loop[l.Slot] = e.loop[k]
			}
			for _, a := range f.Args {
				mark(a, func(r *treeReach) { r.link = true })
			}
		}
		return nil
	}
	mark(f.Args[graph.PYDTAlpha], func(r *treeReach) { r.prior, r.alphaBeta = true, !r.divergence() })
	mark(f.Args[graph.PYDTBeta], func(r *treeReach) { r.prior, r.alphaBeta = true, !r.divergence() })
	if f.Divergence != nil {
		for _, a := range f.Divergence.Args {
			mark(a, func(r *treeReach) { r.prior, r.alphaBeta = true, false })
		}
	}
	if l := f.DimLoop; l != nil {
		// A variance per dimension: dimension d reads the elements at
		// its own loop value.
		for d := l.Lo; d <= l.Hi; d++ {
			env.Loop[l.Slot] = d
			mark(f.Args[graph.PYDTVariance], func(r *treeReach) { r.variance = true })
		}
		return nil
	}
	mark(f.Args[graph.PYDTVariance], func(r *treeReach) { r.variance = true })
	return nil
}

// divergence reports whether the value reaches the divergence function:
// it reaches the prior other than through alpha and beta.
func (r treeReach) divergence() bool { return r.prior && !r.alphaBeta }

// elemSliceStep slice samples each element of a latent array in turn, on
// a scale matched to its support, each from its own conditional: its own
// density times the elements of the factors that read it.
type elemSliceStep struct {
	m         *Model
	v         *graph.Var
	transform scalar.Transform
	sites     []elemSite
	// readers names the factors that read v, for Explain.
	readers []string
	tree    []treeReach // per tree, the union of the sites' tree reaches
	// why says why no conjugate update was chosen.
	why string
}

func newElemSliceStep(m *Model, v *graph.Var) (*elemSliceStep, error) {
	tr, err := supportTransform(v)
	if err != nil {
		return nil, err
	}
	sites, err := elemSites(m, v)
	if err != nil {
		return nil, err
	}
	s := &elemSliceStep{m: m, v: v, transform: tr, sites: sites, tree: make([]treeReach, len(m.Trees))}
	fs, _ := m.G.Readers(v)
	for _, f := range fs {
		if m.treeIndex(f) < 0 && m.leafIndex(f) < 0 {
			s.readers = append(s.readers, f.Target.Name)
		}
	}
	for _, st := range sites {
		for k, r := range st.tree {
			u := &s.tree[k]
			u.prior = u.prior || r.prior
			u.variance = u.variance || r.variance
			u.link = u.link || r.link
		}
	}
	return s, nil
}

func (s *elemSliceStep) Name() string { return "slice(" + s.v.Name + ")" }

func (s *elemSliceStep) Explain() string {
	parts := describeTrees(s.m, s.tree)
	for _, r := range s.readers {
		parts = append(parts, "the elements of "+r+"'s density that read it")
	}
	target := "its own density"
	if len(parts) > 0 {
		target += " × " + strings.Join(parts, " × ")
	}
	out := fmt.Sprintf("elementwise slice sampling of each of the %d elements on the %s; target of each: %s", len(s.sites), scaleName(s.transform), target)
	if s.why != "" {
		out += "; no conjugate update: " + s.why
	}
	return out
}

func (s *elemSliceStep) targets() []siteTarget {
	out := make([]siteTarget, len(s.sites))
	for k, st := range s.sites {
		t := siteTarget{V: s.v, Off: st.off, Terms: []term{{F: st.own.f, Elem: st.own.off}}}
		for _, e := range st.elems {
			t.Terms = append(t.Terms, term{F: e.f, Elem: e.off})
		}
		for _, f := range st.wholes {
			t.Terms = append(t.Terms, term{F: f, Elem: -1})
		}
		t.Terms = append(t.Terms, treeTerms(s.m, st.tree)...)
		out[k] = t
	}
	return out
}

func (s *elemSliceStep) update(ch *Chain) error {
	x := ch.st.Env.Values[s.v.ID]
	tuner := ch.tuner(s.v)
	// The alpha-beta statistics of a tree depend on the tree and its
	// divergence function alone, neither of which an element of v changes
	// unless it reaches the divergence: they are recomputed once per step,
	// and again after an element that reaches the divergence.
	var buf [4]bool // (a step may serve several chains at once: no scratch in s)
	fresh := buf[:0]
	for range ch.trees {
		fresh = append(fresh, false)
	}
	alphaBeta := false
	for i := range s.sites {
		site := &s.sites[i]
		for k, r := range site.tree {
			if r.alphaBeta && !fresh[k] {
				t := ch.trees[k]
				t.abStats.Reset(t.Tree, t.moves.Divergence())
				fresh[k] = true
			}
			alphaBeta = alphaBeta || r.alphaBeta
		}
		x0 := x[site.off]
		var terr error // the first error of the target
		logf := func(y float64) float64 {
			lp, err := ch.elemTarget(s.v, site, y)
			if err != nil && terr == nil {
				terr = err
			}
			return lp
		}
		var y float64
		var err error
		if ch.tuning {
			y, _, err = tuner.UpdateTransformed(ch.rng, x0, s.transform, logf)
		} else {
			y, _, err = tuner.Slice.UpdateTransformed(ch.rng, x0, s.transform, logf)
		}
		if terr != nil {
			return fmt.Errorf("%s: %w", s.Name(), terr)
		}
		// name is built only on the error paths: this loop runs once per
		// element per sweep.
		name := func() string { return fmt.Sprintf("%s[%s]", s.v.Name, elemIndex(s.v, site.off)) }
		if err != nil {
			if _, err := ch.elemTarget(s.v, site, x0); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
			n := name()
			return ch.notFinite(s.Name(), fmt.Sprintf("the density of %s's conditional at %s = %v", n, n, x0))
		}
		// Leave the chain at y: the last evaluation may have been
		// elsewhere.
		got, err := ch.elemTarget(s.v, site, y)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		if !scalar.Finite(got) {
			name := name()
			return fmt.Errorf("slice(%s): the posterior density is not finite (%v) at %s = %v; check the priors and data", s.v.Name, got, name, y)
		}
		for k, r := range site.tree {
			if r.divergence() {
				fresh[k] = false // addTree passed the tree sampler a new divergence
			}
		}
	}
	// The tree samplers' alpha and beta follow the elements now, not per
	// element: nothing between reads them (addTree passes the prior
	// itself where an element reaches the divergence).
	if alphaBeta {
		if err := ch.syncPrior(); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return nil
}

// elemIndex writes the 1-based indices of offset off of v: "3" or "2, 1".
func elemIndex(v *graph.Var, off int) string {
	idx := make([]string, len(v.Dims))
	for k := len(v.Dims) - 1; k >= 0; k-- {
		idx[k] = fmt.Sprint(off%v.Dims[k] + 1)
		off /= v.Dims[k]
	}
	return strings.Join(idx, ", ")
}

// elemTarget sets element site.off of v to x and returns the log density
// of everything that depends on it, up to a constant.
//
// Only the deterministic variables that read the element are evaluated
// again (the others are up to date); an error evaluating them (an index
// outside its array) is returned, with -Inf.
func (ch *Chain) elemTarget(v *graph.Var, site *elemSite, x float64) (float64, error) {
	ch.st.Env.Values[v.ID][site.off] = x
	if err := graph.EvalDeterministicVars(ch.st.Env, site.dets); err != nil {
		return math.Inf(-1), err
	}
	lp := ch.logElem(site.own)
	for _, e := range site.elems {
		lp += ch.logElem(e)
	}
	for _, f := range site.wholes {
		lp += ch.logFactor(f)
	}
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return math.Inf(-1), nil
	}
	return ch.addTree(lp, site.tree), nil
}

// logElem is the log density of one element of a factor at the current
// values: 0 when its value is missing, -Inf when its parameters are
// invalid.
func (ch *Chain) logElem(e factorElem) float64 {
	env := ch.st.Env
	for k, l := range e.f.Loops {
		env.Loop[l.Slot] = e.loop[k]
	}
	if vt, ok := e.f.Vector(); ok {
		return vectorLogDensity(e.f, vt, env, e.off, &ch.vecArgs)
	}
	x := env.Values[e.f.Target.ID][e.off]
	if math.IsNaN(x) {
		return 0
	}
	if cap(ch.params) < len(e.f.Args) {
		ch.params = make([]float64, len(e.f.Args))
	}
	p := ch.params[:len(e.f.Args)]
	for i, a := range e.f.Args {
		p[i] = a.Eval(env)
	}
	dist, ok := e.f.Scalar()
	if !ok || dist.CheckParams(p) != nil {
		return math.Inf(-1)
	}
	return dist.LogProb(x, p)
}

// addTree adds to lp the tree terms that rs (a reach per tree) reach, in
// the chain's current state: each tree's prior (by alpha-beta statistics or
// in full) and marginal likelihood. It returns -Inf where they cannot be
// evaluated.
func (ch *Chain) addTree(lp float64, rs []treeReach) float64 {
	env := ch.st.Env
	for k, r := range rs {
		t := ch.trees[k]
		switch {
		case r.alphaBeta:
			f := t.b.Factor
			lp += t.abStats.LogPriorS(f.Args[graph.PYDTAlpha].Eval(env), f.Args[graph.PYDTBeta].Eval(env), &t.abH)
		case r.prior:
			if err := t.syncPrior(env); err != nil {
				return math.Inf(-1)
			}
			lp += t.logTreeS()
		}
		if r.variance {
			if err := t.syncVariance(env); err != nil {
				return math.Inf(-1)
			}
		}
		if r.link {
			if err := t.syncEvidence(env, &ch.leafParams); err != nil {
				return math.Inf(-1)
			}
			// An augmented likelihood's parameters also enter the
			// auxiliaries' own density (stdlib.AuxLogProber).
			a, err := t.b.auxLogProb(env, t.aux, &ch.leafParams)
			if err != nil {
				return math.Inf(-1)
			}
			lp += a
		}
		if r.variance || r.link {
			lp += t.logLik()
		}
	}
	if math.IsNaN(lp) {
		return math.Inf(-1)
	}
	return lp
}

// scaleName names the scale a transform samples on.
func scaleName(tr scalar.Transform) string {
	switch lo, hi := tr.Lo(), tr.Hi(); {
	case !math.IsInf(lo, -1) && !math.IsInf(hi, 1):
		return fmt.Sprintf("logit scale of (%g, %g)", lo, hi)
	case !math.IsInf(lo, -1):
		return "log scale"
	}
	return "real line"
}

func (g gibbsCStep) targets() []siteTarget {
	t := siteTarget{V: g.v, Terms: []term{{F: g.v.Def, Elem: -1}}}
	for _, k := range g.trees {
		t.Terms = append(t.Terms, term{F: g.m.Trees[k].Factor, Elem: -1})
	}
	return []siteTarget{t}
}

func (g gibbsPrecisionDimsStep) targets() []siteTarget {
	out := make([]siteTarget, g.v.Len())
	for d := range out {
		out[d] = siteTarget{V: g.v, Off: d, Terms: []term{{F: g.v.Def, Elem: d}, {F: g.tree, Elem: -1}}}
	}
	return out
}

func (g gibbsPrecisionStep) targets() []siteTarget {
	t := siteTarget{V: g.v, Terms: []term{{F: g.v.Def, Elem: -1}}}
	for _, k := range g.trees {
		t.Terms = append(t.Terms, term{F: g.m.Trees[k].Factor, Elem: -1})
	}
	return []siteTarget{t}
}
