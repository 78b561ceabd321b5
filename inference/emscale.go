package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// Large data sets (docs/em.md, "Scale"). Above emLargeN rows RunEM builds
// one initial tree instead of one per variance factor: the factor is
// chosen by building and fitting the trees of a random subsample of
// emSubsample rows, at a cost independent of N.
// (Variables so that tests can use small data.)
var (
	emLargeN    = 2000
	emSubsample = 1000
	// emSubsampleIters bounds the EM iterations of each subsample tree.
	emSubsampleIters = 10
)

// initFactors are the diffusion variances, as fractions of the data's
// average column variance, at which the initial trees are built.
var initFactors = []float64{1, 0.3, 0.1, 0.03}

// chooseFactor returns the factor of initFactors whose sequential tree of
// a random subsample of the rows (emSubsample of them, drawn from rng)
// has the highest bound after emSubsampleIters EM iterations at the
// plan's hyperparameter starts. The subsample's rows are observed exactly
// (for a probit model, as ±1): the choice is a heuristic for the
// construction's variance, not a fit of the model. cols and v0 are the
// data's column variances and their average (initOptions). It returns the
// factor and a line for the log, and the subsample.
func (p *EMPlan) chooseFactor(x, cols []float64, v0 float64, rng *rand.Rand) (float64, string, subsample, error) {
	b := p.m.Trees[0]
	n, d := b.N, b.D
	rows := rng.Perm(n)[:emSubsample]
	slices.Sort(rows)
	xs := make([]float64, 0, emSubsample*d)
	for _, i := range rows {
		xs = append(xs, x[i*d:(i+1)*d]...)
	}
	best, bestBound := math.NaN(), math.Inf(-1)
	msg := fmt.Sprintf("initial tree: variance factor chosen on %d of %d rows (bound after %d EM iterations):", emSubsample, n, emSubsampleIters)
	var firstErr error
	for _, f := range initFactors {
		o := p.Opt
		_, m, err := em.SequentialTree(xs, emSubsample, d, p.initOptions(f, cols, v0))
		var bound float64
		if err == nil {
			o.EP, o.Noise = nil, nil
			o.MaxIter = emSubsampleIters
			var fit *em.EM
			if fit, err = em.New(m, o); err == nil {
				if _, err = fit.Run(); err == nil {
					bound = fit.Bound()
				}
			}
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			msg += fmt.Sprintf(" %g: %v;", f, err)
			continue
		}
		msg += fmt.Sprintf(" %g: %.6g;", f, bound)
		if bound > bestBound {
			best, bestBound = f, bound
		}
	}
	if math.IsNaN(best) {
		return 0, msg, subsample{}, fmt.Errorf("no subsample tree could be fitted: %w", firstErr)
	}
	return best, msg + fmt.Sprintf(" using %g", best), subsample{rows, xs}, nil
}

// subsample is chooseFactor's subsample: the rows (increasing) and their
// values.
type subsample struct {
	rows []int
	x    []float64
}

// runFit runs EM on fit (em.EM.RunUntil) until it converges, reaches its
// MaxIter iterations or, after at least one iteration, the search's
// deadline or when p.ctx is done; p.iterLog, when set, is told of each iteration.
func (p *EMPlan) runFit(fit *em.EM) error {
	_, err := p.runFitCut(fit)
	return err
}

// runFitCut is runFit, and reports whether the deadline (or p.ctx) ended
// the fit before it converged or reached MaxIter.
func (p *EMPlan) runFitCut(fit *em.EM) (cut bool, err error) {
	var stop func() bool
	if !p.deadline.IsZero() || p.ctx != nil {
		stop = func() bool {
			cut = p.pastDeadline() || p.ctx != nil && p.ctx.Err() != nil
			return cut
		}
	}
	_, err = fit.RunUntil(stop, p.iterLog)
	return cut, err
}

// pastDeadline reports whether the search's deadline is set and past.
func (p *EMPlan) pastDeadline() bool {
	return !p.deadline.IsZero() && time.Now().After(p.deadline)
}

// emTreeBytes estimates the memory of one kept tree of the search (its
// belief-propagation state, EM's statistics and the tree), measured at
// about 16 records of 2D+4 float64 per row (30 MB at N = 10⁴, D = 10).
func emTreeBytes(n, d int) float64 { return 16 * float64(n) * float64(2*d+4) * 8 }

// emKeepBudget is the memory the K-best list may hold (bytes); the search
// holds two or three more trees in flight.
var emKeepBudget = 8e8

// keepLimit returns the length of the K-best list: k, or fewer when k
// trees of n rows in d dimensions would hold more than emKeepBudget (at
// least 2). At N = 10⁵, D = 10 it is 2.
func keepLimit(k, n, d int) int {
	lim := max(2, int(emKeepBudget/emTreeBytes(n, d)))
	return min(k, lim)
}
