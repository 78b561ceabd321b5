package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSmoke runs a tiny measurement: the statistics are finite, the table
// has a row per seed and a row of medians.
func TestSmoke(t *testing.T) {
	var rs []result
	for _, seed := range []uint64{1, 2} {
		r, err := run(config{Model: "../../examples/gaussian.pydt", N: 40, D: 2, Burn: 5, Sweeps: 20, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		for name, x := range map[string]float64{"ESS log lik": r.ESSLogLik, "ESS c": r.ESSC, "ESS root": r.ESSRoot,
			"mean log lik": r.MeanLogLik, "mean c": r.MeanC, "mean root": r.MeanRoot} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Errorf("seed %d: %s = %v", seed, name, x)
			}
		}
		if !(r.MeanRoot > 0 && r.MeanRoot < 1) || !(r.MeanC > 0) {
			t.Errorf("seed %d: mean root time %v, mean c %v", seed, r.MeanRoot, r.MeanC)
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	table(&b, rs)
	if lines := strings.Count(b.String(), "\n"); lines != 2+2+1 {
		t.Errorf("table of %d lines, want 5:\n%s", lines, b.String())
	}
}

// TestFourClusters checks the data: cluster i mod 4, centres (±1, ±1)
// repeated over the dimensions, variance 1/8.
func TestFourClusters(t *testing.T) {
	rows := fourClusters(newRand(3), 4000, 3)
	var sum, sq [4][3]float64
	for i, r := range rows {
		for j, x := range r {
			sum[i%4][j] += x
			sq[i%4][j] += x * x
		}
	}
	want := [4][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	for k := range 4 {
		for j := range 3 {
			m := sum[k][j] / 1000
			v := sq[k][j]/1000 - m*m
			// SE of the mean sqrt(1/8/1000) ≈ 0.011; of the variance
			// sqrt(2/64/1000) ≈ 0.0056.
			if math.Abs(m-want[k][j%2]) > 0.05 || math.Abs(v-0.125) > 0.025 {
				t.Errorf("cluster %d, dimension %d: mean %v, variance %v", k, j, m, v)
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
