package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
)

// This file estimates the PYDT's α and β for the EM search with the trees
// integrated out: a short MCMC run of the same engine (NewSchedule,
// NewChain) on a random subsample of the rows. The PYDT is exchangeable and
// its generative process is sequential, so the tree of any m of its rows
// is a PYDT of m rows with the same α, β, c and σ² (docs/em.md, "α and β
// from a subsample"): the subsample's posterior is a posterior of the same
// α, β, with every tree integrated out. The search then holds α and β at
// the posterior means, where fitting them to each tree made stars cheap.

// Defaults of EMConfig.ABRows and EMConfig.ABSweeps.
const (
	defaultABRows   = 300
	defaultABSweeps = 400
)

// AlphaBetaSource says where the EM search's α and β came from
// (ABEstimate.Source).
const (
	// ABSubsample: posterior means of a short MCMC run on a subsample of
	// the rows, held fixed in every tree's fit.
	ABSubsample = "subsample MCMC"
	// ABPerTree: fitted to each tree by golden-section search (EMConfig
	// ABSweeps negative, and runs from before the subsample estimate).
	ABPerTree = "per tree"
	// ABFixed: both fixed in the model or by --set; nothing is estimated.
	ABFixed = "fixed"
)

// ABEstimate is how the EM search set α and β (summary.json's
// "alpha_beta", and the run's checkpoint).
type ABEstimate struct {
	// Source is ABSubsample, ABPerTree or ABFixed.
	Source string `json:"source"`
	// Rows is the size of the subsample (all rows when there are no more
	// than EMConfig.ABRows), Sweeps the MCMC sweeps and Burn the first of
	// them discarded; zero when no MCMC run was made (ABPerTree, and
	// ABFixed with EMConfig.ABSweeps negative). With α and β fixed the run
	// is made for its trees, the search's starting trees.
	Rows   int `json:"rows,omitempty"`
	Sweeps int `json:"sweeps,omitempty"`
	Burn   int `json:"burn_in,omitempty"`
	// PlannedSweeps, when set, is the run's --ab-sweeps that --time cut to
	// Sweeps (its share of the time: EMConfig.Time).
	PlannedSweeps int `json:"planned_sweeps,omitempty"`
	// Alpha and Beta are the values the search holds (the posterior means
	// of the kept sweeps for a learned parameter, the fixed value
	// otherwise); AlphaSD and BetaSD the posterior standard deviations of
	// the learned ones (0 for a fixed one).
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	AlphaSD float64 `json:"alpha_sd"`
	BetaSD  float64 `json:"beta_sd"`
	// Variance, when positive, is the diffusion variance σ² that the
	// search holds in every fit: for EP data with a learned precision,
	// 1 / the posterior mean of the precision 1/σ² in the same MCMC run
	// (Precision, with its standard deviation PrecisionSD). EP's value
	// drifts towards larger σ² over hundreds of EM iterations, so trees
	// fitted for 50 iterations were compared at different σ² (docs/em.md,
	// "Why the animals purity fell"). 0: σ² has its variational update.
	Variance    float64 `json:"variance,omitempty"`
	Precision   float64 `json:"precision,omitempty"`
	PrecisionSD float64 `json:"precision_sd,omitempty"`
	// Variances, when set, are the diffusion variances per dimension that
	// the search holds in every fit, likewise for EP data with learned
	// precisions per dimension (1 / prec[d]): 1 / the posterior means
	// Precisions of prec[d], with their standard deviations PrecisionSDs.
	Variances    []float64 `json:"variances,omitempty"`
	Precisions   []float64 `json:"precisions,omitempty"`
	PrecisionSDs []float64 `json:"precision_sds,omitempty"`
}

// With EMConfig.Time set, the subsample's MCMC run takes at most about
// Time/abTimeShare, and never fewer than abMinSweeps sweeps (half of them
// burn-in; at 20, 10 burn-in sweeps left α at 4.1 where 400 give 0.70):
// on animals with a noise precision per column (D = 102) its
// 400 sweeps took 65 s of CPU, more than all of --time 60s.
const (
	abTimeShare = 4
	abMinSweeps = 50
)

// abBudget returns the run's sweeps and burn-in after done sweeps that took
// elapsed, for a budget: unchanged while the run is on course to end
// within it; otherwise the sweeps that fit in it at the rate so far (at
// least abMinSweeps, and never fewer than done), half of them burn-in
// while the burn-in is under way; after the burn-in it ends the run once
// elapsed passes the budget with at least abMinSweeps/2 kept.
func abBudget(sweeps, burn, done int, elapsed, budget time.Duration) (int, int) {
	if done < burn {
		per := elapsed / time.Duration(done)
		if per*time.Duration(sweeps) <= budget {
			return sweeps, burn
		}
		fit := max(abMinSweeps, int(budget/per))
		if fit >= sweeps {
			return sweeps, burn
		}
		// The burn-in is at least the sweeps done so far (which tuned
		// their slice widths as burn-in).
		return max(fit, 2*done), max(fit/2, done)
	}
	if elapsed > budget && done-burn >= abMinSweeps/2 {
		return done, burn
	}
	return sweeps, burn
}

// The subsample MCMC run draws from two independent streams of the seed:
// one chooses the rows, the other drives the chain, so that the chain's
// draws are not the numbers that chose its rows, and changing how the rows
// are chosen (--ab-rows) does not shift the chain's stream.
const (
	abStream     = 0x616c7068 // the chain
	abPickStream = 0x7069636b // the choice of rows
)

// abSample is what the subsample's MCMC run gives besides α and β: its
// kept trees, the search's starting trees from the posterior (docs/em.md,
// "Starting trees from the subsample's MCMC run").
type abSample struct {
	// trees are the kept sweeps' trees, leaf j standing for row rows[j]
	// of the data; rows is ascending (0, …, N−1 when the subsample is the
	// data).
	trees []*pydt.Tree
	rows  []int
	// c and variance are the posterior means of c and of the diffusion
	// variance σ² (with a variance per dimension, of their average over
	// the dimensions, and variances those per dimension; nil otherwise),
	// prec that of the precision 1/σ² (the values at which the trees are
	// extended to all rows).
	c, variance, prec float64
	variances         []float64
	// precSD is the posterior standard deviation of 1/σ².
	precSD float64
}

// abPick returns the rows of the subsample: k of the n rows chosen at
// random (ascending) from the seed's abPickStream, or all rows when
// there are no more than k.
func abPick(seed uint64, n, k int) []int {
	if n <= k {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rng := rand.New(rand.NewPCG(seed, abPickStream))
	pick := rng.Perm(n)[:k]
	slices.Sort(pick)
	return pick
}

// estimateAB sets the α and β that the search holds: with α or β learned
// and cfg.ABSweeps ≥ 0, the posterior means of an MCMC run of
// cfg.ABSweeps sweeps (half burn-in) on cfg.ABRows random rows (all rows
// when there are no more), after which the plan treats them as fixed
// (em.Options.LearnAlpha, LearnBeta off). A parameter fixed in the model
// stays at its value. The same run is made when both are fixed (for its
// trees), unless cfg.ABSweeps is negative; its kept trees are returned
// (nil without the run).
func (p *EMPlan) estimateAB(ctx context.Context, cfg EMConfig) (*ABEstimate, *abSample, error) {
	o := p.Opt
	learned := o.LearnAlpha || o.LearnBeta
	if cfg.ABSweeps < 0 {
		if !learned {
			return &ABEstimate{Source: ABFixed, Alpha: o.Alpha, Beta: o.Beta}, nil, nil
		}
		return &ABEstimate{Source: ABPerTree, Alpha: o.Alpha, Beta: o.Beta}, nil, nil
	}
	b := p.m.Trees[0]
	sub := p.m
	rows := abPick(cfg.Seed, b.N, cfg.ABRows)
	if len(rows) < b.N {
		var err error
		if sub, err = p.subModel(rows); err != nil {
			return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample of %d rows: %w", cfg.ABRows, err)
		}
	}
	sched, err := NewSchedule(sub)
	if err != nil {
		return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample: %w", err)
	}
	ch, err := NewChain(sub, sched, cfg.Seed, abStream)
	if err != nil {
		return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample: %w", err)
	}
	sweeps := cfg.ABSweeps
	burn := sweeps / 2
	var as, bs, cs, vs, ps []float64
	var pds [][]float64 // per dimension: the kept draws of prec[d] (PrecDims)
	smp := &abSample{rows: rows}
	t0 := time.Now()
	for it := 0; it < sweeps; it++ {
		if cfg.Time > 0 && it > 0 {
			sweeps, burn = abBudget(sweeps, burn, it, time.Since(t0), cfg.Time/abTimeShare)
			if it >= sweeps {
				break
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("run --method em: %w while estimating alpha and beta (%v); run --resume %s starts the run again", ErrInterrupted, err, cfg.Out)
		}
		ch.tuning = it < burn
		if err := ch.Sweep(); err != nil {
			return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample, sweep %d: %w", it+1, err)
		}
		if it < burn {
			continue
		}
		if p.Alpha != nil {
			as = append(as, ch.Values(sub.G.ByName[p.Alpha.Name])[0])
		}
		if p.Beta != nil {
			bs = append(bs, ch.Values(sub.G.ByName[p.Beta.Name])[0])
		}
		tp, err := sub.TreeParams(ch.st.Env)
		if err != nil {
			return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample, sweep %d: %w", it+1, err)
		}
		if div, ok := tp.Div.(pydt.DivInv); ok {
			cs = append(cs, div.C)
		}
		v := smp.addVariances(tp)
		vs = append(vs, v)
		ps = append(ps, 1/v)
		if p.PrecDims != nil {
			dv := tp.DimVariances()
			if pds == nil {
				pds = make([][]float64, len(dv))
			}
			for k, x := range dv {
				pds[k] = append(pds[k], 1/x)
			}
		}
		smp.trees = append(smp.trees, ch.Tree(0).Clone())
	}
	e := &ABEstimate{Source: ABSubsample, Rows: len(rows), Sweeps: sweeps, Burn: burn, Alpha: o.Alpha, Beta: o.Beta}
	if sweeps < cfg.ABSweeps {
		e.PlannedSweeps = cfg.ABSweeps
	}
	if !learned {
		e.Source = ABFixed
	}
	if len(as) > 0 {
		e.Alpha, e.AlphaSD = meanSD(as)
	}
	if len(bs) > 0 {
		e.Beta, e.BetaSD = meanSD(bs)
	}
	if !(e.Alpha+2*e.Beta >= 0) || !(e.Beta >= 0 && e.Beta < 1) || math.IsInf(e.Alpha, 0) {
		return nil, nil, fmt.Errorf("run --method em: alpha and beta from a subsample: the estimates alpha %v, beta %v are not valid PYDT parameters", e.Alpha, e.Beta)
	}
	smp.c, smp.variance = o.C, o.Variance
	if len(cs) > 0 {
		smp.c, _ = meanSD(cs)
	}
	if len(vs) > 0 {
		smp.variance, _ = meanSD(vs)
		smp.prec, smp.precSD = meanSD(ps)
		for k := range smp.variances {
			smp.variances[k] /= float64(len(vs))
		}
	}
	if p.Opt.Variances == nil {
		smp.variances = nil
	}
	if !(smp.c > 0) || !(smp.variance > 0) || math.IsInf(smp.c, 0) || math.IsInf(smp.variance, 0) {
		return nil, nil, fmt.Errorf("run --method em: the subsample's MCMC run: posterior means c %v, variance %v are not valid", smp.c, smp.variance)
	}
	if p.tilted != nil && p.Prec != nil {
		if !(smp.prec > 0) || math.IsInf(smp.prec, 0) {
			return nil, nil, fmt.Errorf("run --method em: the subsample's MCMC run: posterior mean of %s %v is not valid", p.Prec.Name, smp.prec)
		}
		e.Variance, e.Precision, e.PrecisionSD = 1/smp.prec, smp.prec, smp.precSD
	}
	if p.tilted != nil && p.PrecDims != nil {
		if len(pds) != p.m.D {
			return nil, nil, fmt.Errorf("run --method em: the subsample's MCMC run kept draws of %s for %d dimensions, not %d", p.PrecDims.Name, len(pds), p.m.D)
		}
		e.Variances, e.Precisions, e.PrecisionSDs = make([]float64, len(pds)), make([]float64, len(pds)), make([]float64, len(pds))
		for k, x := range pds {
			m, sd := meanSD(x)
			if !(m > 0) || math.IsInf(m, 0) {
				return nil, nil, fmt.Errorf("run --method em: the subsample's MCMC run: posterior mean of %s[%d] %v is not valid", p.PrecDims.Name, k+1, m)
			}
			e.Variances[k], e.Precisions[k], e.PrecisionSDs[k] = 1/m, m, sd
		}
	}
	return e, smp, nil
}

// holdAB makes the plan hold α and β at e's values in every fit (when e
// comes from the subsample; otherwise it leaves them as they are), and
// the diffusion variance at e.Variance when that is set.
func (p *EMPlan) holdAB(e *ABEstimate) {
	p.ab = e
	if e == nil {
		return
	}
	if e.Variance > 0 {
		p.Opt.Variance, p.Opt.PrecPrior = e.Variance, nil
	}
	if e.Variances != nil {
		p.Opt.Variances, p.Opt.PrecPriors = slices.Clone(e.Variances), nil
	}
	if e.Source != ABSubsample {
		return
	}
	p.Opt.Alpha, p.Opt.Beta = e.Alpha, e.Beta
	p.Opt.LearnAlpha, p.Opt.LearnBeta = false, false
}

// addVariances adds the diffusion variances per dimension of a kept
// sweep's parameters tp to smp.variances (allocated at the first sweep)
// and returns their average over the dimensions. With one shared variance
// it reads tp.Variance for every dimension: no per-sweep copy of the D
// values (sim.Params.DimVariances allocates one).
func (smp *abSample) addVariances(tp sim.Params) float64 {
	d := tp.Dims
	if tp.Variances != nil {
		d = len(tp.Variances)
	}
	if smp.variances == nil {
		smp.variances = make([]float64, d)
	}
	var v float64
	for k := range d {
		x := tp.Variance
		if tp.Variances != nil {
			x = tp.Variances[k]
		}
		smp.variances[k] += x
		v += x / float64(d)
	}
	return v
}

// meanSD returns the mean and sample standard deviation of x (0 for one
// value), by diagnostics.MeanVar.
func meanSD(x []float64) (float64, float64) {
	m, v := diagnostics.MeanVar(x)
	if len(x) < 2 {
		return m, 0
	}
	return m, math.Sqrt(v)
}

// subModel binds the plan's model again with the data restricted to the
// given rows (ascending): the same program, the clamped values kept, the
// data as the model holds them (standardized if it is).
func (p *EMPlan) subModel(rows []int) (*Model, error) {
	m := p.m
	b := m.Trees[0]
	if b.index != nil {
		return nil, errors.New("the data reach the leaves through an index")
	}
	prog, err := graph.CompileProgram(m.G.File, graph.Options{NeedPYDT: true})
	if err != nil {
		return nil, err
	}
	set := map[string]float64{}
	data := map[string]*dataset.Matrix{}
	for _, v := range m.G.Vars {
		switch {
		case v.Role == graph.Clamped && v.Scalar():
			set[v.Name] = v.Value[0]
		case v.Role == graph.Observed && v != b.Data:
			return nil, fmt.Errorf("the model observes %s besides %s", v.Name, b.Data.Name)
		}
	}
	full := b.Data.Data
	d := b.D
	if full == nil || full.Rows != b.N || full.Cols != d || len(b.Data.Value) != b.N*d {
		return nil, fmt.Errorf("%s is not an %d×%d table of the leaves' rows", b.Data.Name, b.N, d)
	}
	x := &dataset.Matrix{Rows: len(rows), Cols: d, Data: make([]float64, 0, len(rows)*d), ColNames: full.ColNames, Source: full.Source}
	for _, i := range rows {
		x.Data = append(x.Data, b.Data.Value[i*d:(i+1)*d]...)
		if full.RowLabels != nil {
			x.RowLabels = append(x.RowLabels, full.RowLabels[i])
		}
	}
	data[b.Data.Name] = x
	g, err := prog.Bind(graph.Bindings{Data: data, Set: set})
	if err != nil {
		return nil, err
	}
	return NewModel(g)
}
