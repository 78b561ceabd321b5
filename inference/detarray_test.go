package inference

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// detArrayModel defines the deterministic array m element by element; the
// data y[k] = 1 + 2 k pin m[k] = mu0 + k * step, so the posterior of
// (mu0, step) is near (1, 2) (least squares; the priors are vague) only if
// the updates of mu0 and step see m recomputed. Likewise u[k] = k pins
// n[k] = 2 a[k], an element of a deterministic array read from an
// element of the latent array a, so a[k] is near k / 2.
const detArrayModel = `
dim N, D
data X : real[N, D]
const K = 4
data y : real[K]
mu0 ~ Normal(0, 10)
step ~ Normal(0, 10)
param m : real[K]
for k in 1:K {
  m[k] = mu0 + k * step
}
for k in 1:K {
  y[k] ~ Normal(m[k], 0.1)
}
data u : real[K]
param a : real[K]
param n : real[K]
for k in 1:K {
  a[k] ~ Normal(0, 10)
  n[k] = 2 * a[k]
  u[k] ~ Normal(n[k], 0.1)
}
X ~ PYDT(1, 0.5, 1, 1)
`

// TestDeterministicArrayRun: a run traces every element of a deterministic
// array, each equal to its formula at every draw, and the parameters it
// reads are updated against the data that read it: the posterior means of
// mu0 and step are the least-squares line through y, 1 and 2 (posterior
// sds 0.12 and 0.045), and of a[k] is k / 2 (sd 0.05); the tolerances are
// over 4 Monte Carlo standard errors of the draws, or 4 batch-means
// standard errors if those are larger.
func TestDeterministicArrayRun(t *testing.T) {
	x := dataMat(4, 1, func(i, j int) float64 { return float64(i) })
	y := dataMat(4, 1, func(i, j int) float64 { return 1 + 2*float64(i+1) })
	u := dataMat(4, 1, func(i, j int) float64 { return float64(i + 1) })
	m := compileSource(t, "detarray.pydt", []byte(detArrayModel), map[string]*dataset.Matrix{"X": x, "y": y, "u": u}, nil)
	var names []string
	for _, c := range m.Traced() {
		names = append(names, c.Name)
	}
	if want := []string{"mu0", "step", "a[1]", "a[2]", "a[3]", "a[4]", "m[1]", "m[2]", "m[3]", "m[4]", "n[1]", "n[2]", "n[3]", "n[4]"}; !slices.Equal(names, want) {
		t.Fatalf("Traced = %v, want %v", names, want)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 400, Burn: 100, Chains: 1, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	col := traceColumns(t, dir)
	mu0, step := col("mu0"), col("step")
	if len(mu0) < 100 {
		t.Fatalf("only %d draws", len(mu0))
	}
	for k := 1; k <= 4; k++ {
		for i, got := range col("m[" + strconv.Itoa(k) + "]") {
			if want := mu0[i] + float64(k)*step[i]; !(math.Abs(got-want) <= 1e-9*(1+math.Abs(want))) {
				t.Fatalf("draw %d: m[%d] = %v, want mu0 + %d step = %v", i+1, k, got, k, want)
			}
		}
	}
	for _, c := range []struct {
		name      string
		xs        []float64
		want, tol float64
	}{{"mu0", mu0, 1, 0.1}, {"step", step, 2, 0.04},
		{"a[1]", col("a[1]"), 0.5, 0.03}, {"a[4]", col("a[4]"), 2, 0.03}} {
		mean, _ := meanSE(c.xs)
		if se := batchSE(c.xs); !(math.Abs(mean-c.want) <= max(c.tol, 4*se)) {
			t.Errorf("%s: posterior mean %.4f (batch se %.4f), want %v", c.name, mean, se, c.want)
		}
	}
}
