package inference

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/hmm"
)

// This file holds the updates of discrete and vector latent variables
// that a hidden Markov model needs, chosen from capabilities: forward
// filtering, backward sampling of a Markov chain over categories
// (stdlib.CategoryProbs), and conjugate Gibbs updates of Dirichlet vectors
// (stdlib.DirichletPrior) read only by categorical factors.

// ffbsStep draws the whole state sequence z of a Markov chain over K
// categories,
//
//	z[1] ~ Categorical(p0)
//	z[t] ~ Categorical(A[z[t - 1]])   for t in 2:T
//
// from its conditional given everything else, by forward filtering and
// backward sampling (package stdlib/hmm). The emission log-likelihood of
// state k at time t sums the log densities of the elements of z's readers
// that read z[t], evaluated with z[t] = k. When a PYDT's leaves are read
// through z (TreeBinding.Indexed), the step conditions on their sampled
// locations (the schedule puts it after the locations step), and gives the
// leaves their evidence given the new z.
//
// The elements of the tree's leaf factor (y[t, d] ~ Normal(mu[z[t], d],
// sd)) whose other parameters are free of z are not evaluated K times:
// their log density in state k is that of their Gaussian leaf evidence
// (stdlib.GaussianLeaf), 0.5 log(prec/2π) − 0.5 prec (mean − loc[k, d])²,
// with (mean, prec) computed once per element and loc[k, d] read from the
// tree's sampled locations. Only when some other emission reads the leaves
// are the locations copied into the leaf variable for it.
type ffbsStep struct {
	m     *Model
	v     *graph.Var
	init  *graph.Factor // z[1] ~ Categorical(p0)
	next  *graph.Factor // z[t] ~ Categorical(A[z[t - 1]])
	initP graph.Row     // p0
	trans *graph.Var    // A, K×K
	K, T  int
	emits []emitElem // the reader elements, each reading one z[t]
	// logits are the reader elements that are categoricals with logits
	// eta[z[t]] (stdlib.CategoryLogits): their emissions come from each
	// state's log-softmax, computed once per update.
	logits    []logitsEmit
	readers   []*graph.Factor
	trees     []int // the trees whose leaves are read through z
	emitNames []string
	// leafEmits are the leaf factor's elements served by their Gaussian
	// evidence (emits holds the others); copyLeaves are the trees whose
	// leaves an element of emits reads, copied into the leaf variable
	// before the emissions are evaluated.
	leafEmits  []leafEmit
	copyLeaves []int
}

// leafEmit is an element of a tree's indexed leaf factor, y[t, d] ~
// T(mu[z[t], d], ...) with the other parameters free of z: tree is the
// tree's index in Model.Trees, t the state's index (0-based) and off the
// datum's offset in the data.
type leafEmit struct {
	tree, t, off int
}

// ffbsScratch is a chain's scratch space of an ffbsStep.
type ffbsScratch struct {
	logEmit, logInit, logTrans []float64
	zs                         []int
	ws                         hmm.Workspace
	params                     []float64 // a leaf factor's parameters
	lse                        []float64 // the log-softmax normalisers of logit emissions
}

// scratchOf returns the chain's scratch space of step u, made by mk on
// first use.
func scratchOf[T any](ch *Chain, u Updater, mk func() *T) *T {
	if ch.scratch == nil {
		ch.scratch = map[Updater]any{}
	}
	if x, ok := ch.scratch[u]; ok {
		return x.(*T)
	}
	x := mk()
	ch.scratch[u] = x
	return x
}

// emitElem is an element of a reader of z that reads z[t] alone.
type emitElem struct {
	e factorElem
	t int // 0-based
}

// newFFBS returns the FFBS step for v, or nil and why not.
func newFFBS(m *Model, v *graph.Var) (*ffbsStep, string) {
	if len(v.Dims) != 1 || len(v.Defs) != 2 {
		return nil, "not a Markov chain: z[1] ~ Categorical(p0) and z[t] ~ Categorical(A[z[t - 1]]) for t in 2:T"
	}
	s := &ffbsStep{m: m, v: v, T: v.Dims[0]}
	for _, f := range v.Defs {
		if len(f.Loops) == 0 {
			s.init = f
		} else {
			s.next = f
		}
	}
	if s.init == nil || s.next == nil {
		return nil, "not a Markov chain: z[1] ~ Categorical(p0) and z[t] ~ Categorical(A[z[t - 1]]) for t in 2:T"
	}
	probs := func(f *graph.Factor) (graph.Row, bool) {
		c, ok := f.Type.(stdlib.CategoryProbs)
		if !ok {
			return graph.Row{}, false
		}
		r, ok := f.Args[c.ProbsParam()].(graph.Row)
		for i, a := range f.Args {
			if i != c.ProbsParam() && graph.Reads(a, v) {
				return graph.Row{}, false
			}
		}
		return r, ok
	}
	p0, ok1 := probs(s.init)
	pt, ok2 := probs(s.next)
	if !ok1 || !ok2 || graph.Reads(p0, v) || len(s.init.Index) != 1 || s.init.Index[0] != graph.Expr(graph.Num{V: 1}) {
		return nil, "the first state is not z[1] ~ Categorical(p0) with p0 free of z"
	}
	l := s.next.Loops
	li, ok := s.next.Index[0].(graph.LoopIndex)
	if len(l) != 1 || !ok || li.Slot != l[0].Slot || l[0].Lo != 2 || l[0].Hi != s.T {
		return nil, "the transitions are not z[t] ~ Categorical(...) for t in 2:T"
	}
	prev := graph.Elem{V: v, Idx: []graph.Expr{graph.Op{Op: '-', X: li, Y: graph.Num{V: 1}}}}
	if len(pt.Idx) != 1 || len(pt.V.Dims) != 2 || pt.V == v || !sameExpr(pt.Idx[0], prev) {
		return nil, "the transitions do not read a row A[z[t - 1]] of a K×K matrix A"
	}
	s.initP, s.trans, s.K = p0, pt.V, p0.Len()
	if pt.V.Dims[0] != s.K || pt.V.Dims[1] != s.K || v.Categories > 0 && v.Categories != s.K {
		return nil, fmt.Sprintf("the states' numbers disagree: %s has length %d, %s is %s", p0, s.K, pt.V.Name, pt.V.Shape())
	}
	fs, dets := m.G.Readers(v)
	if len(dets) > 0 {
		return nil, fmt.Sprintf("deterministic variables read %s", v.Name)
	}
	env := graph.NewEnv(m.G)
	for k, b := range m.Trees {
		if b.index != nil && graph.Reads(b.index, v) {
			s.trees = append(s.trees, k)
		}
	}
	for _, f := range fs {
		if f.IsPYDT() {
			return nil, fmt.Sprintf("%s reads %s", f, v.Name)
		}
		elems, err := plate(f, env)
		if err != nil {
			return nil, err.Error()
		}
		leafTree := s.leafTreeOf(f)
		for _, e := range elems {
			t, ok := readsOne(e, v, env)
			if !ok {
				return nil, fmt.Sprintf("%s does not read exactly one element of %s, at an index fixed by loop indices and constants", f, v.Name)
			}
			switch le, isLogits := logitsEmitOf(e, v, t, s.K); {
			case leafTree >= 0:
				s.leafEmits = append(s.leafEmits, leafEmit{tree: leafTree, t: t, off: e.off})
			case isLogits:
				s.logits = append(s.logits, le)
			default:
				s.emits = append(s.emits, emitElem{e: e, t: t})
			}
		}
		if leafTree < 0 {
			for _, k := range s.trees {
				if f.Reads(m.Trees[k].Leaves) && !slices.Contains(s.copyLeaves, k) {
					s.copyLeaves = append(s.copyLeaves, k)
				}
			}
		}
		s.readers = append(s.readers, f)
		if !slices.Contains(s.emitNames, f.Target.Name) {
			s.emitNames = append(s.emitNames, f.Target.Name)
		}
	}
	return s, ""
}

// leafTreeOf returns the index in Model.Trees of the tree whose indexed
// leaf factor f is, when f gives its leaves Gaussian evidence, its index
// is an element of s.v itself (mu[z[t], d], not mu[K + 1 - z[t], d]),
// every state is a leaf row, and f reads s.v nowhere else: its emissions
// are then served by that evidence (leafEmit). Else -1.
func (s *ffbsStep) leafTreeOf(f *graph.Factor) int {
	for _, k := range s.trees {
		b := s.m.Trees[k]
		if b.Leaf != f || b.gaussian == nil || b.Data == nil || b.Data != f.Target || b.N < s.K {
			continue
		}
		if ix, ok := b.index.(graph.Elem); !ok || ix.V != s.v {
			continue
		}
		if slices.ContainsFunc(f.Args[1:], func(a graph.Expr) bool { return graph.Reads(a, s.v) }) {
			return -1
		}
		return k
	}
	return -1
}

// sameExpr reports whether two expressions print the same: the forms
// compared here (z[t - 1]) print uniquely.
func sameExpr(a, b graph.Expr) bool { return a.String() == b.String() }

// readsOne returns t when element e of a factor reads exactly one element
// of v, z[t] (0-based), at an index fixed by loop indices and constants.
func readsOne(e factorElem, v *graph.Var, env *graph.Env) (int, bool) {
	for k, l := range e.f.Loops {
		env.Loop[l.Slot] = e.loop[k]
	}
	t, ok := -1, true
	var walk func(x graph.Expr)
	walk = func(x graph.Expr) {
		switch x := x.(type) {
		case graph.Elem:
			if x.V == v {
				off, static := staticOffset(x, env)
				if !static || t >= 0 && t != off {
					ok = false
				}
				t = off
				return
			}
			for _, ix := range x.Idx {
				walk(ix)
			}
		case graph.Row:
			if x.V == v {
				ok = false
			}
			for _, ix := range x.Idx {
				walk(ix)
			}
		case graph.Ref:
			if x.V == v {
				ok = false
			}
		case graph.Neg:
			walk(x.X)
		case graph.Op:
			walk(x.X)
			walk(x.Y)
		case *graph.Call:
			for _, a := range x.Args {
				walk(a)
			}
		case graph.Num, graph.LoopIndex:
		default:
			if graph.Reads(x, v) {
				ok = false
			}
		}
	}
	for _, a := range e.f.Exprs() {
		walk(a)
	}
	return t, ok && t >= 0
}

func (s *ffbsStep) Name() string { return "ffbs(" + s.v.Name + ")" }

func (s *ffbsStep) Explain() string {
	out := fmt.Sprintf("forward filtering, backward sampling of the %d states of the Markov chain %s (%d categories; initial probabilities %s, transitions rows of %s)",
		s.T, s.v.Name, s.K, s.initP, s.trans.Name)
	if len(s.emitNames) > 0 {
		out += "; emissions: the elements of " + strings.Join(s.emitNames, ", ") + " that read each state"
	}
	if len(s.logits) > 0 {
		out += fmt.Sprintf("; the emissions softmax(%s[z[t]]) from each state's log-softmax, computed once per sweep", s.logits[0].logits.Name)
	}
	for _, k := range s.trees {
		out += fmt.Sprintf("; given the sampled leaf locations %s, which then get the evidence of the data each state is assigned", s.m.Trees[k].Leaves.Name)
	}
	return out
}

func (s *ffbsStep) targets() []siteTarget {
	var terms []term
	terms = append(terms, term{F: s.init, Elem: -1}, term{F: s.next, Elem: -1})
	for _, f := range s.readers {
		terms = append(terms, term{F: f, Elem: -1})
	}
	out := make([]siteTarget, s.T)
	for t := range out {
		out[t] = siteTarget{V: s.v, Off: t, Terms: terms}
	}
	return out
}

func (s *ffbsStep) update(ch *Chain) error {
	env := ch.st.Env
	sc := scratchOf(ch, s, func() *ffbsScratch {
		return &ffbsScratch{logEmit: make([]float64, s.T*s.K), logInit: make([]float64, s.K), logTrans: make([]float64, s.K*s.K), zs: make([]int, s.T)}
	})
	// The leaves read through z by emissions evaluated in full: their
	// sampled locations.
	for _, k := range s.copyLeaves {
		t := ch.trees[k]
		n := t.b.N * t.b.D
		copy(env.Values[t.b.Leaves.ID], t.locs[:n])
	}
	p0, err := s.initP.View(env)
	if err != nil {
		return err
	}
	A := env.Values[s.trans.ID]
	for k, p := range p0 {
		sc.logInit[k] = math.Log(p)
	}
	for k, p := range A {
		sc.logTrans[k] = math.Log(p)
	}
	z := env.Values[s.v.ID]
	clear(sc.logEmit)
	for _, em := range s.emits {
		saved := z[em.t]
		for k := range s.K {
			z[em.t] = float64(k + 1)
			sc.logEmit[em.t*s.K+k] += ch.logElem(em.e)
		}
		z[em.t] = saved
	}
	addLogitsEmissions(env, s.logits, s.K, sc.logEmit, &sc.lse)
	if err := env.Err(); err != nil {
		return err
	}
	if err := s.leafEmissions(ch, sc); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	c := hmm.Chain{K: s.K, LogInit: sc.logInit, LogTrans: sc.logTrans}
	if _, err := c.FFBS(ch.rng, sc.logEmit, s.T, sc.zs, &sc.ws); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	for t, k := range sc.zs {
		z[t] = float64(k + 1)
	}
	if err := ch.m.Refresh(env); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	for _, k := range s.trees {
		if err := ch.trees[k].syncEvidence(env, &ch.leafParams); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return nil
}

// leafEmissions adds to sc.logEmit the log densities of the leaf factors'
// elements (leafEmits) in every state: that of their Gaussian evidence
// (mean, prec) about the location loc[k, d] of state k, computed once per
// element, with loc the tree's sampled locations.
func (s *ffbsStep) leafEmissions(ch *Chain, sc *ffbsScratch) error {
	env := ch.st.Env
	for _, le := range s.leafEmits {
		t := ch.trees[le.tree]
		b := t.b
		y := env.Values[b.Data.ID][le.off]
		if math.IsNaN(y) {
			continue // missing: no evidence
		}
		q, err := b.params(env, le.off, math.NaN(), &sc.params)
		if err != nil {
			return err
		}
		mean, prec, err := b.gaussian.LeafGaussian(y, q)
		if err != nil {
			return fmt.Errorf("%s: %w", b.Leaf, err)
		}
		if math.IsInf(prec, 1) || math.IsNaN(prec) || prec < 0 {
			return fmt.Errorf("%w: %s: evidence of precision %v through the index %s", ErrUnsupported, b.Leaf, prec, b.index)
		}
		if prec == 0 {
			continue
		}
		c := 0.5 * math.Log(prec/(2*math.Pi))
		d := le.off % b.D
		row := sc.logEmit[le.t*s.K : (le.t+1)*s.K]
		for k := range row {
			r := mean - t.locs[k*b.D+d]
			row[k] += c - 0.5*prec*r*r
		}
	}
	return nil
}

// dirichletStep draws a vector variable, or each row of a matrix, with a
// Dirichlet prior (stdlib.DirichletPrior) from its conditional
// Dirichlet(a + n), n the counts of the categories drawn with it as
// probabilities: the variable is read only as the probability vector of
// categorical factors (stdlib.CategoryProbs), such as z[t] ~
// Categorical(trans[z[t - 1]]).
type dirichletStep struct {
	v       *graph.Var
	def     *graph.Factor
	K       int
	readers []*graph.Factor
}

// dirichletScratch is a chain's scratch space of a dirichletStep.
type dirichletScratch struct {
	counts, alpha []float64
	vecArgs       graph.VecArgs
}

// newDirichletGibbs returns the conjugate step for v, or nil and why not.
func newDirichletGibbs(m *Model, v *graph.Var) (*dirichletStep, string) {
	if len(v.Defs) != 1 || v.Def.VecLen == 0 {
		return nil, ""
	}
	if _, ok := v.Def.Type.(stdlib.DirichletPrior); !ok {
		return nil, fmt.Sprintf("%s's prior offers no conjugate update", v.Name)
	}
	if slices.ContainsFunc(v.Def.Exprs(), func(x graph.Expr) bool { return graph.Reads(x, v) }) {
		return nil, fmt.Sprintf("%s's prior reads %s", v.Name, v.Name)
	}
	fs, dets := m.G.Readers(v)
	if len(dets) > 0 {
		return nil, fmt.Sprintf("deterministic variables read %s", v.Name)
	}
	s := &dirichletStep{v: v, def: v.Def, K: v.Def.VecLen}
	for _, f := range fs {
		c, ok := f.Type.(stdlib.CategoryProbs)
		if !ok || f.IsPYDT() || m.leafIndex(f) >= 0 {
			return nil, fmt.Sprintf("%s reads %s and is not categorical", f, v.Name)
		}
		r, ok := f.Args[c.ProbsParam()].(graph.Row)
		if !ok || r.V != v || slices.ContainsFunc(r.Idx, func(x graph.Expr) bool { return graph.Reads(x, v) }) {
			return nil, fmt.Sprintf("%s does not read %s as its probability vector alone", f, v.Name)
		}
		for i, a := range f.Exprs() {
			if i != c.ProbsParam() && graph.Reads(a, v) {
				return nil, fmt.Sprintf("%s reads %s outside its probability vector", f, v.Name)
			}
		}
		s.readers = append(s.readers, f)
	}
	return s, ""
}

// Name is gibbs(v) for a vector and gibbs(v[k]) for the rows of a matrix,
// with the defining statement's own index names.
func (s *dirichletStep) Name() string {
	if len(s.v.Dims) == 1 {
		return "gibbs(" + s.v.Name + ")"
	}
	idx := make([]string, len(s.def.Index))
	for i, x := range s.def.Index {
		idx[i] = x.String()
		if strings.HasPrefix(idx[i], "_") {
			idx[i] = "k"
		}
	}
	return "gibbs(" + s.v.Name + "[" + strings.Join(idx, ", ") + "])"
}

func (s *dirichletStep) Explain() string {
	var names []string
	for _, f := range s.readers {
		if !slices.Contains(names, f.Target.Name) {
			names = append(names, f.Target.Name)
		}
	}
	what := "each row"
	if len(s.v.Dims) == 1 {
		what = "the vector"
	}
	out := fmt.Sprintf("conjugate Gibbs: %s of %s from Dirichlet(a + n), a its %s concentration", what, s.v.Name, s.def.TypeName())
	if len(names) > 0 {
		out += " and n the counts of the categories of " + strings.Join(names, ", ") + " drawn with it"
	} else {
		out += " (nothing reads it: its prior)"
	}
	return out
}

func (s *dirichletStep) targets() []siteTarget {
	out := make([]siteTarget, s.v.Len())
	for off := range out {
		t := siteTarget{V: s.v, Off: off, Terms: []term{{F: s.def, Elem: off / s.K * s.K}}}
		for _, f := range s.readers {
			t.Terms = append(t.Terms, term{F: f, Elem: -1})
		}
		out[off] = t
	}
	return out
}

// addCategoryCounts adds one to counts[at + x − 1] for each element of the
// categorical factor f that is not missing, x its category (1..K) and at
// the offset of its row r (its probability or logit vector) in r's
// variable, laid out as counts is. A value that is not a category 1..K is
// an error.
func addCategoryCounts(env *graph.Env, f *graph.Factor, r graph.Row, K int, counts []float64) error {
	return forEachObserved(env, f, r, func(x float64, at int) error {
		if x != math.Trunc(x) || x < 1 || x > float64(K) {
			return fmt.Errorf("%s = %v is not a category 1..%d", f.Target.Name, x, K)
		}
		counts[at+int(x)-1]++
		return nil
	})
}

func (s *dirichletStep) update(ch *Chain) error {
	env := ch.st.Env
	sc := scratchOf(ch, s, func() *dirichletScratch {
		return &dirichletScratch{counts: make([]float64, s.v.Len()), alpha: make([]float64, s.K)}
	})
	clear(sc.counts)
	for _, f := range s.readers {
		c := f.Type.(stdlib.CategoryProbs)
		if err := addCategoryCounts(env, f, f.Args[c.ProbsParam()].(graph.Row), s.K, sc.counts); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	x := env.Values[s.v.ID]
	err := s.def.ForEach(env, func(off int) error {
		p, err := sc.vecArgs.Eval(s.def, env)
		if err != nil {
			return err
		}
		d := s.def.Type.(stdlib.DirichletPrior)
		if err := d.CheckVector(p, s.K); err != nil {
			return err
		}
		for j := range s.K {
			sc.alpha[j] = d.Concentration(p, j) + sc.counts[off+j]
		}
		return hmm.Dirichlet(ch.rng, sc.alpha, x[off:off+s.K])
	})
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	if err := ch.m.Refresh(env); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	return nil
}
