package em

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrNotMaximum is wrapped by the error of Laplace when the objective's
// Hessian in the times is not negative definite at the current times (they
// are not at a local maximum).
var ErrNotMaximum = errors.New("em: the times are not at a maximum of the objective")

// Laplace returns the Laplace correction of the bound for the divergence
// times,
//
//	½ K log(2π) − ½ log det H,
//
// K the number of branch points and H the negative Hessian, in the times'
// free coordinates u (the log gaps), of the collapsed objective: L with
// q(x) at its optimum for every value of the times and q(c), q(τ), α and
// β held at their current values. For Gaussian evidence and fixed
// hyperparameters the collapsed objective is log p(Y, u | T) itself, and
// Bound() + Laplace() approximates log p(Y | T), the times integrated out
// instead of point-estimated (docs/em.md, "The Laplace correction").
//
// The collapsed objective's gradient is the time terms' gradient after an
// E-step at those times (envelope theorem), so H is formed by central
// differences of that gradient, one E-step per side and branch point:
// O(K · N · D) for the E-steps and O(K³) for the dense Cholesky
// factorisation. (With q(x) held fixed instead the Hessian is sparse, O(K)
// to factorise, but it overstates the curvature, and on small trees it
// ranked topologies worse than the bound alone: docs/em.md.) The tree's
// times and the E-step statistics are restored afterwards. The times must
// be at a maximum, as after EM has converged: an error wrapping
// ErrNotMaximum is returned when H is not positive definite. With EP
// sites each E-step refits them, and the result is EP's approximation. A
// tree without branch points has correction 0.
//
// Laplace leaves q(x) at its optimum for the current times and
// hyperparameters (an E-step) and Bound() the objective there, the
// collapsed objective at the point where H is taken, so that Bound() +
// Laplace() is one approximation also for a fit its iteration cap stopped
// before convergence (where Bound() was the objective with q(x) from
// before the last iteration's updates). Further Steps are unaffected.
func (e *EM) Laplace() (float64, error) {
	k := len(e.internal)
	if k == 0 {
		return 0, nil
	}
	if e.iter == 0 {
		return math.NaN(), errors.New("em: Laplace needs at least one EM iteration")
	}
	s0 := e.currentS(make([]float64, 0, k))
	u0 := make([]float64, k)
	e.uFromS(u0, s0)
	u := make([]float64, k)
	s := make([]float64, k)
	gs := make([]float64, k)
	gp := make([]float64, k)
	gm := make([]float64, k)
	grad := func(dst []float64) error {
		e.sFromU(s, u)
		if err := e.setTimes(s); err != nil {
			return err
		}
		if err := e.estepWith(false); err != nil {
			return err
		}
		// The times as set (setTimes may nudge them).
		e.currentS(s[:0])
		e.gradU(dst, u, s, gs)
		return nil
	}
	h := mat.NewSymDense(k, nil)
	const step = 1e-4
	var ferr error
	for b := range k {
		copy(u, u0)
		u[b] = u0[b] + step
		if err := grad(gp); err != nil {
			ferr = err
			break
		}
		u[b] = u0[b] - step
		if err := grad(gm); err != nil {
			ferr = err
			break
		}
		for i := 0; i <= b; i++ {
			// Symmetrised: the mean of the two finite differences.
			v := -(gp[i] - gm[i]) / (2 * step)
			if i == b {
				h.SetSym(i, b, v)
			} else {
				h.SetSym(i, b, 0.5*(h.At(i, b)+v))
			}
		}
		for i := b + 1; i < k; i++ {
			h.SetSym(i, b, -(gp[i]-gm[i])/(2*step))
		}
	}
	copy(u, u0)
	if err := e.setTimes(s0); err != nil {
		return math.NaN(), err
	}
	// The bound at the point where H is taken, q(x) at its optimum there:
	// the value of the collapsed objective that the correction completes.
	// A fit stopped by its iteration cap ends with q(x) from before its
	// last updates (q(θ), q(τ), the times, q(c)), and Bound() was that
	// stale value (TestLaplaceBoundAtHessianPoint).
	if err := e.Refresh(); err != nil {
		return math.NaN(), err
	}
	if ferr != nil {
		return math.NaN(), fmt.Errorf("em: Laplace: %w", ferr)
	}
	return laplaceCorrection(h)
}

// laplaceCorrection is the Laplace correction (k/2) log 2π - (1/2) log
// det h for h the negated Hessian of the log density in the k times: an
// error wrapping ErrNotMaximum when h is not positive definite, and an
// error when the correction is not finite (a Hessian with NaN entries
// can pass the Cholesky factorisation), never a NaN or infinite value.
func laplaceCorrection(h *mat.SymDense) (float64, error) {
	k := h.SymmetricDim()
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		return math.NaN(), fmt.Errorf("%w: the Hessian in the times is not negative definite", ErrNotMaximum)
	}
	v := 0.5*float64(k)*log2Pi - 0.5*ch.LogDet()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.NaN(), fmt.Errorf("em: Laplace: the correction is %v (the Hessian in the times is not finite)", v)
	}
	return v, nil
}
