// Package inference runs compiled pydtlang models: forward simulation from
// the prior, scoring a tree against data, and the MCMC engine that samples
// trees and hyperparameters from the posterior.
//
// A Model binds a compiled graph (package graph) to the PYDT machinery in
// stdlib/pydt: it finds the tree factor, evaluates its parameters, and
// decides how the data reach the tree's leaves. Every likelihood reaches the
// tree as Gaussian evidence per leaf and dimension (package bp): observed
// locations directly, a Normal noise model as finite-precision evidence, a
// Probit model through auxiliary variables whose truncated-normal
// conditionals again give Gaussian evidence.
package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// Model is a compiled graph bound for inference.
type Model struct {
	G *graph.Graph
	// Trees binds each PYDT of the graph to the factor that observes its
	// leaves, in statement order (graph.Graph.Trees).
	Trees []*TreeBinding
	// Tree, Leaves, N, D and Data are those of Trees[0], the model's
	// first tree, whose outputs keep the names of a one-tree run.
	Tree   *graph.Factor
	Leaves *graph.Var
	N, D   int
	Data   *graph.Var
	// Labels names the leaves of Trees[0] (the data's row labels), or
	// nil; TreeBinding.Labels names those of each tree.
	Labels []string
	// Scaling is set by Standardize: the data observed at the leaves are
	// then in standardized units.
	Scaling *Scaling
	// Inputs are the files the model was loaded from (Inputs.Load), with
	// their SHA-256, or nil: Run records them in run.json, and Resume
	// refuses a model whose files differ from those recorded.
	Inputs *Inputs
}

// ErrUnsupported is wrapped by errors for models the engine cannot run yet.
var ErrUnsupported = errors.New("not supported")

// NewModel binds g. The graph must have been compiled without
// Options.Partial; each PYDT is bound on its own N_k×D_k matrix
// (bindTree). A graph without a PYDT (compiled without
// graph.Options.NeedPYDT, such as examples/topics-flat.pydt) gives a model
// whose chains run (NewSchedule, NewChain, Chain.Sweep, Chain.Values) but
// which Run, Resume, Sample, EM, scoring and standardizing refuse: their
// files and summaries are those of a tree.
func NewModel(g *graph.Graph) (*Model, error) {
	m := &Model{G: g}
	if len(g.Trees) == 0 {
		return m, nil
	}
	for _, f := range g.Trees {
		b, err := bindTree(g, f)
		if err != nil {
			return nil, err
		}
		m.Trees = append(m.Trees, b)
	}
	b := m.Trees[0]
	m.Tree, m.Leaves, m.N, m.D, m.Data = b.Factor, b.Leaves, b.N, b.D, b.Data
	m.Labels = b.Labels()
	return m, nil
}

// needTree refuses, for what, a model without a PYDT (nil is left to
// the caller's own checks).
func (m *Model) needTree(what string) error {
	if m != nil && len(m.Trees) == 0 {
		return fmt.Errorf("%w: %s needs a PYDT node, and the model has none", ErrUnsupported, what)
	}
	return nil
}

// treeIndex returns the index in m.Trees of the binding of the PYDT
// factor f, or -1.
func (m *Model) treeIndex(f *graph.Factor) int {
	return slices.IndexFunc(m.Trees, func(b *TreeBinding) bool { return b.Factor == f })
}

// leafIndex returns the index in m.Trees of the binding whose leaf factor
// is f, or -1.
func (m *Model) leafIndex(f *graph.Factor) int {
	if f == nil {
		return -1
	}
	return slices.IndexFunc(m.Trees, func(b *TreeBinding) bool { return b.Leaf == f })
}

// latentLeaves reports whether v is the leaf matrix of a PYDT whose
// leaves are latent values of the graph (TreeBinding.LatentLeaves): a
// checkpoint keeps them, as other latent values.
func (m *Model) latentLeaves(v *graph.Var) bool {
	return slices.ContainsFunc(m.Trees, func(b *TreeBinding) bool { return b.Leaves == v && b.LatentLeaves() })
}

// Several reports whether the model has more than one PYDT.
func (m *Model) Several() bool { return len(m.Trees) > 1 }

// isLeafFactor reports whether f is the leaf factor of one of m's trees:
// its density is the trees' likelihood, not a prior term.
func (m *Model) isLeafFactor(f *graph.Factor) bool {
	return slices.ContainsFunc(m.Trees, func(b *TreeBinding) bool { return b.Leaf == f })
}

// State is one point of the model's joint space: the value of every
// variable and the trees.
type State struct {
	Env *graph.Env
	// Trees holds the tree of each PYDT, parallel to Model.Trees (nil
	// until drawn or restored).
	Trees []*pydt.Tree
}

// setTree sets the tree of the model's k-th PYDT.
func (st *State) setTree(k int, n int, tr *pydt.Tree) {
	if len(st.Trees) < n {
		st.Trees = append(st.Trees, make([]*pydt.Tree, n-len(st.Trees))...)
	}
	st.Trees[k] = tr
}

// NewState returns a state holding the model's fixed values (constants,
// data, clamped values); latent values are zero and there is no tree.
func (m *Model) NewState() *State {
	return &State{Env: graph.NewEnv(m.G)}
}

// Refresh recomputes every deterministic variable from its inputs. An
// error (an index outside its dimension) names the variable.
func (m *Model) Refresh(env *graph.Env) error {
	return m.G.EvalDeterministic(env)
}

// TreeParams evaluates the first PYDT's parameters in env (see
// TreeBinding.Params).
func (m *Model) TreeParams(env *graph.Env) (sim.Params, error) {
	if err := m.needTree("the tree's parameters"); err != nil {
		return sim.Params{}, err
	}
	return m.Trees[0].Params(env)
}

// Params evaluates the PYDT's parameters in env. A variance per dimension
// (graph.Factor.DimLoop) is returned in Variances, with Variance NaN;
// sim.Params.DimVariances gives either form per dimension.
func (b *TreeBinding) Params(env *graph.Env) (sim.Params, error) {
	f := b.Factor
	var err error
	eval := func(x graph.Expr) float64 {
		y, e := graph.Eval(x, env)
		if err == nil && e != nil {
			err = fmt.Errorf("%s: PYDT node %s: %w", f.Pos, b.Leaves.Name, e)
		}
		return y
	}
	p := sim.Params{
		Alpha: eval(f.Args[graph.PYDTAlpha]),
		Beta:  eval(f.Args[graph.PYDTBeta]),
		Dims:  b.D,
	}
	if f.DimLoop == nil {
		p.Variance = eval(f.Args[graph.PYDTVariance])
	} else {
		// A variance per dimension: Variance is unused (NaN, so that a
		// caller reading it fails loudly).
		p.Variance = math.NaN()
		p.Variances = make([]float64, b.D)
		if e := f.Variances(env, p.Variances); e != nil && err == nil {
			err = fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, e)
		}
	}
	args := make([]float64, len(f.Divergence.Args))
	for i, a := range f.Divergence.Args {
		args[i] = eval(a)
	}
	if err != nil {
		return p, err
	}
	for i, prm := range f.Divergence.Type.Params {
		if !prm.Support.Contains(args[i]) {
			return p, fmt.Errorf("%s: %s parameter %s = %v must be %v (%s)", f.Pos, f.Divergence.Type.Name, prm.Name, args[i], prm.Support, f.Divergence)
		}
	}
	p.Div = f.Divergence.Type.New(args)
	if err := p.Check(); err != nil {
		return p, fmt.Errorf("%s: PYDT node %s: %w", f.Pos, b.Leaves.Name, err)
	}
	return p, nil
}

// Labels returns the row labels of the data at the tree's leaves, or nil.
func (b *TreeBinding) Labels() []string {
	if b.Data != nil && b.Data.Data != nil && b.index == nil { // indexed: the leaves are not the data's rows
		return b.Data.Data.RowLabels
	}
	return nil
}

// SamplePrior draws every non-fixed variable and the tree by forward
// simulation, in the graph's topological order; the PYDT by its generative
// process (package sim). Draws whose PYDT parameters are invalid (alpha <
// -2 beta) are rejected and made again, since the model has density zero
// there; fixed values that no draw can make valid are an error.
func (m *Model) SamplePrior(rng *rand.Rand) (*State, error) {
	return m.sample(rng, false)
}

// SampleJoint draws every variable, observed data included, and the tree
// from the model's joint distribution (clamped values and constants stay
// fixed): the marginal-conditional simulator of Geweke's test, and the
// simulator of simulation-based calibration.
func (m *Model) SampleJoint(rng *rand.Rand) (*State, error) {
	return m.sample(rng, true)
}

// fixed reports whether a draw keeps v's value: constants and clamped
// values always, observed data unless data is set.
func fixed(v *graph.Var, data bool) bool {
	return v.Role == graph.Observed && !data || v.Role == graph.Clamped || v.Role == graph.Constant
}

func (m *Model) drawFactor(rng *rand.Rand, st *State, f *graph.Factor, data bool) error {
	env := st.Env
	if f.IsPYDT() {
		k := m.treeIndex(f)
		b := m.Trees[k]
		p, err := b.Params(env)
		if err != nil {
			return &treeParamsError{err} // sample draws again
		}
		tr, x, err := sim.Draw(rng, b.N, p)
		if err != nil {
			return err
		}
		tr.Labels = b.Labels()
		st.setTree(k, len(m.Trees), tr)
		if !fixed(f.Target, data) {
			copy(env.Values[f.Target.ID], x[:b.N*b.D])
		}
		return nil
	}
	if fixed(f.Target, data) {
		return nil
	}
	if vt, ok := f.Vector(); ok {
		return drawVector(rng, env, f, vt)
	}
	dist, ok := f.Scalar()
	if !ok {
		return fmt.Errorf("%s: drawing %s: %s is not a scalar distribution", f.Pos, f.Target.Name, f.TypeName())
	}
	params := make([]float64, len(f.Args))
	return f.ForEach(env, func(off int) error {
		for i, a := range f.Args {
			params[i] = a.Eval(env)
		}
		if err := dist.CheckParams(params); err != nil {
			return fmt.Errorf("%s: drawing %s: %w", f.Pos, f.Target.Name, err)
		}
		env.Values[f.Target.ID][off] = dist.Rand(rng, params)
		return nil
	})
}

// Scores are the parts of the log joint density of a state, as CmdStan's
// log_prob reports them.
type Scores struct {
	// LogTree is the log density of the tree structure and divergence
	// times.
	LogTree float64 `json:"log_tree"`
	// LogLik is the log density of the data with every internal location
	// (and latent leaf location) integrated out: exact, or, when
	// LogLikMethod is "EP", expectation propagation's approximation (for
	// a likelihood without closed-form evidence, such as Probit).
	LogLik float64 `json:"log_lik"`
	// LogLikMethod is "" when LogLik is exact and "EP" when it is an
	// expectation-propagation approximation.
	LogLikMethod string `json:"log_lik_method,omitempty"`
	// LogHyper is the log prior density of the latent and clamped
	// variables (scalars and arrays) at their values.
	LogHyper float64 `json:"log_hyper"`
	// LogJoint is the sum of the three.
	LogJoint float64 `json:"log_joint"`
	// HyperTerms lists the factors that LogHyper sums, as written in the
	// graph summary ("c ~ Gamma(1, 1)").
	HyperTerms []string `json:"-"`
	// Omitted lists the factors left out of LogHyper and LogJoint: those
	// of scalars clamped outside their distribution's support (see
	// graph.Factor.Omitted).
	Omitted []string `json:"omitted,omitempty"`
}

// Omitted returns the factors that are left out of the joint density
// because their variable is clamped to a value outside the distribution's
// support (graph.Factor.Omitted), e.g. alpha = 0 under a Gamma prior for
// Neal's Dirichlet diffusion tree.
func (m *Model) Omitted() []*graph.Factor {
	var out []*graph.Factor
	for _, f := range m.G.Factors {
		if f.Omitted {
			out = append(out, f)
		}
	}
	return out
}

// OmittedNote returns a sentence for the user naming the factors that
// Omitted returns, or "" when there are none.
func (m *Model) OmittedNote() string {
	fs := m.Omitted()
	if len(fs) == 0 {
		return ""
	}
	var terms, vals []string
	for _, f := range fs {
		terms = append(terms, f.String())
		vals = append(vals, fmt.Sprintf("%s = %v", f.Target.Name, f.Target.Value[0]))
	}
	return fmt.Sprintf("%s lie outside the supports of their distributions, so these factors are left out of log_hyper and log_joint: %s",
		strings.Join(vals, ", "), strings.Join(terms, "; "))
}

// LogHyper returns, at the values in env, the log prior density of every
// stochastic variable other than data and the tree's leaves (hyper), and
// the log density of the data that do not reach the tree (data).
func (m *Model) LogHyper(env *graph.Env) (hyper, data float64, err error) {
	if err := m.Refresh(env); err != nil {
		return 0, 0, err
	}
	var params []float64
	for _, f := range m.G.Factors {
		if f.IsPYDT() || m.isLeafFactor(f) || f.Omitted {
			continue
		}
		sum, err := factorLogDensity(f, env, &params)
		if err != nil {
			return 0, 0, err
		}
		if !f.Target.IsData { // a latent or clamped variable's prior
			hyper += sum
		} else {
			data += sum
		}
	}
	return hyper, data, nil
}

// factorLogDensity returns the log density of the scalar factor f at the
// values in env, summed over the elements it covers: missing (NaN) elements
// are marginalised, and parameters outside their supports give -Inf. params
// is scratch space, grown as needed.
func factorLogDensity(f *graph.Factor, env *graph.Env, params *[]float64) (float64, error) {
	if c, ok := f.Type.(stdlib.CategoryLogits); ok {
		if r, ok := f.Args[c.LogitsParam()].(graph.Row); ok && len(f.Args) == 1 {
			return logitsLogDensity(f, r, env, nil)
		}
	}
	if vt, ok := f.Vector(); ok {
		var a graph.VecArgs
		var sum float64
		err := f.ForEach(env, func(off int) error {
			sum += vectorLogDensity(f, vt, env, off, &a)
			return nil
		})
		return sum, err
	}
	dist, ok := f.Scalar()
	if !ok {
		return 0, fmt.Errorf("%s: %s is not a scalar distribution", f.Pos, f.TypeName())
	}
	if cap(*params) < len(f.Args) {
		*params = make([]float64, len(f.Args))
	}
	p := (*params)[:len(f.Args)]
	var sum float64
	err := f.ForEach(env, func(off int) error {
		x := env.Values[f.Target.ID][off]
		if math.IsNaN(x) {
			return nil
		}
		for i, a := range f.Args {
			p[i] = a.Eval(env)
		}
		if dist.CheckParams(p) != nil {
			sum = math.Inf(-1)
			return nil
		}
		sum += dist.LogProb(x, p)
		return nil
	})
	return sum, err
}

// logitsLogDensity is the log density of the categorical factor f whose
// probabilities are softmax(r) (stdlib.CategoryLogits with the logit row
// r, its only parameter), summed over its elements: each row's log
// normaliser is computed once, not once per element, so that the cost is
// that of the rows read plus one term per element. lse is scratch space
// (nil: allocated), one entry per row of r's variable. Missing values add
// nothing; a value outside 1..K or non-finite logits give -Inf.
func logitsLogDensity(f *graph.Factor, r graph.Row, env *graph.Env, lse []float64) (float64, error) {
	n := r.Len()
	rows := r.V.Len() / max(n, 1)
	if cap(lse) < rows {
		lse = make([]float64, rows)
	}
	lse = lse[:rows]
	for i := range lse {
		lse[i] = math.NaN()
	}
	eta := env.Values[r.V.ID]
	var sum float64
	err := forEachObserved(env, f, r, func(x float64, at int) error {
		row := at / n
		if math.IsNaN(lse[row]) {
			lse[row] = stdlib.LogSoftmaxNorm(eta[at : at+n])
			if math.IsNaN(lse[row]) || math.IsInf(lse[row], 0) {
				lse[row] = math.Inf(1) // non-finite logits: density 0
			}
		}
		if x != math.Trunc(x) || x < 1 || x > float64(n) {
			sum = math.Inf(-1)
			return nil
		}
		sum += eta[at+int(x)-1] - lse[row]
		return nil
	})
	if math.IsNaN(sum) {
		sum = math.Inf(-1)
	}
	return sum, err
}

// forEachObserved calls fn for each element of the categorical factor f
// whose value x is not missing, with at the offset of the element's row r
// (its probability or logit vector) in r's variable. An error of r's
// index or of fn is returned.
func forEachObserved(env *graph.Env, f *graph.Factor, r graph.Row, fn func(x float64, at int) error) error {
	return f.ForEach(env, func(off int) error {
		x := env.Values[f.Target.ID][off]
		if math.IsNaN(x) {
			return nil
		}
		at, err := r.Offset(env)
		if err != nil {
			return err
		}
		return fn(x, at)
	})
}

// drawVector draws every element (row, for a vector value) of the vector
// factor f (Categorical, Dirichlet) in turn, so that an element may read
// those drawn before it (z[t] ~ Categorical(trans[z[t - 1]])).
func drawVector(rng *rand.Rand, env *graph.Env, f *graph.Factor, vt stdlib.Vector) error {
	var a graph.VecArgs
	k := f.VecLen
	return f.ForEach(env, func(off int) error {
		p, err := a.Eval(f, env)
		if err != nil {
			return err
		}
		n := k
		if n == 0 {
			n = vectorLen(p, f)
		}
		if err := vt.CheckVector(p, n); err != nil {
			return fmt.Errorf("%s: drawing %s: %w", f.Pos, f.Target.Name, err)
		}
		vt.RandVector(rng, f.Value(env, off), p)
		return nil
	})
}

// vectorLen is the length of the vectors of a scalar-valued vector factor
// (Categorical): that of its first vector argument.
func vectorLen(p [][]float64, f *graph.Factor) int {
	for i, a := range f.Args {
		if _, ok := a.(graph.Row); ok {
			return len(p[i])
		}
	}
	return 1
}

// vectorLogDensity is the log density of the element at off of the vector
// factor f, with its loop indices set in env: 0 when its value is missing,
// -Inf when its parameters are invalid or cannot be evaluated (an index
// error is left recorded in env).
func vectorLogDensity(f *graph.Factor, vt stdlib.Vector, env *graph.Env, off int, a *graph.VecArgs) float64 {
	x := f.Value(env, off)
	if slices.ContainsFunc(x, math.IsNaN) {
		return 0
	}
	p, err := a.Eval(f, env)
	if err != nil {
		return math.Inf(-1)
	}
	n := f.VecLen
	if n == 0 {
		n = vectorLen(p, f)
	}
	if vt.CheckVector(p, n) != nil {
		return math.Inf(-1)
	}
	return vt.LogProbVector(x, p)
}

// observe sets the evidence of every leaf of lik from the data in env (see
// TreeBinding.Evidence).
func (m *Model) observe(lik *bp.Model, env *graph.Env) error {
	return m.Trees[0].observe(lik, env)
}

// Evidence calls fn with the Gaussian evidence of every leaf and dimension
// of the model's tree as it follows from the observed data (see
// TreeBinding.Evidence).
func (m *Model) Evidence(env *graph.Env, fn func(i, d int, mean, prec float64)) error {
	if err := m.needTree("leaf evidence"); err != nil {
		return err
	}
	return m.Trees[0].Evidence(env, fn)
}

// CheckScalars reports the first scalar latent or clamped variable whose
// value in env lies outside its support, e.g. after --set. A value clamped
// outside its distribution's support whose factor is omitted
// (graph.Factor.Omitted) is not one: the compiler checked it against the
// factors that read it.
func (m *Model) CheckScalars(env *graph.Env) error {
	for _, v := range m.G.Vars {
		if !v.Scalar() || v.Def == nil || v.Def.IsPYDT() || v.IsData || v.Def.Omitted {
			continue
		}
		if x := env.Values[v.ID][0]; !v.Support.Contains(x) {
			return fmt.Errorf("%s = %v is outside its support (%v)", v.Name, x, v.Support)
		}
	}
	return nil
}

// Supports lists the stochastic scalars of the model: the variables a run
// traces and score needs values for.
func (m *Model) Scalars() []*graph.Var {
	var out []*graph.Var
	for _, v := range m.G.Vars {
		if v.Scalar() && v.Def != nil && !v.IsData && (v.Role == graph.Latent || v.Role == graph.Clamped) {
			out = append(out, v)
		}
	}
	return out
}

// LatentArrays lists the latent arrays that are neither a PYDT's leaf
// locations nor data, such as a per-dimension precision prec[D]. A run
// traces every element of them (see Model.Traced).
func (m *Model) LatentArrays() []*graph.Var {
	var out []*graph.Var
	for _, v := range m.G.Vars {
		if v.Scalar() || v.Def == nil || v.IsData || v.Role != graph.Latent {
			continue
		}
		if slices.ContainsFunc(m.Trees, func(b *TreeBinding) bool { return b.Leaves == v }) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// DeterministicArrays lists the deterministic arrays, whose elements
// statements "m[k] = ..." define (graph.ArrayDef). A run traces every
// element of them (see Model.Traced).
func (m *Model) DeterministicArrays() []*graph.Var {
	var out []*graph.Var
	for _, v := range m.G.Vars {
		if _, ok := v.Expr.(*graph.ArrayDef); ok && v.Role == graph.Deterministic {
			out = append(out, v)
		}
	}
	return out
}

// Traced is one column of trace.csv: element Off (row-major) of Var, named
// Name: the variable's name for a scalar, else the element in the
// language's 1-based indexing, e.g. prec[2] or w[1,3].
//
// A column of TraceColumns may instead summarise a categorical array
// whose states have no fixed labels: with States > 0 it is occupied(z),
// the number of distinct states among Var's elements (Off unused).
type Traced struct {
	Var  *graph.Var
	Off  int
	Name string
	// States is the number of states K of Var for an occupied(z) column,
	// 0 for an element's column.
	States int
}

// Value is the column's value in env: the element's, or for occupied(z)
// the number of distinct states among z's elements.
func (c Traced) Value(env *graph.Env) float64 {
	x := env.Values[c.Var.ID]
	if c.States == 0 {
		return x[c.Off]
	}
	used := make([]bool, c.States)
	n := 0
	for _, v := range x {
		if k := int(v) - 1; float64(k+1) == v && k >= 0 && k < c.States && !used[k] {
			used[k] = true
			n++
		}
	}
	return float64(n)
}

// TraceColumns lists the columns of a run's trace.csv after log_lik: those
// of Traced, but a categorical latent array whose states have no fixed
// labels (z : categorical(K), label switching) is traced by occupied(z),
// the number of states in use, in place of its T elements; each kept
// draw of its elements goes to its draws file instead (DrawsFileOf), which
// the summary aligns.
func (m *Model) TraceColumns() []Traced {
	groups := labelGroups(m)
	var out []Traced
	for _, c := range m.Traced() {
		i := slices.IndexFunc(groups, func(g *labelGroup) bool { return g.z == c.Var })
		switch {
		case i < 0:
			out = append(out, c)
		case c.Off == 0:
			out = append(out, Traced{Var: c.Var, Name: "occupied(" + c.Var.Name + ")", States: groups[i].K})
		}
	}
	return out
}

// labelArrays are the categorical latent arrays that TraceColumns traces
// by occupied(z), in its order.
func labelArrays(cols []Traced) []*graph.Var {
	var out []*graph.Var
	for _, c := range cols {
		if c.States > 0 {
			out = append(out, c.Var)
		}
	}
	return out
}

// Traced lists the columns of trace.csv after log_lik: the stochastic
// scalars (Model.Scalars), then every element of the latent arrays
// (Model.LatentArrays) and then of the deterministic arrays
// (Model.DeterministicArrays), in row-major order.
func (m *Model) Traced() []Traced {
	var out []Traced
	for _, v := range m.Scalars() {
		out = append(out, Traced{Var: v, Name: v.Name})
	}
	for _, v := range append(m.LatentArrays(), m.DeterministicArrays()...) {
		for off := range v.Len() {
			idx := make([]string, len(v.Dims))
			rest := off
			for k := len(v.Dims) - 1; k >= 0; k-- {
				idx[k] = strconv.Itoa(rest%v.Dims[k] + 1)
				rest /= v.Dims[k]
			}
			out = append(out, Traced{Var: v, Off: off, Name: v.Name + "[" + strings.Join(idx, ",") + "]"})
		}
	}
	return out
}

// Warnings lists conditions of the data that a researcher should know
// about before trusting a fit: real-valued columns far from the unit scale
// that the default priors assume (see Standardize), and exactly duplicated
// rows of data observed directly at the leaves, for which the PYDT's
// posterior puts the split of the duplicates at t = 1 (and may be
// improper). A Normal noise model (X ~ Normal(Z, sd)) avoids the latter.
//
// A model with several PYDTs has the data of each checked in turn.
func (m *Model) Warnings(env *graph.Env) []string {
	if !m.Several() {
		return m.warnings(env)
	}
	var out []string
	for k := range m.Trees {
		out = append(out, m.treeView(k).warnings(env)...)
	}
	return out
}

func (m *Model) warnings(env *graph.Env) []string {
	if m.Data == nil {
		return nil
	}
	x := env.Values[m.Data.ID]
	out := m.scaleWarnings(x)
	if !m.Trees[0].Exact() {
		return out
	}
	seen := map[string]int{}
	dups := 0
	for i := range m.N {
		row := x[i*m.D : (i+1)*m.D]
		if slices.ContainsFunc(row, math.IsNaN) {
			continue // a row with missing values is not a duplicate point
		}
		key := fmt.Sprint(row)
		if j, dup := seen[key]; dup {
			out = append(out, fmt.Sprintf("rows %d and %d of %s are identical: the PYDT puts their split at t = 1, where its posterior can be improper; "+
				"remove duplicates or add a noise model, e.g. %s ~ Normal(Z, sd) with param Z : real[N, D] and Z ~ PYDT(...)", j+1, i+1, m.Data.Name, m.Data.Name))
			if dups++; dups == 3 {
				break
			}
			continue
		}
		seen[key] = i
	}
	return out
}
