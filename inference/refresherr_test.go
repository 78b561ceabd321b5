package inference

import (
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// refreshPoison declares a deterministic variable that cannot be evaluated
// once j is set to 3 (an index outside u's 1..2), so every Refresh of the
// model fails.
const refreshPoison = `
data u : real[2]
u ~ Normal(0, 1)
data j : real
j ~ Normal(0, 1)
a = u[j]
`

// TestStepsReturnRefreshError checks that the HMM steps (ffbs, the
// Dirichlet rows), the probit scale moves and ghk(prec, u) stop with the error of a
// deterministic variable that cannot be evaluated, naming the step and the
// statement: they ignored Refresh's (and set's) error and went on with
// stale derived values.
func TestStepsReturnRefreshError(t *testing.T) {
	const want = "a = u[j]: index 3 of u is outside 1..2"
	hmmData := map[string]*dataset.Matrix{
		"y": dataMat(6, 1, func(i, _ int) float64 { return float64(i % 3) }),
		"u": dataMat(2, 1, func(i, _ int) float64 { return float64(i) }),
	}
	probitData := map[string]*dataset.Matrix{
		"Y": dataMat(5, 2, func(i, d int) float64 { return float64((i + d) % 2) }),
		"u": dataMat(2, 1, func(i, _ int) float64 { return float64(i) }),
	}
	hmm := compileSource(t, "hmm.pydt", []byte(hmmModel+refreshPoison), hmmData, map[string]float64{"K": 3, "j": 1})
	probit := compileSource(t, "probit.pydt", []byte(probitModel+refreshPoison), probitData, map[string]float64{"j": 1})
	for _, tt := range []struct {
		m     *Model
		steps []string
	}{
		{hmm, []string{"ffbs(z)", "gibbs(pi0)", "gibbs(trans[k])"}},
		{probit, []string{"scale(prec, u)", "scale(prec, Z)", "scale(c, times)", "ghk(prec, u)"}},
	} {
		for _, name := range tt.steps {
			t.Run(name, func(t *testing.T) {
				ch := newTestChain(t, tt.m)
				step := stepNamed(t, ch, name)
				if err := step.update(ch); err != nil {
					t.Fatalf("a valid state: %v", err)
				}
				j, _ := tt.m.G.Lookup("j")
				ch.st.Env.Values[j.ID][0] = 3 // outside 1..2
				err := step.update(ch)
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
					t.Errorf("got %v, want an error of %s: %s", err, name, want)
				}
			})
		}
	}
}

// TestTimeScaleReturnsPriorError checks that scale(c, times) stops with
// the error of a tree prior it cannot set (alpha outside its range, put in
// the state directly so that every Refresh succeeds), naming the step and
// the cause. Its log target turned that error into -Inf, a silent
// rejection: the update counted a skipped move and its restore returned
// the bare error without the step's name.
func TestTimeScaleReturnsPriorError(t *testing.T) {
	m := compileProbit(t, dataMat(5, 2, func(i, d int) float64 { return float64((i + d) % 2) }))
	ch := newTestChain(t, m)
	step := stepNamed(t, ch, "scale(c, times)")
	if err := step.update(ch); err != nil {
		t.Fatalf("a valid state: %v", err)
	}
	alpha, _ := m.G.Lookup("alpha")
	ch.st.Env.Values[alpha.ID][0] = -5
	skipped := ch.Skipped
	err := step.update(ch)
	if err == nil || !strings.HasPrefix(err.Error(), "scale(c, times): the tree prior at c = ") || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("got %v, want an error of scale(c, times) naming the tree prior and alpha", err)
	}
	if ch.Skipped != skipped {
		t.Errorf("the failed update was counted as a skipped move (%d, was %d)", ch.Skipped, skipped)
	}
}
