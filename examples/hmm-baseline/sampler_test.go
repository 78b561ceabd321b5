package main

import (
	"math/rand/v2"
	"testing"

	"github.com/pydtlang/pydtlang/inference/labels"
)

// TestRecovery: on words generated from a 3-state HMM whose states emit
// disjoint words, the sampler's states match the true ones (many-to-one
// and one-to-one accuracy above 0.95 after 30 sweeps).
func TestRecovery(t *testing.T) {
	const K, V, T = 3, 12, 3000
	rng := rand.New(rand.NewPCG(1, 2))
	trans := [K][K]float64{{0.1, 0.8, 0.1}, {0.1, 0.1, 0.8}, {0.7, 0.2, 0.1}}
	truth := make([]int, T)
	w := make([]int, T)
	for i := range truth {
		if i > 0 {
			u, k := rng.Float64(), 0
			for ; k < K-1 && u >= trans[truth[i-1]][k]; k++ {
				u -= trans[truth[i-1]][k]
			}
			truth[i] = k
		}
		w[i] = truth[i]*4 + rng.IntN(4) // state k emits words 4k..4k+3
	}
	for _, fromPrior := range []bool{false, true} {
		g, err := newGibbs(w, K, V, 1, 0.1, fromPrior, rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if _, err := g.sweep(); err != nil {
				t.Fatal(err)
			}
		}
		m2o, _, err := labels.ManyToOne(g.z, K, truth, K)
		if err != nil {
			t.Fatal(err)
		}
		o2o, _, err := labels.OneToOne(g.z, K, truth, K)
		if err != nil {
			t.Fatal(err)
		}
		if m2o < 0.95 || o2o < 0.95 {
			t.Errorf("start from prior %v: accuracy many-to-one %v, one-to-one %v, want above 0.95", fromPrior, m2o, o2o)
		}
	}
	if _, err := newGibbs([]int{0, 12}, K, V, 1, 0.1, false, rng); err == nil {
		t.Error("word out of range: no error")
	}
}
