// Package softmaxleaf draws a vector of logits η (length V) from
//
//	p(η) ∝ N(η; μ, diag(1/prec)) · Π_v softmax(η)_v^{n_v}
//
// exactly: the posterior of a Gaussian leaf of a tree (μ, prec: belief
// propagation's message into the leaf) whose softmax gives the
// probabilities of categorical data with counts n (the words emitted by
// one HMM state, or assigned to one topic).
//
// The log target is strictly concave. Its Laplace approximation (the mode
// by Newton's method, with the negative Hessian A = diag(prec + N p) −
// N p pᵀ at the mode, N = Σ n_v, p = softmax(η)) is used as a proposal and
// corrected exactly:
//
//   - MH: an independence Metropolis–Hastings step whose proposal is the
//     Laplace Gaussian N(mode, A⁻¹);
//   - Slice: a generalised elliptical slice step (Murray, Adams & MacKay
//     2010; Nishihara, Murray & Adams 2014) whose Gaussian is the Laplace
//     approximation and whose likelihood is the exact ratio
//     p(η) / N(η; mode, A⁻¹). It always moves and has no rejection.
//
// Both leave p(η) invariant whatever the quality of the approximation; the
// approximation only sets how fast they mix. Two further exact kernels need
// no approximation:
//
//   - PriorSlice: elliptical slice sampling with the Gaussian factor as its
//     prior, which returns from the tails (where the Laplace Gaussian,
//     narrower than the target, makes MH and Slice stick);
//   - AuxGibbs: a data-augmentation Gibbs sweep (a Gamma auxiliary for the
//     softmax's normaliser, then the categories independently by
//     univariate slice steps), which mixes well at large V, where MH's
//     acceptance vanishes and Slice moves little.
//
// Step composes PriorSlice, MH and Slice. The matrix A is a diagonal
// minus a rank-one term, so every Newton step, draw and density costs O(V)
// (Sherman–Morrison); nothing of size V×V is formed.
//
// The package knows nothing of graphs or trees: callers pass the message
// (μ, prec) and the counts.
package softmaxleaf

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
)

// Target is the density p(η) ∝ N(η; Mu, diag(1/Prec)) · Π_v
// softmax(η)_v^{Counts[v]}. Mu, Prec and Counts have the same length V ≥ 1;
// Prec is positive and finite, Counts non-negative and finite (whole
// numbers in the usual use, but any non-negative weights are allowed).
type Target struct {
	Mu, Prec, Counts []float64
}

// Check reports why t is not a valid target.
func (t *Target) Check() error {
	V := len(t.Mu)
	if V < 1 || len(t.Prec) != V || len(t.Counts) != V {
		return fmt.Errorf("softmaxleaf: lengths of mu %d, prec %d, counts %d must be equal and at least 1", len(t.Mu), len(t.Prec), len(t.Counts))
	}
	for v := 0; v < V; v++ {
		if math.IsNaN(t.Mu[v]) || math.IsInf(t.Mu[v], 0) {
			return fmt.Errorf("softmaxleaf: mu[%d] = %v is not finite", v, t.Mu[v])
		}
		if !(t.Prec[v] > 0) || math.IsInf(t.Prec[v], 1) {
			return fmt.Errorf("softmaxleaf: prec[%d] = %v is not positive and finite", v, t.Prec[v])
		}
		if !(t.Counts[v] >= 0) || math.IsInf(t.Counts[v], 1) {
			return fmt.Errorf("softmaxleaf: count[%d] = %v is not non-negative and finite", v, t.Counts[v])
		}
	}
	return nil
}

// LogSumExp is log Σ_v exp(x_v), computed stably (internal/logsumexp.Of);
// it is -Inf for an empty x and NaN when any x_v is NaN.
func LogSumExp(x []float64) float64 {
	return logsumexp.Of(x)
}

// LogDensity is log p(eta) up to an additive constant free of eta:
// −½ Σ prec_v (η_v − μ_v)² + Σ n_v η_v − N log Σ exp(η).
func (t *Target) LogDensity(eta []float64) float64 {
	var q, lin, N float64
	for v, x := range eta {
		d := x - t.Mu[v]
		q += t.Prec[v] * d * d
		lin += t.Counts[v] * x
		N += t.Counts[v]
	}
	return -0.5*q + lin - N*LogSumExp(eta)
}

// LogLik is the log likelihood of the counts alone, Σ n_v log
// softmax(η)_v.
func LogLik(eta, counts []float64) float64 {
	lse := LogSumExp(eta)
	var s float64
	for v, n := range counts {
		if n != 0 {
			s += n * (eta[v] - lse)
		}
	}
	return s
}

// ErrNoConvergence is wrapped by the error returned when Newton's method
// meets non-finite arithmetic.
var ErrNoConvergence = errors.New("Newton's method did not converge")

// Workspace holds the Laplace approximation of the last target and every
// buffer; reuse one across calls and they allocate nothing after the first
// call of a given V. A Workspace is not safe for concurrent use.
type Workspace struct {
	// Mode is the mode of the last target given to Laplace (or to MH or
	// Slice); D, P, N and R describe A = diag(D) − N·P·Pᵀ there, with
	// R = 1 − N Σ P_v²/D_v > 0.
	Mode, D, P []float64
	N, R       float64
	// Iters is the number of Newton steps the last Laplace took;
	// NotConverged counts the calls that stopped after maxNewton steps
	// short of the stopping rule (Mode is then the best point found).
	Iters, NotConverged int
	// MaxNewton bounds the Newton steps of Laplace (0: 200).
	MaxNewton int

	g, step, prop, nu, dq []float64
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// softmax writes softmax(x) to p and returns log Σ exp(x).
func softmax(x, p []float64) float64 {
	lse := LogSumExp(x)
	for v, a := range x {
		p[v] = math.Exp(a - lse)
	}
	return lse
}

// solve writes A⁻¹ g to dst, with A = diag(D) − N p pᵀ, by
// Sherman–Morrison, and returns gᵀ A⁻¹ g; r = 1 − N Σ p²/D.
func solve(D, p []float64, N, r float64, g, dst []float64) float64 {
	var pdg float64
	for v := range g {
		pdg += p[v] * g[v] / D[v]
	}
	f := N * pdg / r
	var dec float64
	for v := range g {
		dst[v] = (g[v] + f*p[v]) / D[v]
		dec += g[v] * dst[v]
	}
	return dec
}

// curvature fills ws.D and ws.R from ws.P at the current point.
func (ws *Workspace) curvature(t *Target) {
	var r float64
	for v := range ws.P {
		ws.D[v] = t.Prec[v] + ws.N*ws.P[v]
		// 1 − N Σ p²/D = Σ p (1 − N p / D) = Σ p prec / D, without
		// cancellation.
		r += ws.P[v] * t.Prec[v] / ws.D[v]
	}
	ws.R = r
}

// maxNewton is the default bound on the Newton iterations of Laplace.
const maxNewton = 200

// maxStep bounds the largest component of one Newton step: where the
// softmax saturates the curvature is only the prior's and an undamped step
// overshoots by orders of magnitude, while the log-softmax bends on a scale
// of one unit.
const maxStep = 10

// Laplace finds the mode of t by Newton's method with a backtracking line
// search (the log target is strictly concave) and stores it with the
// curvature there in ws. After MaxNewton steps it keeps the best point
// found (counted in NotConverged): the exact steps need a Gaussian near
// the target, not the exact mode. The search starts from the mode of the previous
// call when it has the same length (a warm start across sweeps), else from
// Mu.
func (ws *Workspace) Laplace(t *Target) error {
	if err := t.Check(); err != nil {
		return err
	}
	V := len(t.Mu)
	warm := len(ws.Mode) == V
	ws.Mode = grow(ws.Mode, V)
	ws.D, ws.P = grow(ws.D, V), grow(ws.P, V)
	ws.g, ws.step = grow(ws.g, V), grow(ws.step, V)
	ws.prop, ws.nu, ws.dq = grow(ws.prop, V), grow(ws.nu, V), grow(ws.dq, V)
	var N float64
	for _, n := range t.Counts {
		N += n
	}
	ws.N = N
	x := ws.Mode
	if !warm {
		copy(x, t.Mu)
	} else {
		for _, a := range x {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				copy(x, t.Mu)
				break
			}
		}
	}
	f := t.LogDensity(x)
	if f < t.LogDensity(t.Mu) {
		copy(x, t.Mu)
		f = t.LogDensity(x)
	}
	steps := ws.MaxNewton
	if steps <= 0 {
		steps = maxNewton
	}
	for it := 0; it < steps; it++ {
		lse := softmax(x, ws.P)
		for v := range x {
			ws.g[v] = -t.Prec[v]*(x[v]-t.Mu[v]) + t.Counts[v] - N*ws.P[v]
		}
		ws.curvature(t)
		dec := solve(ws.D, ws.P, N, ws.R, ws.g, ws.step)
		if math.IsNaN(dec) {
			return fmt.Errorf("softmaxleaf: Laplace: %w (non-finite Newton decrement)", ErrNoConvergence)
		}
		ws.Iters = it
		// dec/2 is the predicted gain of the Newton step. Stop when it is
		// below the rounding error of f itself, about ε·(N|lse| + Σ
		// n|η|); the exact MH or slice step does not need a more exact
		// mode.
		scale := 1 + math.Abs(f) + N*math.Abs(lse)
		for v, a := range x {
			scale += t.Counts[v] * math.Abs(a)
		}
		if dec/2 < 1e-15*scale {
			return nil
		}
		// Backtracking line search along the Newton direction, capped
		// at maxStep.
		s := 1.0
		for _, d := range ws.step {
			if a := math.Abs(d); a*s > maxStep {
				s = maxStep / a
			}
		}
		for {
			for v := range x {
				ws.prop[v] = x[v] + s*ws.step[v]
			}
			fn := t.LogDensity(ws.prop)
			if fn >= f+0.25*s*dec {
				copy(x, ws.prop)
				f = fn
				break
			}
			if s < 1e-12 {
				// No progress possible at this precision: x is the
				// mode to rounding.
				return nil
			}
			s /= 2
		}
	}
	// Not converged (seen at V in the thousands with tens of thousands of
	// counts, where rounding stalls the last steps): keep the
	// approximation at the best point found. MH and Slice stay exact with
	// any Gaussian; only their efficiency depends on it.
	ws.NotConverged++
	softmax(x, ws.P)
	ws.curvature(t)
	return nil
}

// draw writes a draw of N(0, A⁻¹) to dst. With q = D^{-1/2} p and
// u = q/|q|, A = D^{1/2}(I − N q qᵀ)D^{1/2} and (I − N q qᵀ)^{-1/2} =
// I + c u uᵀ with c = 1/√R − 1, so δ = D^{-1/2}(ε + c u (uᵀε)).
func (ws *Workspace) draw(rng *rand.Rand, dst []float64) {
	var q2, qe float64
	for v := range dst {
		e := rng.NormFloat64()
		dst[v] = e
		q := ws.P[v] / math.Sqrt(ws.D[v])
		q2 += q * q
		qe += q * e
	}
	c := 1/math.Sqrt(ws.R) - 1
	f := 0.0
	if q2 > 0 {
		f = c * qe / q2
	}
	for v := range dst {
		sd := 1 / math.Sqrt(ws.D[v])
		dst[v] = sd * (dst[v] + f*ws.P[v]*sd)
	}
}

// quad is δᵀ A δ with δ = x − Mode.
func (ws *Workspace) quad(x []float64) float64 {
	var s, pd float64
	for v, a := range x {
		d := a - ws.Mode[v]
		s += ws.D[v] * d * d
		pd += ws.P[v] * d
	}
	return s - ws.N*pd*pd
}

// LogApprox is the log density of the Laplace approximation N(Mode, A⁻¹)
// at x, up to an additive constant free of x.
func (ws *Workspace) LogApprox(x []float64) float64 { return -0.5 * ws.quad(x) }

// MH runs one independence Metropolis–Hastings step on eta (updated in
// place) with the Laplace approximation of t as the proposal, and reports
// whether the proposal was accepted. eta must have length V.
func (ws *Workspace) MH(rng *rand.Rand, t *Target, eta []float64) (bool, error) {
	if len(eta) != len(t.Mu) {
		return false, fmt.Errorf("softmaxleaf: eta has length %d, want %d", len(eta), len(t.Mu))
	}
	if err := ws.Laplace(t); err != nil {
		return false, err
	}
	ws.draw(rng, ws.prop)
	for v := range ws.prop {
		ws.prop[v] += ws.Mode[v]
	}
	logR := t.LogDensity(ws.prop) - ws.LogApprox(ws.prop) - t.LogDensity(eta) + ws.LogApprox(eta)
	if math.IsNaN(logR) {
		return false, fmt.Errorf("softmaxleaf: MH: non-finite acceptance ratio")
	}
	if logR >= 0 || math.Log(rng.Float64()) < logR {
		copy(eta, ws.prop)
		return true, nil
	}
	return false, nil
}

// maxShrink bounds the shrinkage steps of one elliptical slice step; the
// bracket shrinks towards the current point, so reaching it means the
// arithmetic is broken.
const maxShrink = 500

// Slice runs one generalised elliptical slice step on eta (updated in
// place): the Laplace Gaussian N(Mode, A⁻¹) of t is the step's prior and
// p(η)/N(η; Mode, A⁻¹) its likelihood. It returns the number of points
// evaluated. eta must have length V.
func (ws *Workspace) Slice(rng *rand.Rand, t *Target, eta []float64) (int, error) {
	if len(eta) != len(t.Mu) {
		return 0, fmt.Errorf("softmaxleaf: eta has length %d, want %d", len(eta), len(t.Mu))
	}
	if err := ws.Laplace(t); err != nil {
		return 0, err
	}
	logL := func(x []float64) float64 { return t.LogDensity(x) - ws.LogApprox(x) }
	y := logL(eta) + math.Log(rng.Float64())
	if math.IsNaN(y) || math.IsInf(y, 1) {
		return 0, fmt.Errorf("softmaxleaf: Slice: log density at the current point is %v", y)
	}
	ws.draw(rng, ws.nu)
	for v := range eta {
		ws.dq[v] = eta[v] - ws.Mode[v]
	}
	return ws.shrink(rng, eta, ws.Mode, logL, y, "Slice")
}

// shrink runs the shrinkage loop of an elliptical slice step on eta
// (updated in place) around the ellipse center + dq cos θ + nu sin θ
// (ws.dq and ws.nu set by the caller) until logL exceeds the slice level
// y; it returns the number of points evaluated. step names the caller in
// the error after maxShrink points.
func (ws *Workspace) shrink(rng *rand.Rand, eta, center []float64, logL func([]float64) float64, y float64, step string) (int, error) {
	theta := 2 * math.Pi * rng.Float64()
	lo, hi := theta-2*math.Pi, theta
	for n := 1; n <= maxShrink; n++ {
		c, s := math.Cos(theta), math.Sin(theta)
		for v := range eta {
			ws.prop[v] = center[v] + ws.dq[v]*c + ws.nu[v]*s
		}
		if logL(ws.prop) > y {
			copy(eta, ws.prop)
			return n, nil
		}
		if theta < 0 {
			lo = theta
		} else {
			hi = theta
		}
		theta = lo + (hi-lo)*rng.Float64()
	}
	return maxShrink, fmt.Errorf("softmaxleaf: %s: no point found in %d shrinkage steps", step, maxShrink)
}

// PriorSlice runs one elliptical slice step (Murray, Adams & MacKay 2010)
// on eta (updated in place) with the Gaussian N(Mu, diag(1/Prec)) of t as
// the prior and the counts' likelihood Π softmax(η)^n, which is bounded,
// as the likelihood. It does not need the Laplace approximation and mixes
// slowly where the counts dominate, but from a point far in the target's
// tails, where the Laplace steps can stick (the Laplace Gaussian is
// narrower than the target there), it returns towards the bulk within a
// few steps. It returns the number of points evaluated.
func (ws *Workspace) PriorSlice(rng *rand.Rand, t *Target, eta []float64) (int, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	V := len(t.Mu)
	if len(eta) != V {
		return 0, fmt.Errorf("softmaxleaf: eta has length %d, want %d", len(eta), V)
	}
	ws.prop, ws.nu, ws.dq = grow(ws.prop, V), grow(ws.nu, V), grow(ws.dq, V)
	y := LogLik(eta, t.Counts) + math.Log(rng.Float64())
	if math.IsNaN(y) || math.IsInf(y, 1) {
		return 0, fmt.Errorf("softmaxleaf: PriorSlice: log likelihood at the current point is %v", y)
	}
	for v := range eta {
		ws.nu[v] = rng.NormFloat64() / math.Sqrt(t.Prec[v])
		ws.dq[v] = eta[v] - t.Mu[v]
	}
	return ws.shrink(rng, eta, t.Mu, func(x []float64) float64 { return LogLik(x, t.Counts) }, y, "PriorSlice")
}

// Step is the update offered to samplers: a PriorSlice step (which brings
// a point from the tails back, e.g. after the counts or the message
// changed), then an independence MH step and a generalised elliptical
// slice step, both with the Laplace approximation. Each leaves p(η)
// invariant, so their composition does. It reports whether the MH
// proposal was accepted. (MH accepts often at small V; its acceptance
// falls with the number of categories whose counts are small, since the
// Laplace approximation's error adds up over them: at V = 10000 with 500
// categories seen it is about 0. The slice steps always move.)
func (ws *Workspace) Step(rng *rand.Rand, t *Target, eta []float64) (bool, error) {
	if _, err := ws.PriorSlice(rng, t, eta); err != nil {
		return false, err
	}
	acc, err := ws.MH(rng, t, eta)
	if err != nil {
		return false, err
	}
	if _, err := ws.Slice(rng, t, eta); err != nil {
		return acc, err
	}
	return acc, nil
}

// Init writes a draw of the Laplace approximation of t to eta: a start
// close to the target's typical set (every update leaves the target
// invariant from any start; this one saves the burn-in from the mean).
func (ws *Workspace) Init(rng *rand.Rand, t *Target, eta []float64) error {
	if len(eta) != len(t.Mu) {
		return fmt.Errorf("softmaxleaf: eta has length %d, want %d", len(eta), len(t.Mu))
	}
	if err := ws.Laplace(t); err != nil {
		return err
	}
	ws.draw(rng, eta)
	for v := range eta {
		eta[v] += ws.Mode[v]
	}
	return nil
}

// AuxGibbs runs one sweep of an exact data-augmentation Gibbs sampler on
// eta (updated in place). With N = Σ n_v, the identity
//
//	(Σ_v e^{η_v})^{-N} = ∫ u^{N-1} e^{-u Σ_v e^{η_v}} du / Γ(N)
//
// makes p(η) the marginal of p(η, u) ∝ N(η; μ, diag(1/prec)) · Π_v
// e^{n_v η_v} · u^{N-1} e^{-u Σ_v e^{η_v}}. The sweep draws u | η ~
// Gamma(N, Σ e^{η}) exactly, then each η_v | u, independently, by a
// univariate slice step (stepping out and shrinkage, Neal 2003) on the
// log-concave density −prec_v(η_v − μ_v)²/2 + n_v η_v − u e^{η_v}, with
// a width fixed by prec_v and n_v. Both leave p(η, u), hence p(η),
// invariant. It costs O(V) with a few exponentials per category, and,
// unlike the Laplace steps, mixes well in high dimension: given u the
// categories do not interact. With no counts it draws η from the prior.
func (ws *Workspace) AuxGibbs(rng *rand.Rand, t *Target, eta []float64) error {
	if err := t.Check(); err != nil {
		return err
	}
	V := len(t.Mu)
	if len(eta) != V {
		return fmt.Errorf("softmaxleaf: eta has length %d, want %d", len(eta), V)
	}
	var N float64
	for _, n := range t.Counts {
		N += n
	}
	if N == 0 {
		for v := range eta {
			eta[v] = t.Mu[v] + rng.NormFloat64()/math.Sqrt(t.Prec[v])
		}
		return nil
	}
	logU := math.Log(gammaRand(rng, N)) - LogSumExp(eta)
	for v := range eta {
		x, err := slice1(rng, eta[v], t.Mu[v], t.Prec[v], t.Counts[v], logU)
		if err != nil {
			return fmt.Errorf("softmaxleaf: AuxGibbs: category %d: %w", v, err)
		}
		eta[v] = x
	}
	return nil
}

// slice1 is one univariate slice step from x on f(y) = −prec(y − mu)²/2 +
// n y − e^{y + logU}.
func slice1(rng *rand.Rand, x, mu, prec, n, logU float64) (float64, error) {
	f := func(y float64) float64 {
		d := y - mu
		return -0.5*prec*d*d + n*y - math.Exp(y+logU)
	}
	fx := f(x)
	if math.IsNaN(fx) || math.IsInf(fx, 0) {
		return x, fmt.Errorf("log density %v at %v", fx, x)
	}
	y := fx + math.Log(rng.Float64())
	w := 2.5 / math.Sqrt(prec+n)
	lo := x - w*rng.Float64()
	hi := lo + w
	for i := 0; i < 200 && f(lo) > y; i++ {
		lo -= w
	}
	for i := 0; i < 200 && f(hi) > y; i++ {
		hi += w
	}
	for range maxShrink {
		z := lo + (hi-lo)*rng.Float64()
		if f(z) > y {
			return z, nil
		}
		if z < x {
			lo = z
		} else {
			hi = z
		}
	}
	return x, fmt.Errorf("no point found in %d shrinkage steps", maxShrink)
}

// gammaRand draws from Gamma(shape, 1), shape > 0 (Marsaglia & Tsang 2000,
// with the boost u^{1/shape} below 1).
func gammaRand(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaRand(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
