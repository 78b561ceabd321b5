package inference

import (
	"errors"
	"strings"
	"testing"
)

// Latent arrays other than the leaf locations are sampled but not written
// to trace.csv; tools that rebuild draws from the trace must refuse them by
// name instead of reading them as 0 (predict stopped with "variance of
// dimension 1 = +Inf").
func TestCheckTraced(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the arrays named, "" for none
	}{
		{"scalars only", `
dim N, D
data X : real[N, D]
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(1, 0.5, c, 1 / prec)
`, ""},
		{"latent leaves are not untraced", `
dim N, D
data X : real[N, D]
param Z : real[N, D]
Z ~ PYDT(1, 0.5, 1, 1)
X ~ Normal(Z, 0.5)
`, ""},
		{"per-dimension precision", `
dim N, D
data X : real[N, D]
param prec : pos[D]
prec ~ Gamma(1, 1)
X ~ PYDT(1, 0.5, 1, 1 / prec)
`, "prec[2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := compileModel(t, tc.src, 3, 2, nil)
			err := m.CheckTraced("predict")
			if tc.want == "" {
				if err != nil || len(m.UntracedLatent()) != 0 {
					t.Fatalf("CheckTraced = %v, UntracedLatent = %v; want none", err, m.UntracedLatent())
				}
				return
			}
			if !errors.Is(err, ErrUntraced) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "predict needs") {
				t.Fatalf("CheckTraced = %v; want ErrUntraced naming %s", err, tc.want)
			}
		})
	}
}
