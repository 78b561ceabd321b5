// Package predict computes the predictive distribution of a new data point
// under a Pitman-Yor diffusion tree (paper, Section 6.3): given one tree with
// its divergence times, the hyperparameters and the data, the density of an
// (N+1)-th point is a weighted mixture of Gaussians with diagonal
// covariance; averaged over posterior trees (Ensemble) it is the posterior
// predictive density.
//
// The mixture follows the generative process. The new point walks down
// from the origin. On the edge [a b] above a node b through which m earlier
// points passed it diverges at time t in (t_a, t_b) with hazard
// a(t) Γ(m−β)/Γ(m+1+α); reaching a branch point b with K children it
// follows child k with probability (n_k−β)/(m+α) or diverges at b with
// probability (α+βK)/(m+α). Having diverged at time t from a location y on
// the path, it diffuses to t = 1: x* ~ N(y, σ²(1−t) I). The location y at
// time t on the edge [a b] given the data is Gaussian: given x_a it is the
// product of the Brownian step N(x_a, σ²(t−t_a)) and the upward message of
// b's subtree carried up the rest of the edge, and x_a has its posterior
// marginal (package bp). The divergence time on an edge is integrated by
// Gauss–Legendre quadrature in the coordinate w in (0, 1) of its
// conditional distribution function: the cumulative hazard from t_a is
// exponential with rate Γ(m−β)/Γ(m+1+α), truncated at the edge's end, so
// w = (1 − exp(−r u)) / (1 − exp(−r ΔA)) with u = A(t) − A(t_a). The
// paper samples three times per edge instead; quadrature gives a
// deterministic answer whose error falls quickly with the number of nodes.
//
// A Normal noise model Y ~ Normal(Z, sd) adds sd² to every component's
// variance; a Probit model maps each dimension through
// P(y = 1) = Φ(μ/√(1+v)) given the component (Mixture.LogProbBinary).
package predict

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// DefaultNodes is the number of Gauss–Legendre nodes per edge when
// Options.Nodes is zero.
const DefaultNodes = 8

// Params are the PYDT's parameters for one tree.
type Params struct {
	// Alpha and Beta are the Pitman-Yor concentration and discount.
	Alpha, Beta float64
	// Div is the divergence function a(t).
	Div pydt.Divergence
	// Variance is the diffusion variance σ² shared by every dimension,
	// unless Variances is set.
	Variance float64
	// Variances, when not nil, holds the diffusion variance σ²_d of each
	// dimension; Variance is then ignored.
	Variances []float64
	// Noise, when not nil, holds for each dimension the variance added to
	// the new point's leaf location to give the observed value (sd² of a
	// Normal noise model; 1 for a Probit model's auxiliary variable is
	// not added here, see LogProbBinary).
	Noise []float64
}

// variances returns the diffusion variance of each of d dimensions, or an
// error naming an invalid one.
func (p Params) variances(d int) ([]float64, error) {
	if p.Variances == nil {
		if !(p.Variance > 0) || math.IsInf(p.Variance, 1) {
			return nil, fmt.Errorf("predict: diffusion variance σ² = %v must be positive and finite", p.Variance)
		}
		s2 := make([]float64, d)
		for k := range s2 {
			s2[k] = p.Variance
		}
		return s2, nil
	}
	if len(p.Variances) != d {
		return nil, fmt.Errorf("predict: %d diffusion variances for %d dimensions", len(p.Variances), d)
	}
	for k, v := range p.Variances {
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("predict: diffusion variance σ² = %v of dimension %d must be positive and finite", v, k+1)
		}
	}
	return p.Variances, nil
}

// Options tune the computation.
type Options struct {
	// Nodes is the number of Gauss–Legendre nodes per edge; zero means
	// DefaultNodes.
	Nodes int
}

// Mixture is a weighted mixture of Gaussians with diagonal covariance in D
// dimensions: component j has weight exp(LogW[j]) and, in dimension d,
// mean Mean[j*D+d] and variance Var[j*D+d]. The weights sum to one.
type Mixture struct {
	D    int
	LogW []float64
	Mean []float64
	Var  []float64
	// Node and At say where component j's new point joins the tree: it
	// diverges from the path to Node[j] at time At[j], on the edge above
	// Node[j] when At[j] is before Node[j]'s time, or at the branch point
	// Node[j] itself when it is that time.
	Node []pydt.NodeID
	At   []pydt.Time
}

// Len returns the number of components.
func (mx *Mixture) Len() int { return len(mx.LogW) }

func (mx *Mixture) add(logw float64, mean, v []float64, node pydt.NodeID, at pydt.Time) {
	if math.IsInf(logw, -1) || math.IsNaN(logw) {
		return
	}
	mx.Node = append(mx.Node, node)
	mx.At = append(mx.At, at)
	mx.LogW = append(mx.LogW, logw)
	mx.Mean = append(mx.Mean, mean...)
	mx.Var = append(mx.Var, v...)
}

// Tree returns the predictive distribution of a new point's observed value
// given the tree of lik, whose evidence (the data) lik holds. lik's
// variances are set to p.Variances, or all to p.Variance. Every divergence function of package pydt
// has A(1) = ∞, so a new point always diverges before t = 1; for one with
// A(1) < ∞ the point may also reach a leaf and share its location.
func Tree(lik *bp.Model, p Params, opt Options) (*Mixture, error) {
	if opt.Nodes == 0 {
		opt.Nodes = DefaultNodes
	}
	if opt.Nodes < 1 {
		return nil, fmt.Errorf("predict: need at least one quadrature node, got %d", opt.Nodes)
	}
	if err := pydt.CheckPrior(p.Alpha, p.Beta, p.Div); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	d := lik.Dims()
	s2, err := p.variances(d)
	if err != nil {
		return nil, err
	}
	if p.Noise != nil && len(p.Noise) != d {
		return nil, fmt.Errorf("predict: %d noise variances for %d dimensions", len(p.Noise), d)
	}
	for k, v := range p.Noise {
		if !(v >= 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("predict: noise variance %v of dimension %d must be non-negative and finite", v, k+1)
		}
	}
	if err := lik.SetVariances(s2); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	tr := lik.Tree()
	if tr.Root() == pydt.NoNode {
		return nil, errors.New("predict: the tree is empty")
	}
	w := &walker{lik: lik, tr: tr, p: p, d: d, s2: s2,
		mean: make([]float64, tr.Cap()*d), vr: make([]float64, tr.Cap()*d),
		mx: &Mixture{D: d}, cm: make([]float64, d), cv: make([]float64, d),
		ym: make([]float64, d), yv: make([]float64, d), zero: make([]float64, d)}
	if err := lik.Marginals(w.mean, w.vr); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	w.gx = make([]float64, opt.Nodes)
	w.gw = make([]float64, opt.Nodes)
	quad.Legendre{}.FixedLocations(w.gx, w.gw, 0, 1)
	if err := w.edge(tr.Root(), 0); err != nil {
		return nil, err
	}
	return w.mx, nil
}

type walker struct {
	lik      *bp.Model
	tr       *pydt.Tree
	p        Params
	d        int
	s2       []float64 // diffusion variance per dimension
	mean, vr []float64 // posterior marginals, v*D+d
	mx       *Mixture
	gx, gw   []float64
	cm, cv   []float64 // component scratch
	ym, yv   []float64
	zero     []float64
}

// logRate returns log Γ(m−β) − log Γ(m+1+α).
func (w *walker) logRate(m int) float64 {
	a, _ := math.Lgamma(float64(m) - w.p.Beta)
	b, _ := math.Lgamma(float64(m) + 1 + w.p.Alpha)
	return a - b
}

// parent returns the posterior marginal of the parent of b (the origin for
// the root) and its time.
func (w *walker) parent(b pydt.NodeID) (mean, vr []float64, t pydt.Time) {
	a := w.tr.Parent(b)
	if a == pydt.NoNode {
		return w.zero, w.zero, pydt.Origin
	}
	i := int(a) * w.d
	return w.mean[i : i+w.d], w.vr[i : i+w.d], w.tr.Time(a)
}

// emit adds the component of divergence at time t, on the path to node b,
// from location N(ym, yv).
func (w *walker) emit(logw float64, t pydt.Time, b pydt.NodeID) {
	l := t.OneMinus()
	for k := range w.d {
		w.cm[k] = w.ym[k]
		w.cv[k] = w.yv[k] + w.s2[k]*l
		if w.p.Noise != nil {
			w.cv[k] += w.p.Noise[k]
		}
	}
	w.mx.add(logw, w.cm, w.cv, b, t)
}

// edge adds the components of the new point's paths through the edge
// above b, reached with log probability logP.
func (w *walker) edge(b pydt.NodeID, logP float64) error {
	tr := w.tr
	pm, pv, ta := w.parent(b)
	tb := tr.Time(b)
	m := tr.Count(b)
	lr := w.logRate(m)
	r := math.Exp(lr)
	Aa := w.p.Div.Cumulative(ta)
	dA := w.p.Div.Cumulative(tb) - Aa
	if math.IsNaN(dA) || dA < 0 {
		return fmt.Errorf("predict: edge above node %d: cumulative hazard difference %v", b, dA)
	}
	// Probability of diverging on the edge, 1 − exp(−r ΔA), and of not.
	pDiv := -math.Expm1(-r * dA)
	logStay := -r * dA
	if pDiv > 0 {
		for q, x := range w.gx {
			// u = A(t) − A(t_a) at CDF coordinate x.
			u := -math.Log1p(-x*pDiv) / r
			t := w.p.Div.InverseCumulative(Aa + u)
			if !ta.Before(t) || !t.Before(tb) {
				continue // rounding put the node on an end: weight negligible
			}
			w.onEdge(b, pm, pv, ta, tb, t)
			w.emit(logP+math.Log(pDiv)+math.Log(w.gw[q]), t, b)
		}
	}
	if math.IsInf(logStay, -1) {
		return nil
	}
	logP += logStay
	i := int(b) * w.d
	if tr.IsLeaf(b) {
		// Only when A(1) is finite: the point reaches the leaf itself.
		copy(w.ym, w.mean[i:i+w.d])
		copy(w.yv, w.vr[i:i+w.d])
		w.emit(logP, tb, b)
		return nil
	}
	K := tr.Degree(b)
	den := math.Log(float64(m) + w.p.Alpha)
	if nw := w.p.Alpha + w.p.Beta*float64(K); nw > 0 {
		copy(w.ym, w.mean[i:i+w.d])
		copy(w.yv, w.vr[i:i+w.d])
		w.emit(logP+math.Log(nw)-den, tb, b)
	}
	for c := range tr.Children(b) {
		if err := w.edge(c, logP+math.Log(float64(tr.Count(c))-w.p.Beta)-den); err != nil {
			return err
		}
	}
	return nil
}

// onEdge sets ym, yv to the posterior marginal of the location at time t on
// the edge [a b], a's marginal being (pm, pv).
func (w *walker) onEdge(b pydt.NodeID, pm, pv []float64, ta, tb, t pydt.Time) {
	l1, l2 := t.Since(ta), tb.Since(t)
	for k := range w.d {
		s1, s2 := w.s2[k]*l1, w.s2[k]*l2
		mb, vb := w.lik.Message(b, k)
		if math.IsInf(vb, 1) {
			w.ym[k], w.yv[k] = pm[k], pv[k]+s1
			continue
		}
		v := vb + s2
		g := v / (v + s1)
		w.ym[k] = g*pm[k] + s1/(v+s1)*mb
		w.yv[k] = g*g*pv[k] + s1*g
	}
}

// LogDensity returns the log density of x under the mixture; NaN entries
// of x are missing and marginalised (dropped, as the covariance is
// diagonal). A row with every entry missing has log density 0.
func (mx *Mixture) LogDensity(x []float64) float64 {
	return logsumexp.Of(mx.logComp(x, nil))
}

// logComp returns each component's log weight plus log density of x's
// observed entries, in buf.
func (mx *Mixture) logComp(x []float64, buf []float64) []float64 {
	buf = buf[:0]
	for j, lw := range mx.LogW {
		s := lw
		o := j * mx.D
		for k, xv := range x {
			if math.IsNaN(xv) {
				continue
			}
			s += logNormal(xv, mx.Mean[o+k], mx.Var[o+k])
		}
		buf = append(buf, s)
	}
	return buf
}

// Conditional returns the log density of x's observed entries and, in dst
// (length D), the conditional mean of every missing entry given the
// observed ones (observed entries are copied).
func (mx *Mixture) Conditional(x, dst []float64) float64 {
	l := mx.logComp(x, nil)
	means := make([][]float64, len(l))
	for j := range means {
		means[j] = mx.Mean[j*mx.D : (j+1)*mx.D]
	}
	return fillMissing(l, means, x, dst)
}

// LogProbBinary returns the log probability of the binary row y (entries 0
// or 1, NaN missing) when each dimension is observed through the probit
// P(y = 1 | z) = Φ(z): given a component N(μ, v), P(y = 1) = Φ(μ/√(1+v)).
// If prob is not nil, it receives for every entry the probability that it
// is 1 given the observed entries (observed entries get their value).
func (mx *Mixture) LogProbBinary(y, prob []float64) float64 {
	return mx.logProbBinary(y, probitSide, prob)
}

// logCompBinary returns in buf each component's log weight plus the log
// probability of y's observed entries when y says on which side of 0 the
// auxiliary u = z + N(0, 1) fell (stdlib.ThresholdLeaf): P(y | z) =
// Φ(side(y)·z), so given a component N(μ, v), Φ(side(y)·μ/√(1+v)).
func (mx *Mixture) logCompBinary(y []float64, side func(float64) float64, buf []float64) []float64 {
	buf = buf[:0]
	for j, lw := range mx.LogW {
		s := lw
		o := j * mx.D
		for k, yv := range y {
			if math.IsNaN(yv) {
				continue
			}
			s += logPhi(side(yv) * mx.Mean[o+k] / math.Sqrt(1+mx.Var[o+k]))
		}
		buf = append(buf, s)
	}
	return buf
}

// logProbBinary is LogProbBinary with the side of each value given by side
// (stdlib.ThresholdLeaf.Side); prob's missing entries get P(side = +1),
// which for Probit is P(y = 1).
func (mx *Mixture) logProbBinary(y []float64, side func(float64) float64, prob []float64) float64 {
	l := mx.logCompBinary(y, side, nil)
	lz := logsumexp.Of(l)
	if prob != nil {
		for k, yv := range y {
			if !math.IsNaN(yv) {
				prob[k] = yv
				continue
			}
			var s float64
			for j, lj := range l {
				s += math.Exp(lj-lz) * math.Exp(logPhi(mx.Mean[j*mx.D+k]/math.Sqrt(1+mx.Var[j*mx.D+k])))
			}
			prob[k] = s
		}
	}
	return lz
}

func logPhi(z float64) float64 { return stdlib.LogNormCDF(z) }

func logNormal(x, m, v float64) float64 {
	if v == 0 {
		if x == m {
			return math.Inf(1)
		}
		return math.Inf(-1)
	}
	d := x - m
	return -0.5 * (math.Log(2*math.Pi*v) + d*d/v)
}

// Ensemble is the average of the predictive mixtures of several trees (the
// posterior predictive, with trees drawn from the posterior).
type Ensemble struct {
	Trees []*Mixture
}

// LogDensity returns the log of the mean over trees of their densities at x
// (NaN entries marginalised).
func (e *Ensemble) LogDensity(x []float64) float64 {
	l := make([]float64, len(e.Trees))
	for i, mx := range e.Trees {
		l[i] = mx.LogDensity(x)
	}
	return logsumexp.Of(l) - math.Log(float64(len(l)))
}

// Conditional returns the log density of x's observed entries and writes
// to dst the conditional mean of every missing entry given the observed
// ones, under the averaged mixture.
func (e *Ensemble) Conditional(x, dst []float64) float64 {
	l := make([]float64, len(e.Trees))
	means := make([][]float64, len(e.Trees))
	for i, mx := range e.Trees {
		means[i] = make([]float64, len(x))
		l[i] = mx.Conditional(x, means[i])
	}
	return combine(l, means, x, dst)
}

// LogProbBinary returns the log of the mean over trees of the probability
// of the binary row y (see Mixture.LogProbBinary); prob, if not nil,
// receives P(y_k = 1 | observed entries) for every entry.
func (e *Ensemble) LogProbBinary(y, prob []float64) float64 {
	l := make([]float64, len(e.Trees))
	probs := make([][]float64, len(e.Trees))
	for i, mx := range e.Trees {
		if prob != nil {
			probs[i] = make([]float64, len(y))
		}
		l[i] = mx.LogProbBinary(y, probs[i])
	}
	if prob == nil {
		return logsumexp.Of(l) - math.Log(float64(len(l)))
	}
	return combine(l, probs, y, prob)
}

// combine averages per-tree conditional predictions vals[i] with weights
// proportional to exp(l[i]) into the missing entries of dst, and returns
// the log mean of exp(l).
func combine(l []float64, vals [][]float64, x, dst []float64) float64 {
	return fillMissing(l, vals, x, dst) - math.Log(float64(len(l)))
}

// fillMissing copies x to dst and sets each missing (NaN) entry k to the
// average of vals[i][k] with weights proportional to exp(l[i]); it
// returns log Σ exp(l).
func fillMissing(l []float64, vals [][]float64, x, dst []float64) float64 {
	lz := logsumexp.Of(l)
	copy(dst, x)
	for k, xv := range x {
		if !math.IsNaN(xv) {
			continue
		}
		var s float64
		for i, li := range l {
			s += math.Exp(li-lz) * vals[i][k]
		}
		dst[k] = s
	}
	return lz
}
