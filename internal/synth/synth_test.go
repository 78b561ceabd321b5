package synth

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPaperSet checks that Mixture at the paper's settings is the
// committed examples/data/synthetic.csv (to its six decimals).
func TestPaperSet(t *testing.T) {
	x, cl, err := Mixture(100, 2, 4, 2011)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../examples/data/synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	i := 0
	for sc.Scan() {
		p := strings.Split(sc.Text(), ",")
		if want := string(rune('a'+cl[i])) + strconv.Itoa(i+1); p[0] != want {
			t.Fatalf("row %d: label %s, cluster %s", i+1, p[0], want)
		}
		for j := range 2 {
			v, _ := strconv.ParseFloat(p[j+1], 64)
			if !(math.Abs(v-x[i*2+j]) <= 5e-7) {
				t.Fatalf("row %d col %d: file %v, Mixture %v", i+1, j, v, x[i*2+j])
			}
		}
		i++
	}
	if i != 100 {
		t.Fatalf("%d rows in the file", i)
	}
}

// TestMixtureMoments checks the clusters' means and variances in ten
// dimensions: the points of each cluster scatter about a common centre
// with variance 1/8 per dimension (within 4 standard errors).
func TestMixtureMoments(t *testing.T) {
	n, d, k := 20000, 10, 5
	x, cl, err := Mixture(n, d, k, 3)
	if err != nil {
		t.Fatal(err)
	}
	for c := range k {
		for j := range d {
			var s, s2, m float64
			for i := range n {
				if cl[i] == c {
					s += x[i*d+j]
					s2 += x[i*d+j] * x[i*d+j]
					m++
				}
			}
			mean := s / m
			v := s2/m - mean*mean
			// Var of the sample variance of a Normal: 2σ⁴/(m-1).
			if se := math.Sqrt(2/(m-1)) / 8; !(math.Abs(v-0.125) <= 4*se) {
				t.Errorf("cluster %d dim %d: variance %v, want 0.125 ± %v", c, j, v, 4*se)
			}
		}
	}
	if _, _, err := Mixture(0, 2, 4, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}

// TestPaperCentres checks the cluster means at the paper's settings
// against its centres (±1, ±1) (within 4 standard errors, sd √(1/8)/√m).
func TestPaperCentres(t *testing.T) {
	n := 20000
	x, cl, err := Mixture(n, 2, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	centres := [][]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}}
	for c, want := range centres {
		for j := range 2 {
			var s, m float64
			for i := range n {
				if cl[i] == c {
					s += x[i*2+j]
					m++
				}
			}
			if se := math.Sqrt(1.0 / 8 / m); !(math.Abs(s/m-want[j]) <= 4*se) {
				t.Errorf("cluster %d dim %d: mean %v, want %v ± %v", c, j, s/m, want[j], 4*se)
			}
		}
	}
}
