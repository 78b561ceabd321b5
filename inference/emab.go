package inference

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
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
	// them discarded; zero unless Source is ABSubsample.
	Rows   int `json:"rows,omitempty"`
	Sweeps int `json:"sweeps,omitempty"`
	Burn   int `json:"burn_in,omitempty"`
	// Alpha and Beta are the values the search holds (the posterior means
	// of the kept sweeps for a learned parameter, the fixed value
	// otherwise); AlphaSD and BetaSD the posterior standard deviations of
	// the learned ones (0 for a fixed one).
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	AlphaSD float64 `json:"alpha_sd"`
	BetaSD  float64 `json:"beta_sd"`
}

// abStream is the random stream of the subsample's MCMC run.
const abStream = 0x616c7068

// estimateAB sets the α and β that the search holds: with α or β learned
// and cfg.ABSweeps ≥ 0, the posterior means of an MCMC run of
// cfg.ABSweeps sweeps (half burn-in) on cfg.ABRows random rows (all rows
// when there are no more), after which the plan treats them as fixed
// (em.Options.LearnAlpha, LearnBeta off). A parameter fixed in the model
// stays at its value.
func (p *EMPlan) estimateAB(ctx context.Context, cfg EMConfig) (*ABEstimate, error) {
	o := p.Opt
	if !o.LearnAlpha && !o.LearnBeta {
		return &ABEstimate{Source: ABFixed, Alpha: o.Alpha, Beta: o.Beta}, nil
	}
	if cfg.ABSweeps < 0 {
		return &ABEstimate{Source: ABPerTree, Alpha: o.Alpha, Beta: o.Beta}, nil
	}
	b := p.m.Trees[0]
	sub := p.m
	rows := b.N
	if b.N > cfg.ABRows {
		rng := rand.New(rand.NewPCG(cfg.Seed, abStream))
		pick := rng.Perm(b.N)[:cfg.ABRows]
		slices.Sort(pick)
		var err error
		if sub, err = p.subModel(pick); err != nil {
			return nil, fmt.Errorf("run --method em: alpha and beta from a subsample of %d rows: %w", cfg.ABRows, err)
		}
		rows = cfg.ABRows
	}
	sched, err := NewSchedule(sub)
	if err != nil {
		return nil, fmt.Errorf("run --method em: alpha and beta from a subsample: %w", err)
	}
	ch, err := NewChain(sub, sched, cfg.Seed, abStream)
	if err != nil {
		return nil, fmt.Errorf("run --method em: alpha and beta from a subsample: %w", err)
	}
	burn := cfg.ABSweeps / 2
	var as, bs []float64
	for it := range cfg.ABSweeps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("run --method em: %w while estimating alpha and beta (%v); run --resume %s starts the run again", ErrInterrupted, err, cfg.Out)
		}
		ch.tuning = it < burn
		if err := ch.Sweep(); err != nil {
			return nil, fmt.Errorf("run --method em: alpha and beta from a subsample, sweep %d: %w", it+1, err)
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
	}
	e := &ABEstimate{Source: ABSubsample, Rows: rows, Sweeps: cfg.ABSweeps, Burn: burn, Alpha: o.Alpha, Beta: o.Beta}
	if len(as) > 0 {
		e.Alpha, e.AlphaSD = meanSD(as)
	}
	if len(bs) > 0 {
		e.Beta, e.BetaSD = meanSD(bs)
	}
	if !(e.Alpha+2*e.Beta >= 0) || !(e.Beta >= 0 && e.Beta < 1) || math.IsInf(e.Alpha, 0) {
		return nil, fmt.Errorf("run --method em: alpha and beta from a subsample: the estimates alpha %v, beta %v are not valid PYDT parameters", e.Alpha, e.Beta)
	}
	return e, nil
}

// holdAB makes the plan hold α and β at e's values in every fit (when e
// comes from the subsample; otherwise it leaves the plan as it is).
func (p *EMPlan) holdAB(e *ABEstimate) {
	p.ab = e
	if e == nil || e.Source != ABSubsample {
		return
	}
	p.Opt.Alpha, p.Opt.Beta = e.Alpha, e.Beta
	p.Opt.LearnAlpha, p.Opt.LearnBeta = false, false
}

// meanSD returns the mean and sample standard deviation of x (0 for one
// value).
func meanSD(x []float64) (float64, float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	if len(x) < 2 {
		return m, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
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
