package inference

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// A non-finite sampled location is an error naming the entry, not a panic
// in the truncated-normal draw of Probit's augmentation.
func TestDrawAuxNonFiniteLocation(t *testing.T) {
	y := &dataset.Matrix{Rows: 2, Cols: 2, Data: []float64{1, 0, 0, 1}, Source: "y.csv"}
	m := compileProbit(t, y)
	b := m.Trees[0]
	env := m.NewState().Env
	aux := make([]float64, 4)
	var p []float64
	for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		z := []float64{0.5, -0.5, bad, 0}
		err := b.drawAux(rand.New(rand.NewPCG(1, 2)), env, z, aux, &p, nil)
		if err == nil || !strings.Contains(err.Error(), "row 2, column 1") {
			t.Fatalf("z = %v: drawAux error %v, want one naming row 2, column 1", bad, err)
		}
	}
	z := []float64{0.5, -0.5, 0.1, 0}
	if err := b.drawAux(rand.New(rand.NewPCG(1, 2)), env, z, aux, &p, nil); err != nil {
		t.Fatalf("finite locations: %v", err)
	}
}
