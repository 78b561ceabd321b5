package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// Updater is one step of an MCMC schedule: it updates part of a chain's
// state leaving the posterior invariant.
type Updater interface {
	// Name names the step for tables: "slice(alpha)", "gibbs(c)", ...
	Name() string
	// Explain says what the step updates and why it was chosen.
	Explain() string
	update(ch *Chain) error
}

// Schedule is the ordered list of updates of one sweep, chosen from the
// factor graph in the manner of JAGS's sampler factories: each latent
// variable gets the best update its surrounding factors allow.
type Schedule struct {
	Steps []Updater
}

// Explain writes one line per step, the names in a column at least 22
// characters wide and as wide as the longest name, so that the
// explanations line up.
func (s *Schedule) Explain() string {
	width := 22
	for _, st := range s.Steps {
		width = max(width, utf8.RuneCountInString(st.Name()))
	}
	var b strings.Builder
	for i, st := range s.Steps {
		fmt.Fprintf(&b, "%2d. %-*s %s\n", i+1, width, st.Name(), st.Explain())
	}
	return b.String()
}

// NewSchedule chooses the updates for m: the tree moves for the PYDT,
// then for every latent variable, scalar or array, the best update its
// factors allow (a conjugate Gibbs update where a capability says so, slice
// sampling otherwise, elementwise for arrays), the moves that act on
// several variables at once, and the steps that condition on sampled
// locations. A latent variable that no update can serve is an error naming
// it: the engine never leaves one at its starting value.
func NewSchedule(m *Model) (*Schedule, error) {
	s := &Schedule{}
	for k := range m.Trees {
		s.Steps = append(s.Steps, treeStep{m: m, k: k, local: treemove.DefaultLocalMovesPerLeaf})
	}
	var later []Updater // steps that condition on sampled locations
	needLocs := false
	for _, v := range m.G.Vars {
		if v.Role != graph.Latent || v.Def != nil && v.Def.IsPYDT() {
			continue
		}
		// A Markov chain over categories: FFBS, after the locations
		// of any tree whose leaves it indexes.
		f, whyF := newFFBS(m, v)
		if f != nil {
			later = append(later, f)
			needLocs = needLocs || len(f.trees) > 0
			continue
		}
		// A categorical array whose elements are independent given the
		// rest (topic assignments): Gibbs by enumeration.
		cg, whyC := newCatGibbs(m, v)
		if cg != nil {
			if len(cg.trees) > 0 {
				later = append(later, cg)
				needLocs = true
			} else {
				s.Steps = append(s.Steps, cg)
			}
			continue
		}
		d, whyD := newDirichletGibbs(m, v)
		if d != nil {
			s.Steps = append(s.Steps, d)
			continue
		}
		if err := servable(m, v); err != nil {
			if v.Def != nil && whyF != "" {
				if _, cat := v.Def.Type.(stdlib.CategoryProbs); cat {
					if whyC != "" {
						return nil, fmt.Errorf("%w (no FFBS: %s; no Gibbs by enumeration: %s)", err, whyF, whyC)
					}
					return nil, fmt.Errorf("%w (no FFBS: %s)", err, whyF)
				}
			}
			if whyD != "" {
				return nil, fmt.Errorf("%w (no conjugate update: %s)", err, whyD)
			}
			return nil, err
		}
		// Per-dimension precisions of the PYDT variance, with the data at
		// the leaves: conjugate given the tree, the locations integrated
		// out. With a latent leaf layer the same trap as below applies
		// (given the locations), and no conjugate update without them.
		precDims, trapped := gibbsPrecisionDims(m, v)
		if trapped && m.Trees[precDims.k].Leaf == nil {
			s.Steps = append(s.Steps, precDims)
			continue
		}
		if !v.Scalar() {
			g, why := elemGammaConj(m, v)
			if g != nil {
				s.Steps = append(s.Steps, g)
				continue
			}
			if trapped {
				why = trapNoteOf(m.Trees[precDims.k].Leaves.Name)
			}
			u, err := newElemSliceStep(m, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.Name, err)
			}
			u.why = why
			s.Steps = append(s.Steps, u)
			continue
		}
		if g, ok := gibbsC(m, v); ok {
			s.Steps = append(s.Steps, g)
			continue
		}
		g, why := gammaConj(m, v)
		if g != nil {
			s.Steps = append(s.Steps, g)
			continue
		}
		// With a latent leaf layer (Probit, Normal noise) the conjugate
		// update given sampled locations is trapped near t = 1: leaf
		// displacements below float64 resolution read as zero spread and
		// draw an ever larger precision (docs/probit-mixing.md,
		// docs/clustering.md). Slice sampling with the locations integrated
		// out is used instead.
		if g, ok := gibbsPrecision(m, v); ok {
			if g.exact(m) {
				// The leaves are exact observations: the conditional
				// given the tree integrates the locations out.
				s.Steps = append(s.Steps, g)
				continue
			}
			why = g.trapNote(m)
		}
		u, err := newSliceStep(m, v)
		if err != nil {
			return nil, err
		}
		u.why = why
		s.Steps = append(s.Steps, u)
	}
	for k := range m.Trees {
		if u := newSoftmaxLeaf(m, k); u != nil {
			s.Steps = append(s.Steps, u)
		}
	}
	for k, b := range m.Trees {
		if b.Augmented() == nil {
			continue
		}
		needLocs = true
		if z, ok := probitLatentScale(m, k); ok {
			later = append(later, z)
		}
		later = append(later, augmentStep{b: b, k: k, several: m.Several()})
		// The variance in the non-centred coordinates of u, after u was
		// drawn given the locations and before hmc(u) draws it afresh
		// given the tree and the new variance: the tree moves never see
		// the transported u.
		if g, ok := probitGHK(m, k); ok {
			later = append(later, g)
		}
		if h, ok := probitHMC(m, k); ok {
			later = append(later, h)
		}
	}
	// The moves that act on one tree and its parameters together, tree by
	// tree: every PYDT gets those its parameters allow.
	for k, b := range m.Trees {
		if r, ok := ridge(m, k); ok {
			s.Steps = append(s.Steps, r)
		}
		if p, ok := probitScale(m, k); ok {
			s.Steps = append(s.Steps, p)
		}
		// The variance and the times along the orbit on which the
		// likelihood of u is invariant (u is the state here, the
		// locations are not).
		if o, ok := probitOrbit(m, k); ok {
			s.Steps = append(s.Steps, o)
		}
		if c, ok := timeScale(m, k); ok && b.Leaf != nil {
			s.Steps = append(s.Steps, c)
		}
	}
	if needLocs {
		s.Steps = append(s.Steps, locationsStep{m: m})
	}
	s.Steps = append(s.Steps, later...)
	return s, nil
}

// servable reports why no update can serve the latent variable v, or nil.
func servable(m *Model, v *graph.Var) error {
	switch {
	case v.Def == nil:
		return fmt.Errorf("%w: %s is latent but has no distribution", ErrUnsupported, v.Name)
	}
	dist, ok := v.Def.Scalar()
	switch {
	case !ok:
		return fmt.Errorf("%w: %s ~ %s: the engine has no update for a latent variable of this node type", ErrUnsupported, v.Name, v.Def.TypeName())
	case dist.Support().Discrete():
		return fmt.Errorf("%w: %s is discrete (%v) and the engine has no update for a discrete latent variable; "+
			"observe it (data) or clamp it (--set)", ErrUnsupported, v.Name, dist.Support())
	case v.Scalar() && (v.Def.Elementwise || len(v.Def.Loops) > 0):
		return fmt.Errorf("%w: %s has an elementwise distribution", ErrUnsupported, v.Name)
	}
	return nil
}

// constGammaPrior reports whether v's prior is a Gamma (a
// stdlib.GammaPrior) with constant parameters, and returns it.
func constGammaPrior(v *graph.Var) (scalar.Gamma, bool) {
	f := v.Def
	prior, ok := f.Type.(stdlib.GammaPrior)
	if !ok {
		return scalar.Gamma{}, false
	}
	p := make([]float64, len(f.Args))
	for i, a := range f.Args {
		if len(graph.Vars(a)) > 0 {
			return scalar.Gamma{}, false
		}
		p[i] = a.Eval(&graph.Env{})
	}
	shape, rate := prior.GammaParams(p)
	return scalar.Gamma{Shape: shape, Rate: rate}, true
}

// readsPriorOf reports whether any of vs enters the tree prior of the PYDT
// factor f: alpha, beta or the divergence function.
func readsPriorOf(f *graph.Factor, vs ...*graph.Var) bool {
	if graph.Reads(f.Args[graph.PYDTAlpha], vs...) || graph.Reads(f.Args[graph.PYDTBeta], vs...) {
		return true
	}
	return slices.ContainsFunc(f.Divergence.Args, func(a graph.Expr) bool { return graph.Reads(a, vs...) })
}

// gibbsCStep is the conjugate update of c in a divergence function that is
// linear in it (pydt.Linear: a(t) = c/(1-t) or c/(1-t)^2) under a Gamma
// prior (NOTES.md erratum 2). A c shared by several PYDTs (each reading it
// only so) is drawn given all their trees: the statistics of the trees sum.
type gibbsCStep struct {
	m     *Model
	trees []int // the indices in Model.Trees of the PYDTs that read c
	names []string
	v     *graph.Var
	prior scalar.Gamma
	units []pydt.Divergence
}

func gibbsC(m *Model, v *graph.Var) (Updater, bool) {
	g, ok := gibbsCOf(m, v)
	return g, ok
}

func gibbsCOf(m *Model, v *graph.Var) (gibbsCStep, bool) {
	prior, ok := constGammaPrior(v)
	if !ok {
		return gibbsCStep{}, false
	}
	fs, dets := m.G.Readers(v)
	if len(fs) == 0 || len(dets) > 0 {
		return gibbsCStep{}, false
	}
	g := gibbsCStep{m: m, v: v, prior: prior}
	for _, f := range fs {
		k := m.treeIndex(f)
		if k < 0 {
			return gibbsCStep{}, false
		}
		div := f.Divergence
		if len(div.Args) != 1 {
			return gibbsCStep{}, false
		}
		if r, ok := graph.AsRef(div.Args[0]); !ok || r != v {
			return gibbsCStep{}, false
		}
		if graph.Reads(f.Args[graph.PYDTAlpha], v) || graph.Reads(f.Args[graph.PYDTBeta], v) || graph.Reads(f.Args[graph.PYDTVariance], v) {
			return gibbsCStep{}, false
		}
		// The capability is a property of the function, not of C: ask
		// the function made with C = 1.
		lin, ok := div.Type.New([]float64{1}).(pydt.Linear)
		if !ok {
			return gibbsCStep{}, false
		}
		g.trees = append(g.trees, k)
		g.names = append(g.names, m.Trees[k].Leaves.Name)
		g.units = append(g.units, lin.Unit())
	}
	return g, true
}

func (g gibbsCStep) Name() string { return "gibbs(" + g.v.Name + ")" }
func (g gibbsCStep) Explain() string {
	out := fmt.Sprintf("conjugate Gamma update: %s has a Gamma prior and only scales the divergence function, a(t) = %s·%v", g.v.Name, g.v.Name, g.units[0])
	if len(g.trees) > 1 {
		out += fmt.Sprintf("; shared by the PYDTs %s, whose trees' statistics sum", strings.Join(g.names, ", "))
	}
	return out
}

func (g gibbsCStep) update(ch *Chain) error {
	var internal int
	var s float64
	for i, k := range g.trees {
		t := ch.trees[k]
		n, sk := pydt.CStatsFor(t.Tree, t.moves.Alpha(), t.moves.Beta(), g.units[i], t.moves.Harmonic())
		internal += n
		s += sk
	}
	c, err := scalar.SampleC(ch.rng, g.prior, internal, s)
	if err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	c0 := ch.get(g.v)
	if err := ch.set(g.v, c); err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	if err := ch.syncPrior(); err == nil && treemove.Evaluable(ch.logTree()) {
		return nil
	}
	// The draw gives a tree density float64 cannot evaluate: refuse it,
	// as the Metropolis-Hastings move with the conditional as proposal on
	// the target restricted to finite densities does.
	ch.Skipped++
	if err := ch.set(g.v, c0); err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	return ch.syncPrior()
}

// gibbsPrecisionStep is the conjugate update of a precision p that enters
// the PYDT as variance = 1 / p, under a Gamma prior, given the tree with
// the node locations integrated out. It serves trees whose leaves are
// exact observations (observed directly, each entry exact or missing):
// their log likelihood is then c(T) − (n/2) log σ² − q(T)/(2σ²)
// (bp.Model.UnitStats), so that p given the tree and the data is
// Gamma(a + n/2, b + q/2), n counting the observed entries. (Given sampled
// locations, as NOTES.md erratum 3 has it, the draw would be conditioned
// on N−1 further variables strongly coupled with p.)
//
// A precision shared by several PYDTs (each reading it only so) is drawn
// given all their trees: the statistics of the trees sum.
type gibbsPrecisionStep struct {
	m     *Model
	trees []int // the indices in Model.Trees of the PYDTs that read it
	names []string
	v     *graph.Var
	prior scalar.Gamma
}

func gibbsPrecision(m *Model, v *graph.Var) (gibbsPrecisionStep, bool) {
	prior, ok := constGammaPrior(v)
	if !ok {
		return gibbsPrecisionStep{}, false
	}
	fs, dets := m.G.Readers(v)
	if len(fs) == 0 || len(dets) > 0 {
		return gibbsPrecisionStep{}, false
	}
	g := gibbsPrecisionStep{m: m, v: v, prior: prior}
	for _, f := range fs {
		k := m.treeIndex(f)
		if k < 0 {
			return gibbsPrecisionStep{}, false
		}
		if r, ok := graph.AsReciprocal(f.Args[graph.PYDTVariance]); !ok || r != v || readsPriorOf(f, v) {
			return gibbsPrecisionStep{}, false
		}
		g.trees = append(g.trees, k)
		g.names = append(g.names, m.Trees[k].Leaves.Name)
	}
	return g, true
}

// exact reports whether every tree the precision reaches has its leaves
// observed directly (no leaf factor), where the update given sampled
// locations is used (see NewSchedule).
func (g gibbsPrecisionStep) exact(m *Model) bool {
	return !slices.ContainsFunc(g.trees, func(k int) bool { return m.Trees[k].Leaf != nil })
}

// trapNote says why the update is not used: the first tree it reaches
// with a leaf factor.
func (g gibbsPrecisionStep) trapNote(m *Model) string {
	for _, k := range g.trees {
		if b := m.Trees[k]; b.Leaf != nil {
			return trapNoteOf(b.Leaves.Name)
		}
	}
	return trapNote(m)
}

func (g gibbsPrecisionStep) Name() string { return "gibbs(" + g.v.Name + ")" }
func (g gibbsPrecisionStep) Explain() string {
	out := fmt.Sprintf("conjugate Gamma update given the tree, node locations integrated out: the PYDT variance is 1/%s, %s has a Gamma prior "+
		"and the leaves are exact observations, so the likelihood is σ^-n exp(-q/2σ²), n the observed entries (bp.UnitStats)", g.v.Name, g.v.Name)
	if len(g.trees) > 1 {
		out += fmt.Sprintf("; shared by the PYDTs %s, whose trees' statistics sum", strings.Join(g.names, ", "))
	}
	return out
}

func (g gibbsPrecisionStep) update(ch *Chain) error {
	var q float64
	var n int
	for _, k := range g.trees {
		t := ch.trees[k]
		qk, nk, err := t.unitStats()
		if errors.Is(err, bp.ErrNoDensity) || errors.Is(err, bp.ErrZeroEdge) {
			// Exactly observed values meeting through edges far
			// shorter than float64 resolves: the state has numerically
			// zero (or infinite) density and the conditional is
			// degenerate. Keep the precision; tree moves leave such
			// states.
			ch.Skipped++
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
		q += qk
		n += nk
	}
	if math.IsInf(q, 1) || math.IsNaN(q) {
		// A quadratic form float64 cannot hold (edges far shorter than
		// it resolves between distinct values): as above.
		ch.Skipped++
		return nil
	}
	p, err := scalar.SamplePrecision(ch.rng, g.prior, n, q/2)
	if err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	p0 := ch.get(g.v)
	if err := ch.set(g.v, p); err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	if err := ch.syncVariance(); err == nil && treemove.Evaluable(ch.logLik()) {
		return nil
	}
	// Refused: a likelihood float64 cannot evaluate (see gibbsCStep).
	ch.Skipped++
	if err := ch.set(g.v, p0); err != nil {
		return fmt.Errorf("%s: %w", g.Name(), err)
	}
	return ch.syncVariance()
}

// unitStats returns the statistics of the tree's log likelihood in the
// diffusion variance summed over the dimensions (bp.Model.UnitStats): the
// quadratic form q at unit variance and the number n of observed entries.
func (t *chainTree) unitStats() (q float64, n int, err error) {
	D := t.b.D
	if len(t.unitQ) != D {
		t.unitQ, t.unitC, t.unitN = make([]float64, D), make([]float64, D), make([]int, D)
	}
	if err := t.lik.UnitStats(t.unitQ, t.unitC, t.unitN); err != nil {
		return 0, 0, err
	}
	for d := range D {
		q += t.unitQ[d]
		n += t.unitN[d]
	}
	return q, n, nil
}

// supportTransform returns the transform matched to the support of v's
// scalar distribution, on which v is slice sampled.
func supportTransform(v *graph.Var) (scalar.Transform, error) {
	dist, ok := v.Def.Scalar()
	if !ok {
		return scalar.Transform{}, fmt.Errorf("%w: %s ~ %s is not a scalar distribution", ErrUnsupported, v.Name, v.Def.TypeName())
	}
	tr, err := scalar.ForSupport(dist.Support())
	if err != nil {
		return scalar.Transform{}, fmt.Errorf("%s: %w", v.Name, err)
	}
	return tr, nil
}

// sliceStep slice samples a continuous scalar on a scale matched to its
// support (log for positive, logit for (0, 1)), with the Jacobian.
type sliceStep struct {
	m         *Model
	v         *graph.Var
	transform scalar.Transform
	tree      []treeReach // how v reaches each tree, parallel to Model.Trees
	others    []*graph.Factor
	// why says, when set, why no conjugate update was chosen although
	// v has a Gamma prior.
	why string
}

func newSliceStep(m *Model, v *graph.Var) (*sliceStep, error) {
	tr, err := supportTransform(v)
	if err != nil {
		return nil, err
	}
	s := &sliceStep{m: m, v: v, transform: tr, tree: make([]treeReach, len(m.Trees))}
	fs, dets := m.G.Readers(v)
	readers := append([]*graph.Var{v}, dets...)
	for _, f := range fs {
		if k := m.treeIndex(f); k >= 0 {
			r := &s.tree[k]
			r.prior = readsPriorOf(f, readers...)
			r.alphaBeta = r.prior && !slices.ContainsFunc(f.Divergence.Args, func(a graph.Expr) bool { return graph.Reads(a, readers...) })
			r.variance = graph.Reads(f.Args[graph.PYDTVariance], readers...)
			continue
		}
		switch k := m.leafIndex(f); {
		case k >= 0:
			s.tree[k].link = true
			if err := m.Trees[k].paramUpdate(v); err != nil {
				return nil, err
			}
		default:
			s.others = append(s.others, f)
		}
	}
	return s, nil
}

func (s *sliceStep) Name() string { return "slice(" + s.v.Name + ")" }

func (s *sliceStep) Explain() string {
	parts := describeTrees(s.m, s.tree)
	for _, f := range s.others {
		parts = append(parts, f.Target.Name+"'s density")
	}
	target := "its prior"
	if len(parts) > 0 {
		target += " × " + strings.Join(parts, " × ")
	}
	out := fmt.Sprintf("slice sampling (stepping out, shrinkage) on the %s; target: %s", scaleName(s.transform), target)
	if s.why != "" {
		out += "; no conjugate update: " + s.why
	}
	return out
}

func (s *sliceStep) targets() []siteTarget {
	t := siteTarget{V: s.v, Terms: []term{{F: s.v.Def, Elem: -1}}}
	for _, f := range s.others {
		t.Terms = append(t.Terms, term{F: f, Elem: -1})
	}
	t.Terms = append(t.Terms, treeTerms(s.m, s.tree)...)
	return []siteTarget{t}
}

func (s *sliceStep) update(ch *Chain) error {
	alphaBeta := ch.resetAlphaBeta(s.tree)
	x0 := ch.get(s.v)
	logf := func(x float64) float64 { return ch.sliceTarget(s, x) }
	tuner := ch.tuner(s.v)
	var x float64
	var err error
	ch.setErr = nil
	if ch.tuning {
		x, _, err = tuner.UpdateTransformed(ch.rng, x0, s.transform, logf)
	} else {
		x, _, err = tuner.Slice.UpdateTransformed(ch.rng, x0, s.transform, logf)
	}
	if ch.setErr != nil {
		return fmt.Errorf("%s: %w", s.Name(), ch.setErr)
	}
	if err != nil {
		ch.sliceTarget(s, x0)
		if ch.setErr != nil {
			return fmt.Errorf("%s: %w", s.Name(), ch.setErr)
		}
		return ch.notFinite(s.Name(), fmt.Sprintf("the density of %s's conditional at %s = %v", s.v.Name, s.v.Name, x0))
	}
	// Leave the chain at x: the last evaluation may have been elsewhere.
	got := ch.sliceTarget(s, x)
	if ch.setErr != nil {
		return fmt.Errorf("%s: %w", s.Name(), ch.setErr)
	}
	if !scalar.Finite(got) {
		return fmt.Errorf("slice(%s): the posterior density is not finite (%v) at %s = %v; check the priors and data", s.v.Name, got, s.v.Name, x)
	}
	if alphaBeta {
		return ch.syncPrior() // the evaluations left the tree sampler alone
	}
	return nil
}

// resetAlphaBeta gathers the alpha-beta statistics of every tree that rs
// reaches through alpha and beta only, and reports whether there was one.
func (ch *Chain) resetAlphaBeta(rs []treeReach) bool {
	any := false
	for k, r := range rs {
		if r.alphaBeta {
			t := ch.trees[k]
			t.abStats.Reset(t.Tree, t.moves.Divergence())
			any = true
		}
	}
	return any
}

// sliceTarget sets v = x and returns the log density of everything that
// depends on v, up to a constant. When a deterministic variable cannot be
// evaluated at x it records the error in ch.setErr (the first) and
// returns -Inf, for the update to return once the slice sampler is done.
func (ch *Chain) sliceTarget(s *sliceStep, x float64) float64 {
	if !ch.setOrRecord(s.v, x) {
		return math.Inf(-1)
	}
	lp := ch.logFactor(s.v.Def)
	for _, f := range s.others {
		lp += ch.logFactor(f)
	}
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return math.Inf(-1)
	}
	return ch.addTree(lp, s.tree)
}

// treeStep is the sweep of tree moves of the k-th PYDT.
type treeStep struct {
	m *Model
	k int
	// local is the number of local prune-and-regraft moves
	// (treemove.Sampler.LocalMove) per leaf of the sweep.
	local float64
	// grid is treemove.Sampler.LocalGrid: cells per edge of the local
	// moves' likelihood-informed proposal, 0 for the uniform one.
	grid int
	// collapse, when set, makes the topology moves integrate c out
	// (treemove.Sampler.Collapse); the schedule then draws c right after
	// this step (Schedule.SetCollapse).
	collapse *treemove.CollapseC
	cname    string
}

// SetCollapse makes the subtree, uniform local and position moves of every
// tree step whose PYDT's divergence function has a constant c that
// gibbs(c) draws (a Gamma prior of constant parameters, c read by that
// PYDT alone and only as the constant of a pydt.Linear divergence
// function) target the tree prior with c integrated out
// (treemove.CollapseC), and moves that gibbs(c) to right after the tree
// step: after the collapsed moves c must be drawn afresh before any
// update that conditions on it. It reports the number of tree steps it
// collapsed. One case is not exact: when gibbs(c) refuses
// its draw (a tree density float64 cannot evaluate at the new c) it keeps
// the old c, which after collapsed moves is not a draw given the tree;
// such refusals are counted in Chain.Skipped.
func (s *Schedule) SetCollapse() int {
	n := 0
	for i := 0; i < len(s.Steps); i++ {
		t, ok := s.Steps[i].(treeStep)
		if !ok {
			continue
		}
		j := slices.IndexFunc(s.Steps, func(u Updater) bool {
			g, ok := u.(gibbsCStep)
			return ok && len(g.trees) == 1 && g.trees[0] == t.k
		})
		if j < 0 {
			continue
		}
		g := s.Steps[j].(gibbsCStep)
		t.collapse = &treemove.CollapseC{Shape: g.prior.Shape, Rate: g.prior.Rate, Unit: g.units[0]}
		t.cname = g.v.Name
		s.Steps[i] = t
		if j != i+1 {
			s.Steps = slices.Delete(s.Steps, j, j+1)
			if j < i {
				i--
			}
			s.Steps = slices.Insert(s.Steps, i+1, Updater(g))
		}
		n++
	}
	return n
}

// setTrees applies f to every tree step of s.
func (s *Schedule) setTrees(f func(*treeStep)) {
	for i, st := range s.Steps {
		if t, ok := st.(treeStep); ok {
			f(&t)
			s.Steps[i] = t
		}
	}
}

// SetLocalGrid makes the local moves of every tree sweep of s propose
// from the likelihood-informed approximation with g cells per edge
// (treemove.Sampler.LocalGrid, inference/treemove/localgrid.go); 0, the
// default, keeps the uniform proposal. g must be between 0 and
// treemove.MaxLocalGrid.
func (s *Schedule) SetLocalGrid(g int) error {
	if g < 0 || g > treemove.MaxLocalGrid {
		return fmt.Errorf("cells per edge of the local moves' proposal must be 0 to %d, got %d", treemove.MaxLocalGrid, g)
	}
	s.setTrees(func(t *treeStep) { t.grid = g })
	return nil
}

// SetLocalMoves sets the number of local prune-and-regraft moves
// (treemove.Sampler.LocalMove: a subtree re-attached within two edges of
// where it was, with the Metropolis-Hastings correction) per leaf in every
// tree sweep of s; 0 turns them off. NewSchedule sets
// treemove.DefaultLocalMovesPerLeaf. x must be finite and not negative.
func (s *Schedule) SetLocalMoves(x float64) error {
	if !(x >= 0) || math.IsInf(x, 1) {
		return fmt.Errorf("local moves per leaf must be 0 or more, got %v", x)
	}
	s.setTrees(func(t *treeStep) { t.local = x })
	return nil
}

// Name is "tree" in a model with one PYDT, "tree(X)" for the PYDT of X in
// a model with several.
func (t treeStep) Name() string {
	if !t.m.Several() {
		return "tree"
	}
	return "tree(" + t.m.Trees[t.k].Leaves.Name + ")"
}

func (t treeStep) Explain() string {
	out := "subtree moves (detach, re-attach by the generative process, Metropolis-Hastings), "
	switch {
	case t.local > 0 && t.grid > 0:
		out += fmt.Sprintf("local moves (%s per leaf: detach, re-attach near the old point by a likelihood-informed proposal "+
			"over the edges within %d of a centre within %d of it, %d cells per edge, Metropolis-Hastings; --local-moves, --local-grid), ",
			fmtFloat(t.local), treemove.DefaultLocalGridRadius, treemove.DefaultLocalGridRadius, t.grid)
	case t.local > 0:
		out += fmt.Sprintf("local moves (%s per leaf: detach, re-attach within %d edges of the old point, Metropolis-Hastings; --local-moves), ",
			fmtFloat(t.local), treemove.DefaultLocalRadius)
	}
	out += "slice moves of divergence times, slice moves over re-attachment positions; " +
		"internal locations integrated out by belief propagation with local updates"
	if t.collapse != nil {
		out += fmt.Sprintf("; the subtree, position and uniform local moves run last, with %s integrated out of the tree prior "+
			"(its Gamma prior is conjugate; proposals at %s* = (a+K)/(b+R) of the tree without the moved subtree), "+
			"and gibbs(%s) follows", t.cname, t.cname, t.cname)
	}
	if t.m.Several() {
		out = "the tree of " + t.m.Trees[t.k].Leaves.Name + ": " + out
	}
	return out
}

func (t treeStep) update(ch *Chain) error {
	mv := ch.trees[t.k].moves
	mv.LocalMovesPerLeaf = t.local
	mv.LocalGrid = t.grid
	mv.Collapse = t.collapse
	if err := mv.Sweep(); err != nil {
		return fmt.Errorf("%s: %w", t.Name(), err)
	}
	return nil
}

// treeAccepted counts the accepted moves that changed the chain's trees.
func (ch *Chain) treeAccepted() int {
	n := ch.RidgeAccepted
	for _, t := range ch.trees {
		s := t.moves.Stats
		n += s.Subtree.Accepted + s.Local.Accepted + s.Time.Accepted + s.Position.Accepted
	}
	return n
}

// countStep counts a proposal of the step named name, accepted or not, in
// ch.Steps.
func (ch *Chain) countStep(name string, accepted bool) {
	if ch.Steps == nil {
		ch.Steps = map[string]*treemove.MoveStats{}
	}
	ms := ch.Steps[name]
	if ms == nil {
		ms = &treemove.MoveStats{}
		ch.Steps[name] = ms
	}
	ms.Proposed++
	if accepted {
		ms.Accepted++
	}
}

// locationsStep draws every node location of every tree from its
// conditional given the tree and the evidence, for the steps that condition
// on locations.
type locationsStep struct{ m *Model }

func (locationsStep) Name() string { return "locations" }
func (l locationsStep) Explain() string {
	if l.m.Several() {
		return "joint backward sampling of all node locations given each tree, tree by tree (needed by the steps below)"
	}
	return "joint backward sampling of all node locations given the tree (needed by the steps below)"
}

func (locationsStep) update(ch *Chain) error {
	for _, t := range ch.trees {
		if err := t.lik.SampleLocations(ch.rng, t.locs); err != nil {
			return fmt.Errorf("sampling locations of %s: %w", t.b.Leaves.Name, err)
		}
	}
	return nil
}

// augmentStep draws the auxiliary variables of an augmented likelihood
// (stdlib.AugmentedLeaf) given the leaf locations, and gives the leaves
// their evidence given the new auxiliaries.
type augmentStep struct {
	b       *TreeBinding
	k       int // b's index in Model.Trees
	several bool
}

// Name is the likelihood's name in lower case and "-aux": "probit-aux"; in
// a model with several PYDTs, followed by the data's name: "probit-aux(Y)".
func (a augmentStep) Name() string {
	n := strings.ToLower(a.b.Leaf.TypeName()) + "-aux"
	if a.several {
		n += "(" + a.b.Data.Name + ")"
	}
	return n
}
func (a augmentStep) Explain() string {
	return fmt.Sprintf("data augmentation: the auxiliary variables of the %s likelihood of %s, drawn from their conditional given %s and the leaf locations %s; the leaves get Gaussian evidence given them",
		a.b.Leaf.TypeName(), a.b.Data.Name, a.b.Data.Name, a.b.Leaves.Name)
}

func (a augmentStep) update(ch *Chain) error {
	b, t := a.b, ch.trees[a.k]
	t.savedAux = append(t.savedAux[:0], t.aux...)
	err := b.drawAux(ch.rng, ch.st.Env, t.locs, t.aux, &ch.leafParams, func(k int, mean, prec float64) error {
		return t.lik.SetEvidence(pydt.NodeID(k/b.D), k%b.D, mean, prec)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", a.Name(), err)
	}
	if treemove.Evaluable(t.lik.LogLik()) {
		return nil
	}
	// Refused: auxiliaries whose evidence float64 cannot evaluate on this
	// tree (see gibbsCStep).
	ch.Skipped++
	copy(t.aux, t.savedAux)
	return t.syncEvidence(ch.st.Env, &ch.leafParams)
}

// Chain is one Markov chain: its state, per PYDT its tree, belief
// propagation model and tree sampler, and its random stream.
type Chain struct {
	m     *Model
	sched *Schedule
	st    *State
	// trees holds each PYDT's parts, parallel to Model.Trees.
	trees  []*chainTree
	pcg    *rand.PCG
	rng    *rand.Rand
	tuners map[*graph.Var]*scalar.Tuner
	tuning bool
	// setErr is the first error of set during a scalar slice update
	// (sliceTarget), which the sampler's log density cannot return.
	setErr error
	// params and leafParams are scratch space for factor parameters,
	// vecArgs for those of vector factors.
	params, leafParams []float64
	vecArgs            graph.VecArgs
	// scratch holds the scratch space of steps that need their own
	// (ffbsStep, dirichletStep), by step: steps are shared by the chains
	// of a run, which run at once.
	scratch    map[Updater]any
	ridgeSaved []float64 // scratch of the ridge move: the variance's values
	// Skipped counts conditional updates skipped because their statistics
	// were not finite (see gibbsPrecisionStep).
	Skipped int
	// RidgeProposed and RidgeAccepted count the ridge moves.
	RidgeProposed, RidgeAccepted int
	// Steps counts the Metropolis-Hastings proposals and acceptances of
	// the other steps that report theirs (ghk(prec, u)),
	// by step name; nil until one counts.
	Steps map[string]*treemove.MoveStats
	// Stall is the number of consecutive sweeps, up to the last one, in
	// which the tree accepted no move; LongestStall the longest such run.
	Stall, LongestStall int

	internal, order []pydt.NodeID
	saved           []pydt.Time

	// probit is scratch space of the probit moves (probitmove.go).
	probit probitScratch
}

// saveBranchTimes sets ch.internal to tr's branch points (its internal
// nodes, in pre-order) and ch.saved to their times, for a move that
// rescales every time and may have to put them back.
func (ch *Chain) saveBranchTimes(tr *pydt.Tree) {
	ch.internal = ch.internal[:0]
	ch.saved = ch.saved[:0]
	ch.order = tr.PreOrder(ch.order[:0])
	for _, b := range ch.order {
		if !tr.IsLeaf(b) {
			ch.internal = append(ch.internal, b)
			ch.saved = append(ch.saved, tr.Time(b))
		}
	}
}

// restoreBranchTimes puts back the times saveBranchTimes (or a move that
// filled ch.internal and ch.saved as it does) recorded for tr.
func (ch *Chain) restoreBranchTimes(tr *pydt.Tree) {
	for i, b := range ch.internal {
		tr.SetTime(b, ch.saved[i])
	}
}

// chainTree is a chain's state of one PYDT: its tree, the belief
// propagation model on it, its tree sampler, and the scratch space of the
// steps that condition on locations or auxiliary variables.
type chainTree struct {
	b *TreeBinding
	// Tree is the chain's current tree of this PYDT.
	Tree  *pydt.Tree
	lik   *bp.Model
	moves *treemove.Sampler
	// locs holds sampled node locations (Cap·D) when a step needs them.
	locs []float64
	// aux holds the auxiliary variables of the tree's augmented leaf
	// factor (TreeBinding.Augmented), N·D, or nil; entries whose data are
	// missing are unused. savedAux keeps them while a draw is checked.
	aux, savedAux []float64
	// abStats and abH score alpha and beta on a fixed tree for their slice
	// updates.
	abStats pydt.AlphaBetaStats
	abH     pydt.Harmonic
	// variances is scratch space of syncVariance, D.
	variances []float64
	// resid is the part of the data's log density that belief
	// propagation's marginal likelihood lacks when the data reach the
	// leaves through an index (TreeBinding.Indexed): see logLik. evScratch
	// is scratch space of that evidence.
	resid     float64
	evScratch []float64
	// unitQ, unitC and unitN are scratch space of unitStats, D each.
	unitQ, unitC []float64
	unitN        []int
}

// logLik is the log marginal likelihood of the tree's data: belief
// propagation's, plus resid for indexed evidence.
func (t *chainTree) logLik() float64 { return t.lik.LogLik() + t.resid }

// NewChain starts a chain from a draw of the prior (clamped values kept),
// with its own random stream.
func NewChain(m *Model, sched *Schedule, seed, stream uint64) (*Chain, error) {
	return newChainAt(m, sched, seed, stream, nil)
}

// spreadInitialTree redraws the initial tree from moderate parameters
// (alpha at most 1, c at least 1, the drawn beta and variance kept): a large
// alpha or a small c puts divergences very close to t = 1 (with the
// examples' priors a quarter of prior draws at N = 4 have the root beyond
// 1-t = 5e-324). Such trees are represented exactly (pydt.Time keeps
// s = -log(1-t)), but they are useless starting points: their edges have
// variance near or below the float64 minimum, so distinct exactly observed
// rows have a log likelihood near or at -Inf, from which the chain cannot
// start or needs very long to leave. The starting point does not affect
// the chain's stationary distribution.
func (m *Model) spreadInitialTree(rng *rand.Rand, st *State) error {
	for k, b := range m.Trees {
		if err := b.spreadInitialTree(rng, st, k, len(m.Trees)); err != nil {
			return err
		}
	}
	return nil
}

func (b *TreeBinding) spreadInitialTree(rng *rand.Rand, st *State, k, n int) error {
	p, err := b.Params(st.Env)
	if err != nil {
		return err
	}
	p.Alpha = min(p.Alpha, 1)
	switch d := p.Div.(type) {
	case pydt.DivInv:
		p.Div = pydt.DivInv{C: max(d.C, 1)}
	case pydt.DivInvSq:
		p.Div = pydt.DivInvSq{C: max(d.C, 1)}
	case pydt.DivNeal:
		p.Div = pydt.DivNeal{C0: d.C0, C1: max(d.C1, 1), C2: d.C2}
	}
	tr, err := sim.DrawTree(rng, b.N, p)
	if err != nil {
		return err
	}
	tr.Labels = b.Labels()
	st.setTree(k, n, tr)
	return nil
}

// newChainParts returns a chain on st without its trees' parts, which
// attach builds.
func newChainParts(m *Model, sched *Schedule, st *State, pcg *rand.PCG) *Chain {
	ch := &Chain{
		m: m, sched: sched, st: st, pcg: pcg, rng: rand.New(pcg),
		tuners: map[*graph.Var]*scalar.Tuner{},
	}
	for k, b := range m.Trees {
		tr := st.Trees[k]
		ch.trees = append(ch.trees, &chainTree{b: b, Tree: tr, locs: make([]float64, tr.Cap()*b.D)})
	}
	return ch
}

func newChainFrom(m *Model, sched *Schedule, st *State, pcg *rand.PCG) (*Chain, error) {
	ch := newChainParts(m, sched, st, pcg)
	for _, t := range ch.trees {
		if b := t.b; b.Augmented() != nil {
			// Start the auxiliaries from the prior leaf locations.
			t.aux = make([]float64, b.N*b.D)
			if err := b.drawAux(ch.rng, st.Env, st.Env.Values[b.Leaves.ID], t.aux, &ch.leafParams, nil); err != nil {
				return nil, fmt.Errorf("initial state: %w", err)
			}
		}
	}
	if err := ch.attach(); err != nil {
		return nil, err
	}
	for _, t := range ch.trees {
		if ll := t.lik.LogLik(); math.IsNaN(ll) || math.IsInf(ll, 0) {
			return nil, fmt.Errorf("initial state: the log likelihood is %v (PYDT node %s, variance %s); "+
				"the data may be on a scale far from the variance's prior: try rescaling the data or clamping the variance with --set", ll, t.b.Leaves.Name, varianceString(t.lik))
		}
	}
	return ch, nil
}

// attach builds the chain's belief propagation and tree sampler for each
// tree of its state. It draws no random numbers.
func (ch *Chain) attach() error {
	for _, t := range ch.trees {
		if err := t.attach(ch.st.Env, ch.rng, &ch.leafParams); err != nil {
			if ch.m.Several() {
				return fmt.Errorf("PYDT node %s: %w", t.b.Leaves.Name, err)
			}
			return err
		}
	}
	return nil
}

func (t *chainTree) attach(env *graph.Env, rng *rand.Rand, leafParams *[]float64) error {
	t.lik = bp.New(t.Tree, t.b.D)
	p, err := t.b.Params(env)
	if err != nil {
		return err
	}
	if err := t.lik.SetVariances(p.DimVariances()); err != nil {
		return err
	}
	if err := t.syncEvidence(env, leafParams); err != nil {
		return err
	}
	t.moves, err = treemove.New(t.lik, p.Alpha, p.Beta, p.Div, rng)
	if err != nil {
		return err
	}
	if err := t.lik.Recompute(); err != nil {
		return fmt.Errorf("initial tree: %w", err)
	}
	return nil
}

func (ch *Chain) get(v *graph.Var) float64 { return ch.st.Env.Values[v.ID][0] }

// set sets the scalar v to x and recomputes the deterministic variables
// from it. An error names a variable that could not be evaluated (an
// index outside its array); the chain's values are then unusable.
func (ch *Chain) set(v *graph.Var, x float64) error {
	ch.st.Env.Values[v.ID][0] = x
	return ch.m.Refresh(ch.st.Env)
}

// setOrRecord is set for a log density: it reports whether v = x could be
// set, recording the first error in ch.setErr for the update to return
// once its sampler is done (the density is then -Inf).
func (ch *Chain) setOrRecord(v *graph.Var, x float64) bool {
	if err := ch.set(v, x); err != nil {
		ch.record(err)
		return false
	}
	return true
}

// record keeps err in ch.setErr unless an earlier error is there: the
// update under way returns it once its sampler is done.
func (ch *Chain) record(err error) {
	if ch.setErr == nil {
		ch.setErr = err
	}
}

func (ch *Chain) tuner(v *graph.Var) *scalar.Tuner {
	t, ok := ch.tuners[v]
	if !ok {
		t = &scalar.Tuner{}
		ch.tuners[v] = t
	}
	return t
}

// syncPrior passes the current alpha, beta and divergence of every PYDT to
// its tree sampler.
func (ch *Chain) syncPrior() error {
	for _, t := range ch.trees {
		if err := t.syncPrior(ch.st.Env); err != nil {
			return err
		}
	}
	return nil
}

func (t *chainTree) syncPrior(env *graph.Env) error {
	p, err := t.b.Params(env)
	if err != nil {
		return err
	}
	return t.moves.SetPrior(p.Alpha, p.Beta, p.Div)
}

// syncVariance passes the current variance of every PYDT, one per
// dimension, to its belief propagation.
func (ch *Chain) syncVariance() error {
	for _, t := range ch.trees {
		if err := t.syncVariance(ch.st.Env); err != nil {
			return err
		}
	}
	return nil
}

func (t *chainTree) syncVariance(env *graph.Env) error {
	if len(t.variances) != t.b.D {
		t.variances = make([]float64, t.b.D)
	}
	if err := t.b.Factor.Variances(env, t.variances); err != nil {
		return err
	}
	return t.lik.SetVariances(t.variances)
}

// varianceString prints the diffusion variance of lik for messages: one
// number, or one per dimension.
func varianceString(lik *bp.Model) string {
	if v := lik.Variance(); !math.IsNaN(v) {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%g per dimension", lik.Variances())
}

// syncEvidence sets every leaf's evidence of every tree from the data, or,
// for an augmented likelihood, from the data and the auxiliary variables.
func (ch *Chain) syncEvidence() error {
	for _, t := range ch.trees {
		if err := t.syncEvidence(ch.st.Env, &ch.leafParams); err != nil {
			return err
		}
	}
	return nil
}

func (t *chainTree) syncEvidence(env *graph.Env, leafParams *[]float64) error {
	b := t.b
	if b.LatentLeaves() {
		// The leaves are latent values of the graph: the tree observes
		// them exactly.
		return t.lik.ObserveMatrix(env.Values[b.Leaves.ID][:b.N*b.D])
	}
	if b.index != nil {
		r, err := b.indexedEvidence(env, &t.evScratch, func(i, d int, mean, prec float64) error {
			return t.lik.SetEvidence(pydt.NodeID(i), d, mean, prec)
		})
		if err != nil {
			return err
		}
		t.resid = r
		return nil
	}
	if b.Augmented() == nil {
		return b.observe(t.lik, env)
	}
	return b.auxEvidence(env, t.aux, leafParams, func(k int, mean, prec float64) error {
		return t.lik.SetEvidence(pydt.NodeID(k/b.D), k%b.D, mean, prec)
	})
}

// logTree is the log prior of the current trees.
func (ch *Chain) logTree() float64 {
	var lp float64
	for _, t := range ch.trees {
		lp += t.logTree()
	}
	return lp
}

func (t *chainTree) logTree() float64 {
	s := t.moves
	return pydt.LogPrior(t.Tree, s.Alpha(), s.Beta(), s.Divergence(), s.Harmonic())
}

// logTreeS is the log prior of the current trees with their times in the
// coordinates s = -log(1-t) (pydt.LogPriorS): logTree less Σ_b s_b, which
// is the target for MCMC updates (of parameters, or of times in s), since
// near t = 1 that sum swamps the terms they change.
func (ch *Chain) logTreeS() float64 {
	var lp float64
	for _, t := range ch.trees {
		lp += t.logTreeS()
	}
	return lp
}

func (t *chainTree) logTreeS() float64 {
	s := t.moves
	return pydt.LogPriorS(t.Tree, s.Alpha(), s.Beta(), s.Divergence(), s.Harmonic())
}

// logLik is the marginal log likelihood of the data at the trees' leaves,
// summed over the trees.
func (ch *Chain) logLik() float64 {
	var ll float64
	for _, t := range ch.trees {
		ll += t.logLik()
	}
	return ll
}

// logAux is the log density of the auxiliary variables of every augmented
// likelihood that offers stdlib.AuxLogProber, beyond their Gaussian
// evidence (TreeBinding.auxLogProb): with it, log_lik is the log density of
// the data and the auxiliaries given the trees, which a latent parameter
// of the likelihood changes.
func (ch *Chain) logAux() (float64, error) {
	var lp float64
	for _, t := range ch.trees {
		a, err := t.b.auxLogProb(ch.st.Env, t.aux, &ch.leafParams)
		if err != nil {
			return 0, err
		}
		lp += a
	}
	return lp, nil
}

// logFactor is the log density of a scalar factor at the current values,
// -Inf where it is not defined.
func (ch *Chain) logFactor(f *graph.Factor) float64 {
	lp, err := factorLogDensity(f, ch.st.Env, &ch.params)
	if err != nil {
		return math.Inf(-1)
	}
	return lp
}

// Sweep runs every step of the schedule once. It starts with a full
// recomputation of the messages, so that a chain restored from a checkpoint
// continues exactly as the original would have.
//
// Every step refuses states whose density float64 cannot evaluate (NaN or
// +Inf), so the state stays finite; should it not (rounding in a full
// recomputation, a bug), Sweep stops with an error that names the part of
// the model and what to try (see notFinite). It also counts the sweeps in
// which the tree accepted no move (Stall, LongestStall).
func (ch *Chain) Sweep() error {
	for _, t := range ch.trees {
		if err := t.lik.Recompute(); err != nil {
			if ch.m.Several() {
				return fmt.Errorf("tree %s: %w", t.b.Leaves.Name, err)
			}
			return fmt.Errorf("tree: %w", err)
		}
	}
	if !scalar.Finite(ch.logLik()) {
		return ch.notFinite("recomputing the messages", "")
	}
	acc := ch.treeAccepted()
	for _, step := range ch.sched.Steps {
		err := step.update(ch)
		if e := ch.st.Env.Err(); e != nil {
			// An expression the step evaluated failed: the cause of
			// any error the step reports.
			return fmt.Errorf("%s: %w", step.Name(), e)
		}
		if err != nil {
			return err
		}
		if !scalar.Finite(ch.logLik()) {
			return ch.notFinite(step.Name(), "")
		}
	}
	if err := ch.checkFinite("the sweep"); err != nil {
		return err
	}
	if slices.ContainsFunc(ch.trees, func(t *chainTree) bool { return t.Tree.NumLeaves() >= 2 }) {
		if ch.treeAccepted() == acc {
			ch.Stall++
			ch.LongestStall = max(ch.LongestStall, ch.Stall)
		} else {
			ch.Stall = 0
		}
	}
	return nil
}

// Point is what a chain reports after a sweep.
type Point struct {
	// LogJoint is the log joint density with the divergence times in t
	// (what Model.Score returns for the same state); LogLik its part from
	// the data.
	LogJoint, LogLik float64
	// LogJointS is the log joint density with the times in the samplers'
	// coordinates s = -log(1-t): LogJoint less Σ_b s_b, formed without
	// that sum (pydt.LogPriorS), so that it keeps its precision near t = 1.
	// map.nwk is ranked by it.
	LogJointS float64
	Scalars   []float64
}

// TreeMoves returns the tree sampler of the chain's k-th PYDT
// (Model.Trees[k]); its settings (moves per leaf, widths) may be changed
// between sweeps, as benchmarks of the schedule do (internal/mixbench).
func (ch *Chain) TreeMoves(k int) *treemove.Sampler { return ch.trees[k].moves }

// Tree returns the chain's current tree of the k-th PYDT of its model
// (Model.Trees[k]); the chain goes on changing it.
func (ch *Chain) Tree(k int) *pydt.Tree { return ch.trees[k].Tree }

// Values returns a copy of the chain's current values of v, a scalar or
// an array (row-major), such as per-dimension precisions that the trace,
// which holds scalars only, does not record.
func (ch *Chain) Values(v *graph.Var) []float64 {
	return append([]float64(nil), ch.st.Env.Values[v.ID]...)
}

// Measure computes the log joint density of the chain's state and its
// parts. For a Probit link the data enter through the auxiliary variables
// u (Y = 1 exactly when u > 0), and log_lik is log p(u | tree, σ²) with the
// latent locations integrated out: the density the sampler targets; for a
// Student-t likelihood (stdlib.AuxLogProber) it is log p(y, λ | tree, s, ν),
// the evidence's part plus the precision scales' own density.
func (ch *Chain) Measure(scalars []*graph.Var) (Point, error) {
	var p Point
	hyper, data, err := ch.m.LogHyper(ch.st.Env)
	if err != nil {
		return p, err
	}
	aux, err := ch.logAux()
	if err != nil {
		return p, err
	}
	p.LogLik = ch.logLik() + aux + data
	p.LogJoint = ch.logTree() + hyper + p.LogLik
	p.LogJointS = ch.logTreeS() + hyper + p.LogLik
	for _, v := range scalars {
		p.Scalars = append(p.Scalars, ch.get(v))
	}
	return p, nil
}

// MeasureTraced is Measure with the values of the trace's columns cols
// (Model.Traced) in Point.Scalars.
func (ch *Chain) MeasureTraced(cols []Traced) (Point, error) {
	p, err := ch.Measure(nil)
	for _, c := range cols {
		p.Scalars = append(p.Scalars, c.Value(ch.st.Env))
	}
	return p, err
}
