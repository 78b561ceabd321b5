package inference

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
)

// ErrImproper is wrapped by the error of CheckProper (and so of Run) for a
// model whose posterior cannot be normalised.
var ErrImproper = errors.New("the posterior is improper")

// Improper posteriors from duplicated rows.
//
// With the PYDT's matrix observed directly (no noise model), take a group of
// r identical rows, each with the same D observed entries. Let the r leaves
// form a subtree all of whose branch points (times t_b, u_b = 1 - t_b) go
// to t = 1 together, u_b = λ w_b with λ → 0 and the rest of the tree fixed.
// With a(t) = c/(1-t) each branch point b contributes a(t_b) e^{-A(t_b) J_b}
// = c u_b^{c J_b - 1} to the prior (J_b = H_{m_b - 1} - Σ_k H_{n_k - 1},
// pydt.NodeJ; H_n = Σ_{i=1..n} Γ(i-β)/Γ(i+1+α)), and the J_b of the
// subtree telescope to H_{r-1}. Given the tree the r identical points have
// r - 1 contrasts of variance ∝ σ²λ each, so the likelihood behaves as
// λ^{-(r-1)D/2}. With one time per branch point the volume element brings
// λ^{#branch points - 1} dλ, and the integral near λ = 0 behaves as
//
//	∫ λ^{E - 1} dλ,   E = c H_{r-1}(α, β) - (r-1) D/2,
//
// finite exactly when E > 0. For r = 2, H_1 = k = Γ(1-β)/Γ(2+α) and the
// pair's density in u is u^{c k - 1 - D/2}. Since H_n/n is the mean of
// terms decreasing in i, E/(r-1) is smallest for the largest group: the
// condition for the whole group implies it for every sub-group.
//
// The posterior is improper when the parameters (c, α, β) with E ≤ 0 have
// positive prior probability. Priors have positive density on their whole
// support, so that is when the infimum of E over the (closure of the)
// support is negative; E increases with c and decreases with α, and is
// convex in β (a sum of log-convex Γ(i-β)), so the infimum is at the lowest
// c, the highest α and one β found by golden-section search. A c whose prior
// reaches 0, or an α whose prior is unbounded above, always gives E < 0. At
// E = 0 exactly (a boundary case of clamped values) the integral diverges
// logarithmically when E = 0 is attained inside the support, and depends on
// the prior's density at the boundary otherwise; CheckProper refuses both.
//
// DivNeal(c0, c1, c2) behaves near t = 1 as c1/(1-t) when c2 = 0. With c2
// > 0 the factor e^{-c2 J/(1-t)} removes the singularity, but a c2 whose
// prior density behaves as c2^{a-1} near 0 (Gamma(a, ·), Beta(a, ·)) brings
// it back: the inner integral scales as c2^{E}, so the condition becomes
// a + E > 0 (with c = c1). DivInvSq is always proper here, and so is every
// Normal or Probit likelihood with a fixed noise level (the noise bounds
// the pair's density).
//
// A Normal noise model X ~ Normal(Z, sd) bounds the duplicates' density by
// (sd² + σ²λ)^{-(r-1)D/2}, so a latent sd whose prior density behaves as
// sd^{a_sd - 1} near 0 brings the singularity back: the integral over λ
// scales as sd^{2E}, and the condition becomes a_sd/2 + E > 0 (the terms
// add: a + a_sd/2 + E > 0 for DivNeal with c2 latent as well). An sd given
// as 1/sqrt(precision) with a Gamma prior on the precision makes sd -> 0
// exponentially unlikely: proper, and not analysed here.

// dupGroup is a group of identical rows.
type dupGroup struct {
	rows []int // 0-based, in order
	dims int   // observed entries per row
}

// duplicateGroups returns the groups of two or more rows of the observed
// matrix that are identical, missing entries included (a missing entry
// matches only a missing entry), with at least one observed entry.
func (m *Model) duplicateGroups(env *graph.Env) []dupGroup {
	x := env.Values[m.Data.ID]
	index := map[string]int{}
	var groups []dupGroup
	for i := range m.N {
		row := x[i*m.D : (i+1)*m.D]
		dims := 0
		for _, v := range row {
			if !math.IsNaN(v) {
				dims++
			}
		}
		if dims == 0 {
			continue
		}
		key := fmt.Sprint(row)
		if g, ok := index[key]; ok {
			groups[g].rows = append(groups[g].rows, i)
			continue
		}
		index[key] = len(groups)
		groups = append(groups, dupGroup{rows: []int{i}, dims: dims})
	}
	return slices.DeleteFunc(groups, func(g dupGroup) bool { return len(g.rows) < 2 })
}

// paramRange is the set of values a PYDT parameter takes under the prior.
type paramRange struct {
	lo, hi float64
	// shape is a with prior density ∝ (x - lo)^(a-1) near lo (1 unless
	// the prior is a stdlib.LowerShape with a constant shape parameter).
	shape float64
	// desc describes the parameter for messages.
	desc string
	free bool
}

// supportInterval returns the closure of a support as an interval.
func supportInterval(s stdlib.Support) (lo, hi float64) {
	switch s {
	case stdlib.Positive, stdlib.NonNegative, stdlib.Count:
		return 0, math.Inf(1)
	case stdlib.Unit, stdlib.UnitLeft, stdlib.Binary:
		return 0, 1
	}
	return math.Inf(-1), math.Inf(1)
}

// rangeOf returns the range of x under the prior: a point for an
// expression of fixed values (constants, data, clamped values), the support
// of a latent scalar's distribution for a plain reference to it, and false
// for anything else.
func (m *Model) rangeOf(x graph.Expr, env *graph.Env) (paramRange, bool) {
	if !readsLatent(x) {
		v, err := graph.Eval(x, env)
		if err != nil {
			return paramRange{}, false // reported when sampling
		}
		return paramRange{lo: v, hi: v, shape: 1, desc: fmt.Sprintf("%s = %g", x, v)}, true
	}
	v, ok := graph.AsRef(x)
	if !ok || !v.Scalar() || v.Def == nil {
		return paramRange{}, false
	}
	dist, ok := v.Def.Scalar()
	if !ok {
		return paramRange{}, false
	}
	var err error
	f := v.Def
	r := paramRange{shape: 1, free: true, desc: fmt.Sprintf("%s ~ %s", v.Name, strings.TrimPrefix(f.String(), v.Name+" ~ "))}
	r.lo, r.hi = supportInterval(dist.Support())
	if ls, ok := dist.(stdlib.LowerShape); ok {
		if k := ls.LowerShapeParam(); k < len(f.Args) && len(graph.Vars(f.Args[k])) == 0 {
			if r.shape, err = graph.Eval(f.Args[k], env); err != nil {
				return paramRange{}, false
			}
		}
	}
	return r, true
}

// readsLatent reports whether x reads a latent variable, directly or
// through deterministic variables.
func readsLatent(x graph.Expr) bool {
	for _, v := range graph.Vars(x) {
		if v.Role == graph.Latent || v.Role == graph.Deterministic && v.Expr != nil && readsLatent(v.Expr) {
			return true
		}
	}
	return false
}

// harmonicH returns H_n(α, β) = Σ_{i=1..n} Γ(i-β)/Γ(i+1+α), 0 for α = +Inf.
func harmonicH(n int, alpha, beta float64) float64 {
	if math.IsInf(alpha, 1) {
		return 0
	}
	var h float64
	for i := 1; i <= n; i++ {
		a, _ := math.Lgamma(float64(i) - beta)
		b, _ := math.Lgamma(float64(i+1) + alpha)
		h += math.Exp(a - b)
	}
	return h
}

// minH returns the minimum over β in [lo, hi] of H_n(α, β), convex in β,
// and where it is attained.
func minH(n int, alpha, lo, hi float64) (h, beta float64) {
	hi = math.Min(hi, math.Nextafter(1, 0))
	f := func(b float64) float64 { return harmonicH(n, alpha, b) }
	const g = 0.6180339887498949
	a, b := lo, hi
	for range 100 {
		c, d := b-g*(b-a), a+g*(b-a)
		if f(c) <= f(d) {
			b = d
		} else {
			a = c
		}
	}
	beta = (a + b) / 2
	for _, e := range []float64{lo, hi} { // the minimum may sit at an end
		if f(e) < f(beta) {
			beta = e
		}
	}
	return f(beta), beta
}

// CheckProper refuses, before sampling, a model whose posterior is
// improper because of exactly duplicated rows observed without noise (see
// the derivation above): it returns an error wrapping ErrImproper that says
// why and suggests a Normal noise model, or nil. It decides only what it
// can: parameters given by expressions of latent variables other than a
// plain reference are not analysed (nil is returned).
//
// A model with several PYDTs has each checked in turn.
func (m *Model) CheckProper(env *graph.Env) error {
	// The deterministic variables of fixed values, which rangeOf reads.
	if err := m.Refresh(env); err != nil {
		return err
	}
	for k := range m.Trees {
		if err := m.treeView(k).checkProper(env); err != nil {
			return err
		}
	}
	return nil
}

// treeView returns m seen as a model of its k-th PYDT alone (Trees, Tree,
// Leaves, N, D, Data and Labels those of the k-th), for the checks written
// for one tree; m itself for a model with one PYDT.
func (m *Model) treeView(k int) *Model {
	if !m.Several() {
		return m
	}
	v := *m
	b := m.Trees[k]
	v.Trees = []*TreeBinding{b}
	v.Tree, v.Leaves, v.N, v.D, v.Data, v.Labels = b.Factor, b.Leaves, b.N, b.D, b.Data, b.Labels()
	return &v
}

func (m *Model) checkProper(env *graph.Env) error {
	noise := paramRange{shape: 0}
	b := m.Trees[0]
	switch nl, _ := b.gaussian.(stdlib.NoiseLeaf); {
	case b.Exact():
	case nl != nil:
		r, ok := m.rangeOf(b.Leaf.Args[nl.NoiseSD()], env)
		if !ok || !r.free || r.lo > 0 {
			return nil // a noise sd bounded away from 0 bounds the duplicates' density
		}
		noise = r
	default:
		return nil
	}
	groups := m.duplicateGroups(env)
	if len(groups) == 0 {
		return nil
	}
	div := m.Tree.Divergence
	// The function's tail, a(t) ≈ c/(1-t) + c2/(1-t)² near t = 1, read from
	// its declared capability (stdlib.DivergenceTail), never its name.
	tail := div.Type.Tail
	if tail == nil || tail.Inv < 0 {
		return nil // no 1/(1-t) term declared: a 1/(1-t)² alone is proper
	}
	cArg := div.Args[tail.Inv]
	cName := div.Type.Params[tail.Inv].Name
	c2 := paramRange{shape: 0}
	if tail.InvSq >= 0 {
		r, ok := m.rangeOf(div.Args[tail.InvSq], env)
		if !ok {
			return nil
		}
		if r.lo > 0 {
			return nil // c2 > 0 throughout: e^{-c2 J/(1-t)} keeps t from 1
		}
		if r.free {
			c2 = r
		}
	}
	c, okc := m.rangeOf(cArg, env)
	alpha, oka := m.rangeOf(m.Tree.Args[graph.PYDTAlpha], env)
	beta, okb := m.rangeOf(m.Tree.Args[graph.PYDTBeta], env)
	if !okc || !oka || !okb {
		return nil
	}
	beta.lo = math.Max(beta.lo, 0)
	if !alpha.free && alpha.lo < 0 {
		beta.lo = math.Max(beta.lo, -alpha.lo/2) // alpha >= -2 beta
	}
	for _, g := range groups {
		r, d := len(g.rows), float64(g.dims)
		need := float64(r-1) * d / 2
		h, b := minH(r-1, alpha.hi, beta.lo, beta.hi)
		e := c2.shape + noise.shape/2 + c.lo*h - need
		if e > 1e-12*need {
			continue
		}
		return m.improperError(g, c, alpha, beta, c2, noise, h, b, need, cName)
	}
	return nil
}

// improperError explains the refusal for the group g.
func (m *Model) improperError(g dupGroup, c, alpha, beta, c2, noise paramRange, h, b, need float64, cName string) error {
	var sb strings.Builder
	x := m.Data.Name
	r := len(g.rows)
	rows := make([]string, r)
	for i, k := range g.rows {
		rows[i] = fmt.Sprint(k + 1)
	}
	plusA := ""
	if c2.free {
		plusA = " + a"
	}
	if noise.free {
		plusA += " + a_sd/2"
	}
	how := fmt.Sprintf("%s is observed without noise", x)
	if noise.free {
		how = fmt.Sprintf("the noise sd of %s (%s) can approach 0, where %s is observed almost without noise", x, noise.desc, x)
	}
	noiseNote := ""
	if noise.free {
		noiseNote = " for 1-t above sd²/σ² (bounded below it)"
	}
	if r == 2 {
		fmt.Fprintf(&sb, "rows %s and %s of %s are identical and %s: as their divergence time t goes to 1 "+
			"the posterior density behaves as (1-t)^(%s·k - 1 - D/2)%s with k = Γ(1-β)/Γ(2+α) and D = %d observed values per row, "+
			"which cannot be integrated when %s·k%s <= D/2 = %g", rows[0], rows[1], x, how, cName, noiseNote, g.dims, cName, plusA, need)
	} else {
		fmt.Fprintf(&sb, "rows %s of %s are identical and %s: as their %d divergence times go to t = 1 together "+
			"the posterior density behaves as λ^(%s·H - 1 - (r-1)·D/2) in their scale λ, with H = Σ_{i<r} Γ(i-β)/Γ(i+1+α), r = %d rows and D = %d observed values per row, "+
			"which cannot be integrated when %s·H%s <= (r-1)·D/2 = %g", strings.Join(rows, ", "), x, how, r-1, cName, r, g.dims, cName, plusA, need)
	}
	if c2.free {
		fmt.Fprintf(&sb, ", where a = %g: %s has density ∝ c2^(a-1) near 0, and as c2 -> 0 the factor e^(-c2·k/(1-t)) no longer keeps t from 1",
			c2.shape, c2.desc)
	}
	if noise.free {
		fmt.Fprintf(&sb, ", where a_sd = %g: %s has density ∝ sd^(a_sd-1) near 0, and the duplicates' density grows as (sd² + σ²(1-t))^(-D/2)",
			noise.shape, noise.desc)
	}
	advice := fmt.Sprintf("Use a Normal noise model (%s ~ Normal(Z, sd) with param Z : real[N, D] and Z ~ PYDT(...))", x)
	if noise.free {
		advice = fmt.Sprintf("Give the noise a prior that keeps sd from 0: a Gamma prior on its precision (%s ~ Normal(Z, 1 / sqrt(noise)) with noise ~ Gamma(1, 1), as examples/gaussian-noise.pydt), or clamp sd with --set", x)
	}
	var why []string
	if c.free && c.lo <= 0 {
		why = append(why, fmt.Sprintf("%s gives %s values arbitrarily close to 0", c.desc, cName))
	}
	if alpha.free && math.IsInf(alpha.hi, 1) {
		why = append(why, fmt.Sprintf("%s gives arbitrarily large alpha, where k -> 0", alpha.desc))
	}
	if len(why) == 0 {
		at := ""
		if beta.free {
			at = fmt.Sprintf(" (at beta = %.4g)", b)
		}
		lhs := cName + "·k"
		if r > 2 {
			lhs = cName + "·H"
		}
		why = append(why, fmt.Sprintf("with %s, %s and %s, %s gets down to %.4g%s",
			c.desc, alpha.desc, beta.desc, lhs, c.lo*h, at))
	}
	fmt.Fprintf(&sb, "; %s. The posterior is therefore improper and a sampler would drift towards t = 1. "+
		"%s, or remove the duplicated rows",
		strings.Join(why, "; "), advice)
	return fmt.Errorf("%w: %s", ErrImproper, sb.String())
}
