// Package sim draws trees and data from the Pitman-Yor diffusion tree by
// following its generative process (Knowles & Ghahramani 2011, Section 2)
// point by point. It uses no closed-form prior: its draws are the reference
// against which the prior, the likelihood and the samplers are tested.
//
// Point 1 becomes the whole tree. Point i starts at the origin and follows
// the paths of the earlier points. On a segment from t_a down to t_b that m
// earlier points have traversed it diverges at rate
// a(t) Γ(m-β)/Γ(m+1+α); the divergence time is drawn by inverting the
// cumulative hazard: with E ~ Exp(1), A(t) = A(t_a) + E Γ(m+1+α)/Γ(m-β).
// If that time is before t_b the point leaves the segment there, creating a
// new branch point. Otherwise it reaches the branch point at t_b, where it
// follows existing branch k with probability (n_k-β)/(m+α) and starts a
// new branch with probability (α+βK)/(m+α); it continues down the chosen
// branch. After diverging, the point diffuses independently to t = 1.
//
// Locations follow the same path: a new branch point on a segment gets a
// location from the Brownian bridge between the segment's ends, and the
// point's own location at t = 1 is Gaussian around the location where it
// left, with variance σ²_d(1-t) in dimension d. The diffusion variance is
// one σ² shared by every dimension, or, as in Neal's Dirichlet diffusion
// tree, one σ²_d per dimension (Params.Variances); dimensions are
// independent given the tree.
//
// # Numerics
//
// Times are pydt.Time values, kept as s = -log(1-t), so divergences with
// 1-t far below 1e-16, and below the float64 range of 1-t (s > 745), are
// represented exactly, and each divergence time is drawn by
// pydt.Divergence.Advance, in s, from the top of its segment. Two guards
// remain, for what no float64 s can hold:
//
//   - A divergence whose increment in s is below the resolution of s at the
//     top of its segment (say 1e-10 after s = 1e7) is moved to the next
//     float64 s after the top.
//   - On a segment ending at a leaf, A(1) = ∞ puts the true time strictly
//     before 1, but its s can exceed the largest float64 (with
//     a(t) = c/(1-t) this needs E/(c h_m) > 1.8e308, so c below about
//     1e-300). Such a time is placed halfway, in float64 ordering, between
//     the top's s and the largest float64 (see placeOnLeafSegment); if no
//     float64 fits, the point joins the branch point at the top. Draws in
//     that regime do not follow the PYDT law exactly.
package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// Params are the parameters of the PYDT and of its Brownian diffusion.
type Params struct {
	// Alpha is the concentration, Alpha >= -2 Beta.
	Alpha float64
	// Beta is the discount, 0 <= Beta < 1.
	Beta float64
	// Div is the divergence function a(t).
	Div pydt.Divergence
	// Variance is the diffusion variance σ² per unit time (> 0) shared by
	// every dimension; it is ignored when Variances is set. Only Draw
	// uses it.
	Variance float64
	// Variances, when not nil, holds the diffusion variance σ²_d of each
	// dimension (length Dims, each > 0), as in Neal's Dirichlet diffusion
	// tree; Variance is then ignored. Only Draw uses it.
	Variances []float64
	// Dims is the dimension D of the locations (>= 1). Only Draw uses it.
	Dims int
}

// ErrParams is wrapped by the errors for invalid parameters.
var ErrParams = errors.New("invalid PYDT parameters")

// CheckTree reports parameter values for which the tree process is not
// defined: it checks Alpha, Beta and Div, as pydt.CheckPrior does.
func (p Params) CheckTree() error {
	if err := pydt.CheckPrior(p.Alpha, p.Beta, p.Div); err != nil {
		return fmt.Errorf("%w: %w", ErrParams, err)
	}
	return nil
}

// Check reports invalid parameters for Draw: those of CheckTree, Dims >=
// 1, and Variance > 0 (finite) or, when Variances is set, Dims variances
// each > 0 (finite).
func (p Params) Check() error {
	if err := p.CheckTree(); err != nil {
		return err
	}
	if p.Dims < 1 {
		return fmt.Errorf("%w: dims = %d, need dims >= 1", ErrParams, p.Dims)
	}
	if p.Variances == nil {
		if !(p.Variance > 0) || math.IsInf(p.Variance, 1) {
			return fmt.Errorf("%w: variance = %v, need finite variance > 0", ErrParams, p.Variance)
		}
		return nil
	}
	if len(p.Variances) != p.Dims {
		return fmt.Errorf("%w: %d variances for %d dimensions", ErrParams, len(p.Variances), p.Dims)
	}
	for d, v := range p.Variances {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("%w: variance of dimension %d = %v, need finite variance > 0", ErrParams, d+1, v)
		}
	}
	return nil
}

// DimVariances returns the diffusion variance of every dimension: a copy
// of Variances when set, else Dims copies of Variance.
func (p Params) DimVariances() []float64 {
	if p.Variances != nil {
		return append([]float64(nil), p.Variances...)
	}
	out := make([]float64, p.Dims)
	for d := range out {
		out[d] = p.Variance
	}
	return out
}

// DrawTree draws a tree with n >= 1 leaves from the PYDT prior, by the
// generative process. Leaf i-1 is the i-th point. Variance and Dims are not
// used.
func DrawTree(rng *rand.Rand, n int, p Params) (*pydt.Tree, error) {
	if err := p.CheckTree(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: n = %d, need at least one point", ErrParams, n)
	}
	d := drawer{rng: rng, p: p}
	return d.run(n), nil
}

// Draw draws a tree with n >= 1 leaves and the locations of all its nodes.
// The locations are a flat slice of length tree.Cap()*Dims: node v's
// coordinate d is x[int(v)*Dims+d]; leaves are the data points, branch
// points the latent locations where paths split. Entries of unused node IDs
// are zero (there are none in a freshly drawn tree).
func Draw(rng *rand.Rand, n int, p Params) (*pydt.Tree, []float64, error) {
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	if n < 1 {
		return nil, nil, fmt.Errorf("%w: n = %d, need at least one point", ErrParams, n)
	}
	d := drawer{rng: rng, p: p, locs: true}
	tr := d.run(n)
	return tr, d.x, nil
}

// LeafRows returns the leaf locations of a Draw as an N×D table of rows,
// sharing storage with x.
func LeafRows(x []float64, n, dims int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = x[i*dims : (i+1)*dims : (i+1)*dims]
	}
	return rows
}

type drawer struct {
	rng  *rand.Rand
	p    Params
	locs bool
	tr   *pydt.Tree
	x    []float64 // node*D + d
	xa   []float64 // scratch: location at the top of the current segment
	s2   []float64 // the diffusion variance of each dimension
	// clamped counts the divergences whose true time is not representable
	// (see placeOnLeafSegment).
	clamped int
}

// logHazard returns log Γ(m-β) - log Γ(m+1+α), the log of the divergence
// rate's factor on a segment traversed by m >= 1 earlier points.
func (d *drawer) logHazard(m int) float64 {
	a, _ := math.Lgamma(float64(m) - d.p.Beta)
	b, _ := math.Lgamma(float64(m) + 1 + d.p.Alpha)
	return a - b
}

func (d *drawer) run(n int) *pydt.Tree {
	d.tr = pydt.New(n)
	D := d.p.Dims
	if d.locs {
		d.x = make([]float64, d.tr.Cap()*D)
		d.xa = make([]float64, D)
		d.s2 = d.p.DimVariances()
		for k := range D {
			d.x[k] = math.Sqrt(d.s2[k]) * d.rng.NormFloat64() // x_1(1) ~ N(0, σ²_k)
		}
	}
	d.tr.Plant(0)
	for i := 1; i < n; i++ {
		d.addPoint(pydt.NodeID(i))
	}
	return d.tr
}

// after returns the representable time just after t: the next float64 s.
func after(t pydt.Time) pydt.Time {
	return pydt.TimeFromS(math.Nextafter(t.S(), math.Inf(1)))
}

// addPoint runs the generative process for point (leaf) i.
func (d *drawer) addPoint(i pydt.NodeID) {
	tr, div := d.tr, d.p.Div
	v := tr.Root() // lower end of the current segment
	ta := pydt.Origin
	for k := range d.xa {
		d.xa[k] = 0 // the origin's location
	}
	for {
		tb := tr.Time(v)
		m := tr.Count(v) // earlier points that traversed the segment
		// Divergence on (ta, tb): E ~ Exp(1), A(t) = A(ta) + E/h_m.
		e := d.rng.ExpFloat64()
		td := div.Advance(ta, e*math.Exp(-d.logHazard(m)))
		if !ta.Before(td) {
			// Rounding put the time at ta (the increment in s is below
			// the resolution of s there): use the next representable time.
			td = after(ta)
		}
		if td.IsLeaf() && tr.IsLeaf(v) {
			// A(1) = ∞, so the true time is before 1, but its s is
			// beyond the largest float64.
			var ok bool
			td, ok = d.placeOnLeafSegment(ta)
			if !ok {
				d.joinAt(i, tr.Parent(v))
				return
			}
		}
		if td.Before(tb) {
			d.divergeOnSegment(i, v, ta, td)
			return
		}
		// Reached the branch point v: choose a branch or start a new one.
		K := tr.Degree(v)
		u := d.rng.Float64() * (float64(m) + d.p.Alpha)
		next := pydt.NoNode
		for c := range tr.Children(v) {
			u -= float64(tr.Count(c)) - d.p.Beta
			if u < 0 {
				next = c
				break
			}
		}
		if next == pydt.NoNode {
			// The rest, (α+βK)/(m+α), is a new branch. When α+βK = 0 it
			// is never chosen except by rounding in the subtraction; then
			// take the last branch.
			if d.p.Alpha+d.p.Beta*float64(K) > 0 {
				d.joinAt(i, v)
				return
			}
			for c := range tr.Children(v) {
				next = c
			}
		}
		if d.locs {
			copy(d.xa, d.x[int(v)*d.p.Dims:])
		}
		ta, v = tb, next
	}
}

// placeOnLeafSegment chooses a time for a divergence on a segment (ta, 1)
// whose drawn s = -log(1-t) is beyond the largest float64. The true time
// cannot be represented, so any choice distorts the times; this one keeps
// the tree's structure: s is put halfway, in the ordering of float64
// values, between ta's s and the largest float64, which leaves room for
// further nested divergences below it. It reports false when no float64 s
// lies strictly between.
func (d *drawer) placeOnLeafSegment(ta pydt.Time) (pydt.Time, bool) {
	d.clamped++
	lo, hi := math.Float64bits(ta.S()), math.Float64bits(math.MaxFloat64)
	td := pydt.TimeFromS(math.Float64frombits(lo + (hi-lo)/2))
	return td, ta.Before(td) && !td.IsLeaf()
}

// divergeOnSegment attaches point i at a new branch point at time td on the
// edge above v (whose top is at ta), drawing the branch point's location
// from the Brownian bridge and the point's location from it.
func (d *drawer) divergeOnSegment(i, v pydt.NodeID, ta, td pydt.Time) {
	tb := d.tr.Time(v)
	if !d.locs {
		d.tr.Attach(i, pydt.Position{Node: v, Time: td})
		return
	}
	D := d.p.Dims
	// Bridge from (ta, xa) to (tb, xb) at td: mean xa + w (xb - xa),
	// variance σ²_k (td-ta)(tb-td)/(tb-ta), with w = (td-ta)/(tb-ta).
	d1, d2 := td.Since(ta), tb.Since(td)
	w, split := 0.0, d1+d2 > 0 // else both lengths underflow: the bridge is a point
	if split {
		w = d1 / (d1 + d2)
	}
	leaf := td.OneMinus()
	w0 := d.tr.Attach(i, pydt.Position{Node: v, Time: td})
	xb := d.x[int(v)*D : int(v)*D+D]
	xw := d.x[int(w0)*D : int(w0)*D+D]
	xi := d.x[int(i)*D : int(i)*D+D]
	for k := range D {
		sdBridge := 0.0
		if split {
			sdBridge = math.Sqrt(d.s2[k] * d1 * (d2 / (d1 + d2)))
		}
		sdLeaf := math.Sqrt(d.s2[k] * leaf)
		xw[k] = d.xa[k] + w*(xb[k]-d.xa[k]) + sdBridge*d.rng.NormFloat64()
		xi[k] = xw[k] + sdLeaf*d.rng.NormFloat64()
	}
}

// joinAt attaches point i as a new child of the branch point b, with
// location x_i(1) ~ N(x_b, σ²_k(1-t_b)) in dimension k.
func (d *drawer) joinAt(i, b pydt.NodeID) {
	d.tr.Attach(i, pydt.Position{Node: b, AtNode: true})
	if !d.locs {
		return
	}
	D := d.p.Dims
	l := d.tr.Time(b).OneMinus()
	for k := range D {
		d.x[int(i)*D+k] = d.x[int(b)*D+k] + math.Sqrt(d.s2[k]*l)*d.rng.NormFloat64()
	}
}
