package inference

import (
	"math"
	"os"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestScoreProbitEP scores the Probit model of examples/binary.pydt on
// trees of 3 leaves (D = 1): log_lik is EP's estimate, marked "EP", and
// agrees with the exact value, an orthant probability of u = z + ε ~
// N(0, σ² C + I) in closed form (1/8 + Σ_{i<j} asin ρ_ij / (4π)), within
// the accuracy EP has there (measured below 0.01; allowed 0.015).
func TestScoreProbitEP(t *testing.T) {
	src, err := os.ReadFile("../examples/binary.pydt")
	if err != nil {
		t.Fatal(err)
	}
	const prec = 0.5 // σ² = 2
	trees := []struct {
		nwk  string
		ts   [3][3]float64 // time of the lowest common ancestor
		name string
	}{
		{"((1:0.2,2:0.2):0.4,3:0.6):0.4;", [3][3]float64{{1, 0.8, 0.4}, {0.8, 1, 0.4}, {0.4, 0.4, 1}}, "binary"},
		{"(1:0.3,2:0.3,3:0.3):0.7;", [3][3]float64{{1, 0.7, 0.7}, {0.7, 1, 0.7}, {0.7, 0.7, 1}}, "star"},
	}
	for _, tc := range trees {
		for pat := range 8 {
			y := &dataset.Matrix{Rows: 3, Cols: 1, Data: make([]float64, 3), Source: "y.csv"}
			sign := make([]float64, 3)
			for i := range 3 {
				y.Data[i] = float64(pat >> i & 1)
				sign[i] = 2*y.Data[i] - 1
			}
			m := compileSource(t, "binary.pydt", src, map[string]*dataset.Matrix{"Y": y},
				map[string]float64{"alpha": 1, "beta": 0.2, "c": 1, "prec": prec})
			tr, err := pydt.ParseNewick(tc.nwk, nil)
			if err != nil {
				t.Fatal(err)
			}
			st := m.NewState()
			st.Trees = []*pydt.Tree{tr}
			s, err := m.Score(st)
			if err != nil {
				t.Fatal(err)
			}
			rho := func(i, j int) float64 {
				return sign[i] * sign[j] * tc.ts[i][j] / prec / (1/prec + 1)
			}
			want := math.Log(0.125 + (math.Asin(rho(0, 1))+math.Asin(rho(0, 2))+math.Asin(rho(1, 2)))/(4*math.Pi))
			if s.LogLikMethod != "EP" || !(math.Abs(s.LogLik-want) <= 0.015) {
				t.Errorf("%s y=%v: log_lik %v (%q), exact %v", tc.name, y.Data, s.LogLik, s.LogLikMethod, want)
			}
			h, _ := pydt.NewHarmonic(1, 0.2)
			if lt := pydt.LogPrior(tr, 1, 0.2, pydt.DivInv{C: 1}, h); s.LogTree != lt || s.LogJoint != s.LogTree+s.LogLik+s.LogHyper {
				t.Errorf("%s: log_tree %v (want %v), log_joint %v", tc.name, s.LogTree, lt, s.LogJoint)
			}
		}
	}
}
