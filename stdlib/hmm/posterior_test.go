package hmm

import (
	"math/rand/v2"
	"testing"
)

// TestLogDirichletPost checks that the posterior row is the draw of
// LogDirichlet with parameters prior + counts written out by hand (same
// seed, same draws), and that bad input is an error.
func TestLogDirichletPost(t *testing.T) {
	counts := []int{0, 3, 1}
	got := make([]float64, 3)
	if err := LogDirichletPost(rand.New(rand.NewPCG(1, 2)), 0.5, counts, make([]float64, 5), got); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 3)
	if err := LogDirichlet(rand.New(rand.NewPCG(1, 2)), []float64{0.5, 3.5, 1.5}, want); err != nil {
		t.Fatal(err)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("row[%d] = %v, want %v", k, got[k], want[k])
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		prior   float64
		scratch int
		dst     int
	}{
		{"short scratch", 0.5, 2, 3},
		{"short dst", 0.5, 3, 2},
		{"zero prior with a zero count", 0, 3, 3},
	} {
		if err := LogDirichletPost(rng, tc.prior, counts, make([]float64, tc.scratch), make([]float64, tc.dst)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
