package em

import (
	"math"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// nanLogZ is the probit site with a broken normaliser: its log Z is NaN
// (a site implementation's bug, or a quadrature that failed).
type nanLogZ struct{ Probit }

func (s nanLogZ) Tilted(k int, y, m, v float64) (float64, float64, float64, error) {
	_, mean, vari, err := s.Probit.Tilted(k, y, m, v)
	return math.NaN(), mean, vari, err
}

// TestRunNonFiniteBound: a bound that is NaN must stop Step and Run with an
// error naming it. (Run used to go on: |NaN - prev| < tol is false, so it
// iterated to MaxIter and returned converged = false with no error, and a
// caller read a NaN bound as a result.)
func TestRunNonFiniteBound(t *testing.T) {
	for _, opt := range []Options{fixedAll(), learnAll()} {
		tr, err := pydt.ParseNewick("((1:0.2,2:0.2):0.4,3:0.6):0.4;", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := bp.New(tr, 1)
		ep, err := NewEP(nanLogZ{}, []float64{1, 0, 1}, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt.EP = ep
		e, err := New(m, opt)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run()
		if err == nil {
			t.Fatalf("learned %v: Run returned no error; bound %v after %d iterations", opt.CPrior != nil, e.Bound(), e.Iterations())
		}
		if !strings.Contains(err.Error(), "bound") {
			t.Errorf("error %q does not name the bound", err)
		}
		if _, err := e.Step(); err == nil {
			t.Errorf("Step after the failure returned no error")
		}
	}
}
