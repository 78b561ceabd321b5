package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
)

// maxPriorTries bounds the draws of the prior that SamplePrior and
// SampleJoint make to find one whose PYDT parameters are valid.
const maxPriorTries = 10000

// treeParamsError marks a draw of the prior whose PYDT parameters are
// invalid, such as alpha < -2 beta: the draw is rejected and made again.
type treeParamsError struct{ err error }

func (e *treeParamsError) Error() string { return e.err.Error() }
func (e *treeParamsError) Unwrap() error { return e.err }

// sample draws the model's variables and tree in topological order. The
// PYDT has density zero where its parameters are invalid (alpha < -2 beta,
// say, with alpha ~ Normal(0, 1) and beta ~ Beta(1, 1)), so the model's
// prior is the product of the priors restricted to where they are valid:
// sample draws from it by rejection, redrawing everything when the PYDT's
// parameters come out invalid, at most maxPriorTries times. The first try
// consumes the random stream exactly as a plain forward draw does.
func (m *Model) sample(rng *rand.Rand, data bool) (*State, error) {
	if err := m.checkFixedTreeParams(data); err != nil {
		return nil, err
	}
	var last error
	for range maxPriorTries {
		st, err := m.sampleOnce(rng, data)
		var pe *treeParamsError
		if !errors.As(err, &pe) {
			return st, err
		}
		last = pe.err
	}
	return nil, fmt.Errorf("no draw of the prior in %d gave valid PYDT parameters (the last: %w); "+
		"the priors put almost no mass where the PYDT is defined: change them, or fix values that satisfy it with --set",
		maxPriorTries, last)
}

func (m *Model) sampleOnce(rng *rand.Rand, data bool) (*State, error) {
	st := m.NewState()
	for _, f := range m.G.Factors {
		if err := m.Refresh(st.Env); err != nil {
			return nil, err
		}
		if err := m.drawFactor(rng, st, f, data); err != nil {
			return nil, err
		}
	}
	if err := m.Refresh(st.Env); err != nil {
		return nil, err
	}
	return st, nil
}

// fixedExpr reports whether x depends on no variable that a draw changes:
// only on constants, clamped values, and (unless data is set) observed
// data, directly or through deterministic variables.
func fixedExpr(x graph.Expr, data bool) bool {
	for _, v := range graph.Vars(x) {
		switch {
		case v.Role == graph.Deterministic:
			if !fixedExpr(v.Expr, data) {
				return false
			}
		case !fixed(v, data):
			return false
		}
	}
	return true
}

// checkFixedTreeParams refuses fixed values of alpha and beta (constants or
// --set) that no draw can complete into valid PYDT parameters: both fixed
// with alpha < -2 beta, or alpha fixed at -2 or below (beta < 1 gives
// -2 beta > -2). A fixed alpha above -2 is valid with a large enough
// beta; the draws of beta are then restricted accordingly by rejection.
func (m *Model) checkFixedTreeParams(data bool) error {
	for _, tb := range m.Trees {
		if err := m.checkFixedParamsOf(tb, data); err != nil {
			return err
		}
	}
	return nil
}

func (m *Model) checkFixedParamsOf(tb *TreeBinding, data bool) error {
	f := tb.Factor
	a, b := f.Args[graph.PYDTAlpha], f.Args[graph.PYDTBeta]
	fa, fb := fixedExpr(a, data), fixedExpr(b, data)
	if !fa {
		return nil
	}
	env := graph.NewEnv(m.G)
	if err := m.Refresh(env); err != nil {
		return err
	}
	alpha, err := graph.Eval(a, env)
	if err != nil {
		return fmt.Errorf("%s: PYDT node %s: %w", f.Pos, tb.Leaves.Name, err)
	}
	if fb {
		beta, err := graph.Eval(b, env)
		if err != nil {
			return fmt.Errorf("%s: PYDT node %s: %w", f.Pos, tb.Leaves.Name, err)
		}
		if err := stdlib.CheckPYDT(alpha, beta); err != nil {
			return fmt.Errorf("%s: PYDT node %s: alpha = %v and beta = %v are both fixed (constants or --set) and invalid: %w",
				f.Pos, tb.Leaves.Name, alpha, beta, err)
		}
		return nil
	}
	if !(alpha > -2) || math.IsInf(alpha, 1) {
		return fmt.Errorf("%s: PYDT node %s: alpha = %v is fixed (a constant or --set), and no beta in [0, 1) satisfies alpha >= -2 beta: "+
			"a fixed alpha must be finite and greater than -2", f.Pos, tb.Leaves.Name, alpha)
	}
	return nil
}
