package predict

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestAugmentedRefused checks that prediction and placement of a model
// whose likelihood has no closed-form Gaussian leaf evidence (an
// stdlib.AugmentedLeaf that is not a stdlib.ThresholdLeaf) fail with an
// error that names the likelihood and the capability, before reading the
// run.
func TestAugmentedRefused(t *testing.T) {
	studentT := strings.Replace(probitSrc, "Probit(Z[i, d])", "StudentT(Z[i, d], 0.5, 3)", 1)
	studentT = strings.Replace(studentT, "binary", "real", 1)
	x := &dataset.Matrix{Rows: 4, Cols: 2, Data: []float64{0, 1, 1, 0, 0, 0, 1, 1}, Source: "x.csv"}
	mt := compile(t, studentT, x)
	mp := compile(t, probitSrc, x)
	test := [][]float64{{0, 1}}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"PredictRun StudentT", func() error { _, err := PredictRun(mt, t.TempDir(), test, RunOptions{}); return err }(), "StudentT likelihood of X"},
		{"PlaceRows StudentT", func() error {
			_, err := PlaceRows(mt, t.TempDir(), nil, pydt.Time{}, test, RunOptions{})
			return err
		}(), "StudentT likelihood of X"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, ErrAugmented) || !errors.Is(c.err, inference.ErrUnsupported) ||
			!strings.Contains(fmtErr(c.err), c.want) || !strings.Contains(fmtErr(c.err), "AugmentedLeaf") {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
	if _, err := PredictRun(mp, t.TempDir(), [][]float64{{2, math.NaN()}}, RunOptions{}); err == nil || !strings.Contains(err.Error(), "must be 0 or 1") {
		t.Errorf("PredictRun Probit with a test value 2: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
