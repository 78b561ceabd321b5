package inference

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// stepNamed returns the chain's step called name.
func stepNamed(t *testing.T, ch *Chain, name string) Updater {
	t.Helper()
	for _, s := range ch.sched.Steps {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no step %s:\n%s", name, ch.sched.Explain())
	return nil
}

// TestSliceRefreshError checks that the slice updates stop with the error
// of a deterministic variable that cannot be evaluated (an index outside
// its array), naming the step and the variable. elemTarget ignored
// Refresh's error, so the elementwise update scored stale derived values
// (b, evaluated after a failed) and returned no error; the scalar update
// (set) now returns it once its sampler is done, where before it came
// back only through notFinite's check of the environment.
func TestSliceRefreshError(t *testing.T) {
	for _, tt := range []struct{ name, src, step, want string }{
		{"elementwise", `
dim N, D
data X : real[N, D]
data j : real
j ~ Normal(0, 1)
param w : pos[2]
w ~ Gamma(2, 1)
a = w[j]
b = w[1] * 2
data y : real
y ~ Normal(b, 1)
X ~ PYDT(1, 0.5, 1, 1)
`, "slice(w)", "a = w[j]: index 3 of w is outside 1..2"},
		{"scalar", `
dim N, D
data X : real[N, D]
data u : real[2]
u ~ Normal(0, 1)
data j : real
j ~ Normal(0, 1)
a = u[j]
s ~ Gamma(2, 1)
b = s * 2
data y : real
y ~ Normal(b, 1)
X ~ PYDT(1, 0.5, 1, 1)
`, "slice(s)", "a = u[j]: index 3 of u is outside 1..2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := map[string]*dataset.Matrix{
				"X": dataMat(4, 1, func(i, _ int) float64 { return float64(i) }),
				"u": dataMat(2, 1, func(i, _ int) float64 { return float64(i) }),
			}
			if !strings.Contains(tt.src, "data u") {
				delete(data, "u")
			}
			m := compileSource(t, "m.pydt", []byte(tt.src), data, map[string]float64{"j": 1, "y": 0.5})
			ch := newTestChain(t, m)
			step := stepNamed(t, ch, tt.step)
			if err := step.update(ch); err != nil {
				t.Fatalf("a valid state: %v", err)
			}
			j, _ := m.G.Lookup("j")
			ch.st.Env.Values[j.ID][0] = 3 // outside 1..2
			err := step.update(ch)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.step) {
				t.Errorf("got %v, want an error of %s: %s", err, tt.step, tt.want)
			}
		})
	}
}

// newTestChain returns a chain of m with its default schedule.
func newTestChain(t *testing.T, m *Model) *Chain {
	t.Helper()
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestGammaConjInvalidParams checks that the conjugate Gamma updates stop
// with an error when a parameter of a reader or of the prior is invalid
// (NaN, +Inf). The elementwise update counted it as a skipped update and
// the element stayed put silently; the whole-array update checked only its
// readers, so an invalid prior was skipped silently too.
func TestGammaConjInvalidParams(t *testing.T) {
	const elem = `
dim N, D
data X : real[N, D]
data v : real[N, 2]
data mu : real
mu ~ Normal(0, 1)
data r : pos
r ~ Gamma(1, 1)
param t2 : pos[2]
t2 ~ Gamma(3, r)
for i in 1:N, j in 1:2 {
  v[i, j] ~ Normal(mu, 1 / sqrt(t2[j]))
}
X ~ PYDT(1, 0.5, 1, 1)
`
	const whole = `
dim N, D
data X : real[N, D]
data v : real[N, 2]
data mu : real
mu ~ Normal(0, 1)
data r : pos
r ~ Gamma(1, 1)
t2 ~ Gamma(3, r)
for i in 1:N, j in 1:2 {
  v[i, j] ~ Normal(mu, 1 / sqrt(t2))
}
X ~ PYDT(1, 0.5, 1, 1)
`
	for _, tt := range []struct {
		name, src, poison string
		bad               float64
		want              string
	}{
		{"elementwise reader", elem, "mu", math.NaN(), "v[i, j] ~ Normal(mu, 1 / sqrt(t2[j]))"},
		{"elementwise prior", elem, "r", math.NaN(), "t2 ~ Gamma(3, r)"},
		{"whole reader", whole, "mu", math.NaN(), "v[i, j] ~ Normal(mu, 1 / sqrt(t2))"},
		{"whole prior NaN", whole, "r", math.NaN(), "t2 ~ Gamma(3, r)"},
		{"whole prior +Inf", whole, "r", math.Inf(1), "t2 ~ Gamma(3, r)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 3
			data := map[string]*dataset.Matrix{
				"X": dataMat(n, 1, func(i, _ int) float64 { return float64(i) }),
				"v": dataMat(n, 2, func(i, j int) float64 { return float64(i - j) }),
			}
			m := compileSource(t, "m.pydt", []byte(tt.src), data, map[string]float64{"mu": 0, "r": 2})
			ch := newTestChain(t, m)
			step := stepNamed(t, ch, "gibbs(t2)")
			if err := step.update(ch); err != nil {
				t.Fatalf("a valid state: %v", err)
			}
			p, _ := m.G.Lookup(tt.poison)
			ch.st.Env.Values[p.ID][0] = tt.bad
			t2, _ := m.G.Lookup("t2")
			before := append([]float64(nil), ch.st.Env.Values[t2.ID]...)
			skipped := ch.Skipped
			err := step.update(ch)
			if err == nil || !strings.Contains(err.Error(), "gibbs(t2)") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v (skipped %d→%d, t2 %v→%v), want an error of gibbs(t2) naming %s",
					err, skipped, ch.Skipped, before, ch.st.Env.Values[t2.ID], tt.want)
			}
		})
	}
}

// BenchmarkElemUpdates times the elementwise updates of a latent vector w
// (slice sampling) and a precision per column t2 (conjugate Gamma), in
// models with k deterministic variables that do not read them.
func BenchmarkElemUpdates(b *testing.B) {
	for _, k := range []int{5, 40} {
		var dets strings.Builder
		dets.WriteString("s1 = mu * 2\n")
		for i := 2; i <= k; i++ {
			fmt.Fprintf(&dets, "s%d = s%d / %d + 0.1\n", i, i-1, i)
		}
		src := `
dim N, D
data X : real[N, D]
data y : real[N]
data v : real[N, 4]
param w : real[N]
param t2 : pos[4]
mu ~ Normal(0, 1)
` + dets.String() + fmt.Sprintf("w ~ Normal(mu, exp(s%d))\n", k) + `
for i in 1:N {
  y[i] ~ Normal(w[i], 1)
}
t2 ~ Gamma(3, 2)
for i in 1:N, j in 1:4 {
  v[i, j] ~ Normal(w[i], 1 / sqrt(t2[j]))
}
X ~ PYDT(1, 0.5, 1, 1)
`
		const n = 200
		data := map[string]*dataset.Matrix{
			"X": dataMat(n, 1, func(i, _ int) float64 { return float64(i % 7) }),
			"y": dataMat(n, 1, func(i, _ int) float64 { return math.Sin(float64(i)) }),
			"v": dataMat(n, 4, func(i, j int) float64 { return math.Cos(float64(i + j)) }),
		}
		m := compileSource(b, "bench.pydt", []byte(src), data, nil)
		sched, err := NewSchedule(m)
		if err != nil {
			b.Fatal(err)
		}
		ch, err := NewChain(m, sched, 1, 2)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"slice(w)", "gibbs(t2)"} {
			var step Updater
			for _, s := range sched.Steps {
				if s.Name() == name {
					step = s
				}
			}
			if step == nil {
				b.Fatalf("no %s:\n%s", name, sched.Explain())
			}
			b.Run(fmt.Sprintf("%s/dets=%d", name, k), func(b *testing.B) {
				for range b.N {
					if err := step.update(ch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
