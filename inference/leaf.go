package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// TreeBinding binds one PYDT factor of the graph to the way its data reach
// its leaves. Every likelihood reaches the tree as Gaussian evidence per
// leaf and dimension (package bp): leaf locations observed directly give
// exact evidence; a leaf factor Y[i, d] ~ T(Z[i, d], ...) whose node type
// offers a leaf capability (stdlib.GaussianLeaf, stdlib.AugmentedLeaf)
// gives the evidence that capability computes. The engine asks the binding
// (Evidence, Augmented, Exact, ...) and never the likelihood's name, so a
// new likelihood is a node type in stdlib and nothing here.
type TreeBinding struct {
	// Factor is the PYDT factor and Leaves its N×D target.
	Factor *graph.Factor
	Leaves *graph.Var
	N, D   int
	// Leaf is the elementwise factor that observes the leaf locations
	// through its first (location) parameter, or nil: no factor reads
	// them.
	Leaf *graph.Factor
	// Data is the variable the data are: Leaf's target, Leaves when they
	// are observed directly, or nil for a model without data at the leaves.
	Data *graph.Var
	// gaussian or augmented is Leaf's capability (neither when Leaf is
	// nil); threshold is augmented as a stdlib.ThresholdLeaf, when it is
	// one.
	gaussian  stdlib.GaussianLeaf
	augmented stdlib.AugmentedLeaf
	threshold stdlib.ThresholdLeaf
	// auxLog is augmented as a stdlib.AuxLogProber, when it is one: the
	// likelihood's other parameters may then be latent.
	auxLog stdlib.AuxLogProber
	// slots and lo give, for the leaf factor's two target indices (i, d),
	// the loop slot and the first value of the loop that sets it.
	slots, lo [2]int
	// index is set when the leaf factor reads the leaves through an index
	// of its own, Y[t, d] ~ T(Z[index, d], ...) with index an expression
	// such as the discrete latent z[t]: a hidden Markov model whose state
	// means are the leaves. Leaf i then gets the evidence of every data
	// row t whose index is i, combined (Indexed); rows is the number of
	// data rows. nil when data row i observes leaf i.
	index graph.Expr
	rows  int
	// softmax lists the factors that read the leaves as the logits of a
	// categorical (stdlib.CategoryLogits: w[t] ~
	// Categorical(softmax(eta[z[t]]))) when the leaves are latent: they are
	// then latent values of the graph, observed exactly by the tree (their
	// Gaussian prior), and updated by the softmax-leaf step given the
	// counts of the categories each leaf row emits (see LatentLeaves).
	softmax []*graph.Factor
}

// LatentLeaves reports whether the leaf locations are latent values of the
// graph read as the logits of categorical factors (softmax emissions):
// the tree observes them exactly, and the softmax-leaf step draws them.
func (b *TreeBinding) LatentLeaves() bool { return len(b.softmax) > 0 }

// softmaxRow returns the Row through which the CategoryLogits factor f
// reads the leaves as its logits, when it reads them there and nowhere
// else (and not in the row's index).
func softmaxRow(f *graph.Factor, leaves *graph.Var) (graph.Row, bool) {
	c, ok := f.Type.(stdlib.CategoryLogits)
	if !ok || f.IsPYDT() {
		return graph.Row{}, false
	}
	r, ok := f.Args[c.LogitsParam()].(graph.Row)
	if !ok || r.V != leaves || len(r.Idx) != 1 || slices.ContainsFunc(r.Idx, func(x graph.Expr) bool { return graph.Reads(x, leaves) }) {
		return graph.Row{}, false
	}
	for i, a := range f.Exprs() {
		if i != c.LogitsParam() && graph.Reads(a, leaves) {
			return graph.Row{}, false
		}
	}
	return r, true
}

// bindTree binds the PYDT factor tree of g: it finds the factor that
// observes the leaf locations and its capability.
func bindTree(g *graph.Graph, tree *graph.Factor) (*TreeBinding, error) {
	b := &TreeBinding{Factor: tree, Leaves: tree.Target}
	b.N, b.D = b.Leaves.Dims[0], b.Leaves.Dims[1]
	if b.N < 1 || b.D < 1 {
		return nil, fmt.Errorf("the PYDT matrix %s has shape %s", b.Leaves.Name, b.Leaves.Shape())
	}
	if b.Leaves.Role == graph.Observed {
		b.Data = b.Leaves
	}
	for _, f := range g.Factors {
		if f == tree || !f.Reads(b.Leaves) {
			continue
		}
		if _, ok := softmaxRow(f, b.Leaves); ok {
			if b.Leaves.Role == graph.Latent {
				b.softmax = append(b.softmax, f)
			}
			// Observed logits: an ordinary factor of the data.
			continue
		}
		capability := leafCapability(f)
		gl, isG := capability.(stdlib.GaussianLeaf)
		al, isA := capability.(stdlib.AugmentedLeaf)
		index := indexedLeafElem(f, f.Args, b.Leaves)
		if index != nil && !isG {
			return nil, fmt.Errorf("%w: %s reads the PYDT's leaf locations %s through the index %s, which the engine supports only for a likelihood with Gaussian leaf evidence (stdlib.GaussianLeaf), not %s",
				ErrUnsupported, f, b.Leaves.Name, index, f.TypeName())
		}
		if !isG && !isA || isG && isA || len(f.Args) == 0 || index == nil && !isLeafElem(f, f.Args[0], b.Leaves) || slices.ContainsFunc(f.Args[1:], func(a graph.Expr) bool { return graph.Reads(a, b.Leaves) }) {
			return nil, fmt.Errorf("%w: %s reads the PYDT's leaf locations %s in a way the engine cannot use; "+
				"supported: Y[i, d] ~ T(%s[i, d], ...) over all i, d (or Y ~ T(%s, ...)), or Y[t, d] ~ T(%[3]s[z[t], d], ...) with a latent index z, with T a likelihood that offers leaf evidence "+
				"(stdlib.GaussianLeaf or stdlib.AugmentedLeaf: %s) and its other parameters free of %s",
				ErrUnsupported, f, b.Leaves.Name, b.Leaves.Name, b.Leaves.Name, leafTypeNames(), b.Leaves.Name)
		}
		if b.Data != nil {
			return nil, fmt.Errorf("%w: the leaf locations %s are observed by more than one factor", ErrUnsupported, b.Leaves.Name)
		}
		if len(b.softmax) > 0 {
			return nil, fmt.Errorf("%w: the leaf locations %s are read both as the logits of %s and by %s", ErrUnsupported, b.Leaves.Name, b.softmax[0], f)
		}
		b.Leaf, b.Data = f, f.Target
		if isG {
			b.gaussian = gl
		} else {
			b.augmented = al
			b.threshold, _ = al.(stdlib.ThresholdLeaf)
			b.auxLog, _ = al.(stdlib.AuxLogProber)
		}
		b.index = index
		if index != nil {
			b.rows = f.Target.Dims[0]
		}
		for k := range 2 {
			slot := f.Index[k].(graph.LoopIndex).Slot
			b.slots[k] = slot
			for _, l := range f.Loops {
				if l.Slot == slot {
					b.lo[k] = l.Lo
				}
			}
		}
	}
	if len(b.softmax) > 0 && b.Leaf != nil {
		return nil, fmt.Errorf("%w: the leaf locations %s are read both as the logits of %s and by %s", ErrUnsupported, b.Leaves.Name, b.softmax[0], b.Leaf)
	}
	return b, nil
}

// leafCapability returns f's node type when it is a scalar type (the leaf
// capabilities are asserted on it), or nil.
func leafCapability(f *graph.Factor) any {
	if t, ok := f.Scalar(); ok {
		return t
	}
	return nil
}

// leafTypeNames lists the standard node types that offer leaf evidence.
func leafTypeNames() string {
	var names []string
	for _, n := range stdlib.DistNames() {
		t, _ := stdlib.Lookup(n)
		_, g := t.(stdlib.GaussianLeaf)
		_, a := t.(stdlib.AugmentedLeaf)
		if g || a {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// isLeafElem reports whether x is leaves[i, d] with the factor's own target
// indices, so that element (i, d) of the data observes leaf i, dimension d.
func isLeafElem(f *graph.Factor, x graph.Expr, leaves *graph.Var) bool {
	e, ok := x.(graph.Elem)
	if !ok || e.V != leaves || !f.Elementwise || len(f.Index) != 2 || !slices.Equal(f.Target.Dims, leaves.Dims) {
		return false
	}
	for k := range e.Idx {
		a, ok1 := e.Idx[k].(graph.LoopIndex)
		b, ok2 := f.Index[k].(graph.LoopIndex)
		if !ok1 || !ok2 || a.Slot != b.Slot {
			return false
		}
	}
	return true
}

// indexedLeafElem returns the index expression r when the first of args
// is leaves[r, d] in an elementwise factor Y[t, d] over all t, d, with d
// the factor's own second index, r something other than t (typically a
// discrete latent z[t]) that reads neither the leaves nor the data, and Y
// with leaves' number of columns; else nil.
func indexedLeafElem(f *graph.Factor, args []graph.Expr, leaves *graph.Var) graph.Expr {
	if len(args) == 0 || !f.Elementwise || len(f.Index) != 2 || len(f.Target.Dims) != 2 || f.Target.Dims[1] != leaves.Dims[1] {
		return nil
	}
	e, ok := args[0].(graph.Elem)
	if !ok || e.V != leaves {
		return nil
	}
	d, ok1 := e.Idx[1].(graph.LoopIndex)
	fd, ok2 := f.Index[1].(graph.LoopIndex)
	ft, ok3 := f.Index[0].(graph.LoopIndex)
	if !ok1 || !ok2 || !ok3 || d.Slot != fd.Slot {
		return nil
	}
	if li, ok := e.Idx[0].(graph.LoopIndex); ok && li.Slot == ft.Slot {
		return nil // leaves[i, d]: not indexed
	}
	if graph.Reads(e.Idx[0], leaves, f.Target) {
		return nil
	}
	return e.Idx[0]
}

// Indexed returns the expression through which the leaf factor picks the
// leaf row of each data row (z[t] in Y[t, d] ~ Normal(mu[z[t], d], sd)),
// or nil when data row i observes leaf i.
func (b *TreeBinding) Indexed() graph.Expr { return b.index }

// Exact reports whether the leaf locations are themselves the observed
// data (exact evidence).
func (b *TreeBinding) Exact() bool { return b.Data != nil && b.Data == b.Leaves }

// Gaussian reports whether the leaf factor is a stdlib.GaussianLeaf: the
// leaves observe the data through Gaussian noise.
func (b *TreeBinding) Gaussian() bool { return b.gaussian != nil }

// Augmented returns the leaf factor's stdlib.AugmentedLeaf capability, or
// nil when the evidence needs no auxiliary variables.
func (b *TreeBinding) Augmented() stdlib.AugmentedLeaf { return b.augmented }

// paramUpdate reports why the engine cannot update v, a latent variable
// that the leaf factor reads in a parameter other than the location, or
// nil: an augmented likelihood's parameters are updated given the
// auxiliaries only when its type offers stdlib.AuxLogProber, the part of
// the augmented density that the evidence leaves out.
func (b *TreeBinding) paramUpdate(v *graph.Var) error {
	if b.augmented == nil || b.auxLog != nil {
		return nil
	}
	return fmt.Errorf("%w: %s enters the %s likelihood, an augmented one (stdlib.AugmentedLeaf) that does not offer stdlib.AuxLogProber, "+
		"so the engine cannot update its parameters: clamp %s with --set or make it a constant", ErrUnsupported, v.Name, b.Leaf.TypeName(), v.Name)
}

// auxLogProb is Σ AuxLogProb(y, u, p) over the observed entries: the part
// of the log density of (data, auxiliaries) given the leaf locations that
// the evidence leaves out (0 without a stdlib.AuxLogProber).
func (b *TreeBinding) auxLogProb(env *graph.Env, aux []float64, p *[]float64) (float64, error) {
	if b.auxLog == nil {
		return 0, nil
	}
	y := env.Values[b.Data.ID]
	var lp float64
	for k, u := range aux {
		if math.IsNaN(y[k]) {
			continue
		}
		q, err := b.params(env, k, math.NaN(), p)
		if err != nil {
			return 0, err
		}
		lp += b.auxLog.AuxLogProb(y[k], u, q)
	}
	return lp, nil
}

// Threshold returns the leaf factor's stdlib.ThresholdLeaf capability, or
// nil.
func (b *TreeBinding) Threshold() stdlib.ThresholdLeaf { return b.threshold }

// Kind describes how the data reach the leaves, for --explain: "none",
// "observed directly", or the leaf factor's node type and capability.
func (b *TreeBinding) Kind() string {
	switch {
	case b.Leaf != nil && b.augmented != nil:
		return b.Leaf.TypeName() + " (augmented leaf evidence)"
	case b.Leaf != nil:
		return b.Leaf.TypeName() + " (Gaussian leaf evidence)"
	case b.Exact():
		return "observed directly"
	case b.LatentLeaves():
		return "latent logits of " + b.softmax[0].TypeName() + "(softmax(...)) (observed exactly by the tree)"
	}
	return "none"
}

// ClosedForm returns nil when the leaves' Gaussian evidence follows from
// the data alone (Evidence), and otherwise an error wrapping
// ErrUnsupported that names the leaf factor and why: an augmented
// likelihood's evidence needs the sampler's auxiliary variables.
func (b *TreeBinding) ClosedForm() error {
	if b.LatentLeaves() {
		return unsupportedError(fmt.Sprintf("the leaves %s are latent logits of %s (softmax emissions): the marginal likelihood of the data given the tree alone is not available", b.Leaves.Name, b.softmax[0]))
	}
	if b.index != nil {
		return unsupportedError(fmt.Sprintf("the data %s reach the leaves %s through the index %s (%s): the leaves' evidence depends on the sampler's values of it, "+
			"so the marginal likelihood given the tree alone is not available", b.Data.Name, b.Leaves.Name, b.index, b.Leaf))
	}
	if b.augmented == nil {
		return nil
	}
	return unsupportedError(fmt.Sprintf("the %s likelihood of %s has no closed-form marginal likelihood given the tree: "+
		"it is an augmented likelihood (stdlib.AugmentedLeaf), whose Gaussian leaf evidence needs the sampler's auxiliary variables",
		b.Leaf.TypeName(), b.Data.Name))
}

// Scorable returns nil when Model.Score can evaluate the marginal
// likelihood of the data at the leaves given the tree and the values of
// the other variables: with closed-form evidence (ClosedForm), or through
// a latent index with Gaussian evidence (given the index's values, such as
// an HMM's states). Otherwise ClosedForm's error; a likelihood that
// offers stdlib.TiltedLeaf (Probit) is then scored by expectation
// propagation.
func (b *TreeBinding) Scorable() error {
	if b.indexedGaussian() {
		return nil
	}
	return b.ClosedForm()
}

// indexedGaussian reports whether the leaves are read through a latent
// index with Gaussian evidence (mu[z[t], d], given the index's values),
// which Score evaluates exactly (scoreTree).
func (b *TreeBinding) indexedGaussian() bool {
	return b.index != nil && b.gaussian != nil && !b.LatentLeaves()
}

// unsupportedError is an error message that wraps ErrUnsupported without
// repeating its text.
type unsupportedError string

func (e unsupportedError) Error() string { return string(e) }
func (e unsupportedError) Unwrap() error { return ErrUnsupported }

// params evaluates the leaf factor's parameters at element k = i·D + d of
// the data into p (grown as needed) with p[0], the location, set to z.
// The other parameters are checked against their supports.
func (b *TreeBinding) params(env *graph.Env, k int, z float64, p *[]float64) ([]float64, error) {
	f := b.Leaf
	if cap(*p) < len(f.Args) {
		*p = make([]float64, len(f.Args))
	}
	q := (*p)[:len(f.Args)]
	q[0] = z
	if len(f.Args) == 1 {
		return q, nil
	}
	env.Loop[b.slots[0]] = k/b.D + b.lo[0]
	env.Loop[b.slots[1]] = k%b.D + b.lo[1]
	for j, a := range f.Args[1:] {
		x, err := graph.Eval(a, env)
		if err != nil {
			return q, fmt.Errorf("%s: %w", f, err)
		}
		q[j+1] = x
		if prm := f.Type.Params()[j+1]; !prm.Support.Contains(q[j+1]) {
			return q, fmt.Errorf("%s: %s parameter %s = %v is outside its support, %v", f, f.TypeName(), prm.Name, q[j+1], prm.Support)
		}
	}
	return q, nil
}

// Evidence calls fn with the Gaussian evidence of every leaf and dimension
// as it follows from the observed data in env: mean and precision (0 when
// missing or unobserved, +Inf when observed exactly). An augmented
// likelihood has no such evidence without its auxiliary variables:
// Evidence returns ClosedForm's error.
func (b *TreeBinding) Evidence(env *graph.Env, fn func(i, d int, mean, prec float64)) error {
	if err := b.ClosedForm(); err != nil {
		return err
	}
	var y []float64
	if b.Data != nil {
		y = env.Values[b.Data.ID]
	}
	var p []float64
	for k := range b.N * b.D {
		i, d := k/b.D, k%b.D
		switch {
		case y == nil || math.IsNaN(y[k]):
			fn(i, d, 0, 0)
		case b.Leaf == nil:
			fn(i, d, y[k], math.Inf(1))
		default:
			q, err := b.params(env, k, math.NaN(), &p)
			if err != nil {
				return err
			}
			mean, prec, err := b.gaussian.LeafGaussian(y[k], q)
			if err != nil {
				return fmt.Errorf("%s: %w", b.Leaf, err)
			}
			fn(i, d, mean, prec)
		}
	}
	return nil
}

// leafElem returns the element (row-major in the leaves) of the leaf
// location that element k of the data observes: k itself, or for an
// indexed binding the leaf row its index picks in the same column.
func (b *TreeBinding) leafElem(env *graph.Env, k int) (int, error) {
	if b.index == nil {
		return k, nil
	}
	env.Loop[b.slots[0]] = k/b.D + b.lo[0]
	env.Loop[b.slots[1]] = k%b.D + b.lo[1]
	r, err := graph.Eval(b.index, env)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.Leaf, err)
	}
	if r != math.Trunc(r) || r < 1 || r > float64(b.N) {
		return 0, fmt.Errorf("%s: at data row %d: %w", b.Leaf, k/b.D+1, graph.IndexError{Var: b.Leaves.Name, Index: r, Dim: b.N})
	}
	return (int(r)-1)*b.D + k%b.D, nil
}

// indexedEvidence calls fn with the Gaussian evidence of every leaf and
// dimension of an indexed binding (Indexed) at the values in env: the
// product of the evidence (m_t, p_t) of the data rows t whose index is
// the leaf's row, a Gaussian in the location of precision P = Σ p_t and
// mean M = Σ p_t m_t / P (0, 0 when no observed datum picks the leaf). It
// returns the log of the factor the product has beyond that Gaussian,
// Σ_t log N(m_t; M, 1/p_t) − log N(M; M, 1/P) summed over leaves and
// dimensions, which belief propagation's marginal likelihood lacks. An
// index outside the leaf rows 1..N is an error. sc is scratch space: it
// also keeps each datum's leaf element and evidence, so that the index
// and the likelihood's parameters are evaluated once per datum.
func (b *TreeBinding) indexedEvidence(env *graph.Env, sc *[]float64, fn func(i, d int, mean, prec float64) error) (float64, error) {
	N, D := b.N, b.D
	n := b.rows * D
	if cap(*sc) < 2*N*D+3*n {
		*sc = make([]float64, 2*N*D+3*n)
	}
	P, S := (*sc)[:N*D], (*sc)[N*D:2*N*D]
	leaf, ms, ps := (*sc)[2*N*D:2*N*D+n], (*sc)[2*N*D+n:2*N*D+2*n], (*sc)[2*N*D+2*n:2*N*D+3*n]
	clear(P)
	clear(S)
	y := env.Values[b.Data.ID]
	var q []float64
	var resid float64
	for k := range n {
		if math.IsNaN(y[k]) {
			continue
		}
		j, err := b.leafElem(env, k)
		if err != nil {
			return 0, err
		}
		qq, err := b.params(env, k, math.NaN(), &q)
		if err != nil {
			return 0, err
		}
		mean, prec, err := b.gaussian.LeafGaussian(y[k], qq)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", b.Leaf, err)
		}
		if math.IsInf(prec, 1) {
			return 0, fmt.Errorf("%w: %s: exact evidence through the index %s", ErrUnsupported, b.Leaf, b.index)
		}
		P[j] += prec
		S[j] += prec * mean
		leaf[k], ms[k], ps[k] = float64(j), mean, prec
	}
	for j := range P {
		if P[j] > 0 {
			S[j] /= P[j] // the mean M
			resid -= 0.5 * math.Log(P[j]/(2*math.Pi))
		}
	}
	for k := range n {
		if prec := ps[k]; !math.IsNaN(y[k]) && prec > 0 {
			r := ms[k] - S[int(leaf[k])]
			resid += 0.5*math.Log(prec/(2*math.Pi)) - 0.5*prec*r*r
		}
	}
	for j := range P {
		mean, prec := 0.0, P[j]
		if prec > 0 {
			mean = S[j]
		}
		if err := fn(j/D, j%D, mean, prec); err != nil {
			return 0, err
		}
	}
	return resid, nil
}

// observe sets the evidence of every leaf of lik from the data in env (see
// Evidence).
func (b *TreeBinding) observe(lik *bp.Model, env *graph.Env) error {
	var first error
	err := b.Evidence(env, func(i, d int, mean, prec float64) {
		if err := lik.SetEvidence(pydt.NodeID(i), d, mean, prec); err != nil && first == nil {
			first = err
		}
	})
	if err != nil {
		return err
	}
	return first
}

// DrawData draws element k of the data given the leaf location z there:
// z itself when the leaves are observed directly, else a draw of the leaf
// factor's distribution with location z. p is scratch space.
func (b *TreeBinding) DrawData(rng *rand.Rand, env *graph.Env, k int, z float64, p *[]float64) (float64, error) {
	if b.Leaf == nil {
		return z, nil
	}
	q, err := b.params(env, k, z, p)
	if err != nil {
		return 0, err
	}
	t, _ := b.Leaf.Scalar()
	return t.Rand(rng, q), nil
}

// DataSupport is the support of the data's values: that of the leaf
// factor's node type, or the real line for leaves observed directly.
func (b *TreeBinding) DataSupport() stdlib.Support {
	if b.Leaf == nil {
		return stdlib.Real
	}
	t, _ := b.Leaf.Scalar()
	return t.Support()
}

// drawAux draws the auxiliary variable of every observed entry of the
// data given the leaf locations z (N·D, row-major) into aux, and calls
// set, when not nil, with each one's evidence. p is scratch space.
func (b *TreeBinding) drawAux(rng *rand.Rand, env *graph.Env, z, aux []float64, p *[]float64, set func(k int, mean, prec float64) error) error {
	y := env.Values[b.Data.ID]
	for k := range b.N * b.D {
		if math.IsNaN(y[k]) {
			continue
		}
		if math.IsNaN(z[k]) || math.IsInf(z[k], 0) {
			// An augmentation's conditional has no draw there (Probit's
			// truncated normal panics): a state float64 cannot represent.
			return fmt.Errorf("%s: the sampled location of row %d, column %d of %s is %v, which float64 cannot represent; "+
				"the tree has an edge too short or long for its variance: try clamping or rescaling the PYDT variance", b.Leaf, k/b.D+1, k%b.D+1, b.Leaves.Name, z[k])
		}
		q, err := b.params(env, k, z[k], p)
		if err != nil {
			return err
		}
		aux[k] = b.augmented.DrawAux(rng, y[k], z[k], q)
		if set != nil {
			mean, prec := b.augmented.AuxEvidence(y[k], aux[k], q)
			if err := set(k, mean, prec); err != nil {
				return err
			}
		}
	}
	return nil
}

// auxEvidence calls fn with the evidence of every leaf and dimension given
// the auxiliary variables aux: none (0, 0) where the data are missing.
func (b *TreeBinding) auxEvidence(env *graph.Env, aux []float64, p *[]float64, fn func(k int, mean, prec float64) error) error {
	y := env.Values[b.Data.ID]
	for k, u := range aux {
		if math.IsNaN(y[k]) {
			if err := fn(k, 0, 0); err != nil {
				return err
			}
			continue
		}
		q, err := b.params(env, k, math.NaN(), p)
		if err != nil {
			return err
		}
		mean, prec := b.augmented.AuxEvidence(y[k], u, q)
		if err := fn(k, mean, prec); err != nil {
			return err
		}
	}
	return nil
}
