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

// TestElemSliceRefreshError checks that the elementwise slice update stops
// with the error of a deterministic variable that cannot be evaluated (an
// index outside its array): elemTarget ignored Refresh's error, so the
// target scored stale derived values (b, evaluated after a failed) and the
// update returned no error.
func TestElemSliceRefreshError(t *testing.T) {
	const src = `
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
`
	x := dataMat(4, 1, func(i, _ int) float64 { return float64(i) })
	m := compileSource(t, "m.pydt", []byte(src), map[string]*dataset.Matrix{"X": x}, map[string]float64{"j": 1, "y": 0.5})
	sched, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(m, sched, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	step := stepNamed(t, ch, "slice(w)")
	if err := step.update(ch); err != nil {
		t.Fatalf("a valid state: %v", err)
	}
	j, _ := m.G.Lookup("j")
	ch.st.Env.Values[j.ID][0] = 3 // w[3] is outside 1..2
	err = step.update(ch)
	const want = "index 3 of w is outside 1..2"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "slice(w)") || !strings.Contains(err.Error(), "a = w[j]") {
		t.Errorf("got %v, want an error of slice(w) naming a = w[j]: %s", err, want)
	}
}

// TestElemGammaConjInvalidParams checks that the elementwise conjugate
// Gamma update stops with an error when a parameter of a reader or of the
// prior is invalid (NaN): it counted as a skipped update and the element
// stayed put silently, where the whole-array update reports the reader.
func TestElemGammaConjInvalidParams(t *testing.T) {
	const src = `
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
	for _, tt := range []struct{ name, poison, want string }{
		{"reader", "mu", "v[i, j] ~ Normal(mu, 1 / sqrt(t2[j]))"},
		{"prior", "r", "t2 ~ Gamma(3, r)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 3
			data := map[string]*dataset.Matrix{
				"X": dataMat(n, 1, func(i, _ int) float64 { return float64(i) }),
				"v": dataMat(n, 2, func(i, j int) float64 { return float64(i - j) }),
			}
			m := compileSource(t, "m.pydt", []byte(src), data, map[string]float64{"mu": 0, "r": 2})
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := NewChain(m, sched, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			step := stepNamed(t, ch, "gibbs(t2)")
			if err := step.update(ch); err != nil {
				t.Fatalf("a valid state: %v", err)
			}
			p, _ := m.G.Lookup(tt.poison)
			ch.st.Env.Values[p.ID][0] = math.NaN()
			t2, _ := m.G.Lookup("t2")
			before := append([]float64(nil), ch.st.Env.Values[t2.ID]...)
			skipped := ch.Skipped
			err = step.update(ch)
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
