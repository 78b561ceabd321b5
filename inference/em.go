package inference

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// This file plans greedy Bayesian EM (run --method em) on a compiled
// model: it checks by the node types' capabilities which parts of the model
// EM can fit, refuses the rest naming the variable, and turns the model
// into em.Options. The search over structures is in emsearch.go.

// EMPlan is the EM schedule of a model: what each latent variable becomes
// (a variational Gamma posterior, a point estimate) and how the leaf
// evidence enters the E-step.
type EMPlan struct {
	m   *Model
	env *graph.Env
	// Opt holds the hyperparameters: fixed values and priors of the
	// learned ones, the starts of those learned.
	Opt em.Options
	// C, Prec, Alpha and Beta are the latent variables learned as c,
	// 1/σ², α and β, or nil when that parameter is fixed.
	C, Prec, Alpha, Beta *graph.Var
	// PrecDims is the latent vector learned as the precisions 1/σ²_d of a
	// variance per dimension (the PYDT's variance 1 / prec[d]), or nil.
	// With a variance per dimension Opt.Variances holds the starts (or
	// the fixed values) and Opt.PrecPriors the priors.
	PrecDims *graph.Var
	// Noise is the latent noise precision of the leaf likelihood (a
	// scalar, or one per column), learned as q(noise) (Opt.Noise), or nil.
	Noise *graph.Var
	noise *emNoise
	// tilted is the leaf likelihood's EP capability (nil: Gaussian
	// evidence).
	tilted stdlib.TiltedLeaf
	steps  []string
	// deadline, when set, ends every EM fit of the search (runFit);
	// iterLog, when set, is called after each iteration of a fit.
	deadline time.Time
	iterLog  func(iter int, bound float64)
	// laplace, when set, adds the Laplace correction for the times to
	// every fitted tree's bound (EMTree.Bound); see laplaceMax. It is the
	// search's emSearch.laplace.
	laplace bool
	// ctx, when set, ends every EM fit of the search when it is done
	// (after at least one iteration).
	ctx context.Context
	// margin is the search's EMConfig.Margin (set by initial), the
	// initial trees' em.InitOptions.Margin; zero (before a search) means
	// em.DefaultMargin.
	margin float64
	// ab is where the search's α and β came from (holdAB), nil before
	// the search.
	ab *ABEstimate
	// laplaceFn, when set (tests: EMConfig.laplace), replaces
	// em.EM.Laplace in fitTree.
	laplaceFn func(*em.EM) (float64, error)
	// fits counts the EM fits begun (newFit), for the tests.
	fits int
}

// laplaceMax is the largest number of rows for which the search ranks
// trees by the Laplace approximation of log p(Y, α, β | T) (the EM bound
// plus em.EM.Laplace), with Gaussian evidence only: the correction costs
// O(K·N·D + K³) for a tree of K branch points (seconds for a binary tree
// of 1000 rows). Above it, on the large-data path and with
// EP sites, the search ranks by the EM bound alone.
const laplaceMax = 2000

// emUnsupported is the error for a model part EM cannot fit.
func emUnsupported(format string, args ...any) error {
	return fmt.Errorf("%w: run --method em: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// PlanEM checks that EM supports every part of m and returns its schedule.
// EM supports one PYDT with one diffusion variance or a variance per
// dimension (fixed, or 1 / prec[d] with elementwise Gamma priors on prec),
// the divergence function
// c/(1-t), leaves observed directly or through a likelihood with Gaussian
// evidence (exact) or one offering stdlib.TiltedLeaf (by EP, e.g. Probit),
// and, as latent variables, only c under a Gamma prior that only scales the
// divergence function, a precision 1/variance under a Gamma prior, α under
// a Gamma prior and β under a Beta prior, each read by the PYDT alone. Any
// other latent variable is an error naming it: EM never ignores one.
func PlanEM(m *Model) (*EMPlan, error) {
	if len(m.Trees) != 1 {
		return nil, emUnsupported("the model has %d PYDTs; EM fits one tree", len(m.Trees))
	}
	b := m.Trees[0]
	p := &EMPlan{m: m, env: m.NewState().Env}
	switch {
	case b.Data == nil:
		return nil, emUnsupported("no data are observed at the leaves of %s", m.Leaves.Name)
	case b.index != nil:
		// The leaves are not the data's rows: the initial trees, the
		// subsample and the leaf evidence all need one row per leaf.
		return nil, emUnsupported("the data %s reach the leaves %s through the index %s; EM fits trees whose leaves are the data's rows (use MCMC)",
			b.Data.Name, m.Leaves.Name, b.index)
	case b.Leaf == nil:
		p.steps = append(p.steps, fmt.Sprintf("E-step: belief propagation over the locations of %s, observed directly (exact)", m.Leaves.Name))
	case b.gaussian != nil:
		p.steps = append(p.steps, fmt.Sprintf("E-step: belief propagation over the locations of %s with the Gaussian leaf evidence of %s (exact)", m.Leaves.Name, b.Leaf.TypeName()))
	case b.Tilted() != nil:
		p.tilted = b.Tilted()
		p.steps = append(p.steps, fmt.Sprintf("E-step: EP site approximations of the %s likelihood of %s (its stdlib.TiltedLeaf capability), then belief propagation over %s (an approximation, not a bound)", b.Leaf.TypeName(), b.Data.Name, m.Leaves.Name))
	default:
		return nil, emUnsupported("the %s likelihood of %s offers neither Gaussian leaf evidence nor EP site updates (stdlib.TiltedLeaf)", b.Leaf.TypeName(), b.Data.Name)
	}
	var hyper []string
	for _, v := range m.G.Vars {
		if v.Role != graph.Latent || v == m.Leaves {
			continue
		}
		if err := p.bind(v); err != nil {
			return nil, err
		}
	}
	// Evaluate the fixed parameters, the learned ones set to their starts.
	if err := m.Refresh(p.env); err != nil {
		return nil, fmt.Errorf("run --method em: %w", err)
	}
	tp, err := m.TreeParams(p.env)
	if err != nil {
		return nil, fmt.Errorf("run --method em: %w", err)
	}
	div, ok := tp.Div.(pydt.DivInv)
	if !ok {
		return nil, emUnsupported("the divergence function %s of %s; EM supports c/(1-t) only", m.Tree.Divergence, m.Leaves.Name)
	}
	p.Opt.C, p.Opt.Variance, p.Opt.Alpha, p.Opt.Beta = div.C, tp.Variance, tp.Alpha, tp.Beta
	if p.noise != nil {
		if p.Opt.Noise, err = p.noiseData(); err != nil {
			return nil, err
		}
		name, each, of := p.Noise.Name, "", ""
		if p.noise.perCol {
			name, each, of = p.Noise.Name+"[d]", " for each column d", ", one per column"
		}
		p.steps[0] = fmt.Sprintf("E-step: belief propagation over the locations of %s with the Gaussian leaf evidence of %s at precision E[%s] (exact given q(%s))", m.Leaves.Name, b.Leaf.TypeName(), name, name)
		hyper = append(hyper, fmt.Sprintf("q(%s) Gamma%s: variational posterior of the noise precision of the %s likelihood of %s%s, from the expected squared residuals under the E-step's leaf marginals "+
			"(missing entries skipped); the E-step's leaf evidence has precision E[%s] (the likelihood's stdlib.GammaConjugate capability in its %s)",
			name, each, b.Leaf.TypeName(), b.Data.Name, of, name, b.Leaf.Type.Params()[p.noise.k].Name))
	}
	if m.Tree.DimLoop != nil {
		// A variance per dimension: learned as q(prec[d]) when the
		// variance is 1 / prec[d] with elementwise Gamma priors (bind),
		// otherwise fixed at its values.
		p.Opt.Variance = 0
		p.Opt.Variances = slices.Clone(tp.DimVariances())
		if len(p.Opt.Variances) != b.D {
			return nil, fmt.Errorf("run --method em: %d variances for the %d columns of %s", len(p.Opt.Variances), b.D, m.Leaves.Name)
		}
		if p.PrecDims == nil {
			p.steps = append(p.steps, fmt.Sprintf("a diffusion variance per dimension of %s, fixed at its values", m.Leaves.Name))
		}
	}
	switch {
	case p.PrecDims != nil && p.tilted != nil:
		hyper = append(hyper, fmt.Sprintf("%s[d] (the diffusion precision of dimension d): with EP sites, each held at its posterior mean from the same MCMC run as alpha and beta "+
			"(with --ab-sweeps -1 q(%s[d]) Gamma per tree)", p.PrecDims.Name, p.PrecDims.Name))
	case p.PrecDims != nil:
		hyper = append(hyper, fmt.Sprintf("q(%s[d]) Gamma for each dimension d: variational posteriors of the diffusion precisions per dimension", p.PrecDims.Name))
	}
	if p.C != nil {
		hyper = append(hyper, fmt.Sprintf("q(%s) Gamma: variational posterior (closed form, the Gibbs conditional's statistics)", p.C.Name))
	}
	switch {
	case p.Prec != nil && p.tilted != nil:
		hyper = append(hyper, fmt.Sprintf("%s (the diffusion precision): with EP sites, held at its posterior mean from the same MCMC run as alpha and beta "+
			"(with --ab-sweeps -1 a variational Gamma posterior per tree)", p.Prec.Name))
	case p.Prec != nil:
		hyper = append(hyper, fmt.Sprintf("q(%s) Gamma: variational posterior of the diffusion precision", p.Prec.Name))
	}
	if p.Alpha != nil {
		hyper = append(hyper, fmt.Sprintf("%s: held at its posterior mean from a short MCMC run on a random subsample of the rows (trees integrated out; --ab-rows, --ab-sweeps), "+
			"or with --ab-sweeps -1 MAP per tree by golden-section search under its Gamma prior", p.Alpha.Name))
	}
	if p.Beta != nil {
		hyper = append(hyper, fmt.Sprintf("%s: likewise (subsample posterior mean, or with --ab-sweeps -1 MAP per tree under its Beta prior)", p.Beta.Name))
	}
	p.steps = append(p.steps, "M-step: all divergence times jointly by L-BFGS (gonum/optimize) in the coordinates u, s_b = s_parent + e^u")
	if len(hyper) == 0 {
		hyper = append(hyper, "none: every hyperparameter is fixed")
	}
	p.steps = append(p.steps, "hyperparameters: "+strings.Join(hyper, "; "))
	return p, nil
}

// bind makes the latent scalar v one of the hyperparameters EM learns, or
// returns why it cannot.
func (p *EMPlan) bind(v *graph.Var) error {
	m := p.m
	if ok, err := p.bindNoise(v); ok || err != nil {
		return err
	}
	if g, ok := gibbsPrecisionDims(m, v); ok {
		// The precisions of a variance per dimension: q(prec[d]) under
		// each element's Gamma prior, started at the prior means.
		shape, rate, err := g.gammaParams(p.env)
		if err != nil {
			return fmt.Errorf("run --method em: prior of %s: %w", v.Name, err)
		}
		p.Opt.PrecPriors = make([]em.Gamma, len(shape))
		for k := range shape {
			p.Opt.PrecPriors[k] = em.Gamma{Shape: shape[k], Rate: rate[k]}
			if err := p.Opt.PrecPriors[k].Check(); err != nil {
				return fmt.Errorf("run --method em: prior of %s[%d]: %w", v.Name, k+1, err)
			}
			p.env.Values[v.ID][k] = shape[k] / rate[k]
		}
		p.PrecDims = v
		return nil
	}
	if !v.Scalar() {
		return emUnsupported("latent array %s: EM learns only the PYDT's scalar hyperparameters and the precisions 1/prec[d] of a variance per dimension under elementwise Gamma priors", v.Name)
	}
	set := func(x float64) { p.env.Values[v.ID][0] = x }
	// c and the precision: the Gamma priors that select their Gibbs
	// updates for MCMC select their variational posteriors here, read
	// from the same steps (each found its constant Gamma prior).
	learn := func(g scalar.Gamma) *em.Gamma {
		set(g.Shape / g.Rate) // start at the prior mean
		return &em.Gamma{Shape: g.Shape, Rate: g.Rate}
	}
	if g, ok := gibbsCOf(m, v); ok {
		p.Opt.CPrior, p.C = learn(g.prior), v
		return nil
	}
	if g, ok := gibbsPrecision(m, v); ok {
		p.Opt.PrecPrior, p.Prec = learn(g.prior), v
		return nil
	}
	fs, dets := m.G.Readers(v)
	onlyTree := len(fs) == 1 && fs[0] == m.Tree && len(dets) == 0
	ref := func(k int) bool { r, ok := graph.AsRef(m.Tree.Args[k]); return ok && r == v }
	if onlyTree && ref(0) {
		g, ok := constGammaPrior(v)
		if !ok {
			return emUnsupported("%s (alpha of %s) has prior %s; EM needs a Gamma prior with constant parameters", v.Name, m.Leaves.Name, v.Def.TypeName())
		}
		p.Opt.AlphaPrior = &em.Gamma{Shape: g.Shape, Rate: g.Rate}
		p.Opt.LearnAlpha = true
		p.Alpha = v
		set(g.Shape / g.Rate)
		return nil
	}
	if onlyTree && ref(1) {
		a, b, ok := constBetaPrior(v)
		if !ok {
			return emUnsupported("%s (beta of %s) has prior %s; EM needs a Beta prior with constant parameters", v.Name, m.Leaves.Name, v.Def.TypeName())
		}
		p.Opt.BetaPrior = &em.BetaDist{A: a, B: b}
		p.Opt.LearnBeta = true
		p.Beta = v
		set(a / (a + b))
		return nil
	}
	return emUnsupported("latent variable %s: EM learns only c under a Gamma prior (a(t) = c/(1-t)), a precision written 1/prec under a Gamma prior, "+
		"alpha under a Gamma prior and beta under a Beta prior, each read by the PYDT alone, and the noise precision of a Gaussian leaf likelihood under a Gamma prior "+
		"(one, or one per column); fix %s with --set, or use MCMC", v.Name, v.Name)
}

// constBetaPrior returns the shapes of v's Beta prior (a
// stdlib.BetaPrior) when its parameters are constants.
func constBetaPrior(v *graph.Var) (a, b float64, ok bool) {
	f := v.Def
	if f == nil {
		return 0, 0, false
	}
	prior, ok := f.Type.(stdlib.BetaPrior)
	if !ok {
		return 0, 0, false
	}
	p := make([]float64, len(f.Args))
	for i, x := range f.Args {
		if len(graph.Vars(x)) > 0 {
			return 0, 0, false
		}
		p[i] = x.Eval(&graph.Env{})
	}
	a, b = prior.BetaParams(p)
	return a, b, true
}

// Explain describes the EM schedule: one EM iteration, and the search.
func (p *EMPlan) Explain() string {
	var sb strings.Builder
	for i, s := range p.steps {
		fmt.Fprintf(&sb, "  %d. %s\n", i+1, s)
	}
	if p.Alpha != nil || p.Beta != nil {
		sb.WriteString("  before the search: the MCMC schedule (run --explain) for a few hundred sweeps on a random subsample of the rows; the PYDT is\n" +
			"     exchangeable and projective, so the subsample's posterior of alpha and beta, trees integrated out, is one of the full data's\n" +
			"     alpha and beta; fitting them to each tree instead makes near-stars cheap (docs/em.md, \"α and β from a subsample\")\n")
	}
	sb.WriteString("  initial trees: sequential attachment (em.SequentialTree, beam descent by local evidence) at four construction variances;\n" +
		"     average linkage and its cuts into flat clusters; with a variance per column learned, the linkage of the columns weighted by\n" +
		"     the variances EM fits and its cuts (with a noise precision per column and one diffusion variance, weighted by the fitted\n" +
		"     noise variances); the subsample MCMC run's summary, consensus and last trees (extended to all rows,\n" +
		"     em.ExtendTree, when the subsample is smaller). Above 2000 rows: one sequential tree at the variance best on 1000 rows, the linkage of those rows\n" +
		"     extended, the MCMC summary tree extended; with --time, a start after the first is skipped when less time is left than\n" +
		"     the first took (docs/em.md, \"Scale\")\n")
	sb.WriteString("  search: rounds of: detach a random subtree of a tree in the K-best list, score its re-attachment at every branch and branch point by log p(Y, s | T) at the current\n" +
		"     hyperparameters (belief propagation + tree prior), run EM on the three best, keep the K best trees by the bound\n" +
		"     (Gaussian evidence, up to 2000 rows: plus the Laplace correction for the times, i.e. ranked by log p(Y, alpha, beta | T))\n")
	sb.WriteString("  why: EM supports the model's parts by capability: conjugate Gamma priors give closed-form variational posteriors,\n" +
		"     Gaussian leaf evidence makes the E-step exact, a TiltedLeaf likelihood gets EP sites; alpha and beta have no conjugate form\n")
	return sb.String()
}

// newFit builds the bp.Model of tr with the plan's leaf evidence and an EM
// fit of it, its hyperparameters starting at start (nil: the plan's).
func (p *EMPlan) newFit(tr *pydt.Tree, start *emHyper, maxIter int) (*em.EM, *bp.Model, error) {
	p.fits++
	b := p.m.Trees[0]
	lik := bp.New(tr, b.D)
	opt := p.Opt
	opt.MaxIter = maxIter
	if start != nil {
		opt.C, opt.Variance, opt.Alpha, opt.Beta = start.C, start.Variance, start.Alpha, start.Beta
		if opt.Variances != nil {
			if len(start.Variances) != b.D {
				return nil, nil, fmt.Errorf("%d variances per dimension for %d columns", len(start.Variances), b.D)
			}
			opt.Variances = start.Variances
		}
	}
	if opt.Variances != nil {
		if err := lik.SetVariances(opt.Variances); err != nil {
			return nil, nil, err
		}
	} else if err := lik.SetVariance(opt.Variance); err != nil {
		return nil, nil, err
	}
	if p.Opt.Noise != nil {
		// The fit enters the leaf evidence itself, at E[noise].
		if start != nil && start.Noise != nil {
			if len(start.Noise) != len(p.Opt.Noise.Priors) {
				return nil, nil, fmt.Errorf("%d noise precisions for %d", len(start.Noise), len(p.Opt.Noise.Priors))
			}
			ln := *p.Opt.Noise
			ln.Starts = start.Noise
			opt.Noise = &ln
		}
	} else if p.tilted != nil {
		ep, err := em.NewEP(&leafSite{b: b, env: p.env, t: p.tilted}, p.env.Values[b.Data.ID], b.N, b.D)
		if err != nil {
			return nil, nil, err
		}
		opt.EP = ep
	} else {
		if err := b.observe(lik, p.env); err != nil {
			return nil, nil, err
		}
		if err := lik.Recompute(); err != nil {
			return nil, nil, err
		}
	}
	fit, err := em.New(lik, opt)
	return fit, lik, err
}

// initialData returns the rows SequentialTree attaches: the data, or for
// an EP likelihood with 0/1 data, the data as ±1.
func (p *EMPlan) initialData() []float64 {
	b := p.m.Trees[0]
	y := p.env.Values[b.Data.ID]
	x := make([]float64, len(y))
	for i, v := range y {
		x[i] = v
		if p.tilted != nil && !math.IsNaN(v) {
			x[i] = 2*v - 1
		}
	}
	return x
}
