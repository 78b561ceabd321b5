package cluster

import (
	"math"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// handTree has a root at t = 0.3 with three children: the clade {1, 2}
// splitting at t = 0.5, the clade {3, 4} at t = 0.4, and leaf 5.
const handTree = "((1:0.5,2:0.5):0.2,(3:0.6,4:0.6):0.1,5:0.7):0.3;"

func parse(t *testing.T, s string) *pydt.Tree {
	t.Helper()
	tr, err := pydt.ParseNewick(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestCutAtTime(t *testing.T) {
	tr := parse(t, handTree)
	for _, c := range []struct {
		t    float64
		want Partition
	}{
		{0, Partition{1, 1, 1, 1, 1}},
		{0.29, Partition{1, 1, 1, 1, 1}},
		{0.3, Partition{1, 1, 2, 2, 3}}, // a branch point at t is split
		{0.39, Partition{1, 1, 2, 2, 3}},
		{0.45, Partition{1, 1, 2, 3, 4}},
		{0.5, Partition{1, 2, 3, 4, 5}},
		{1, Partition{1, 2, 3, 4, 5}},
	} {
		got, err := CutAtTime(tr, c.t)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("t = %v: got %v, want %v", c.t, got, c.want)
		}
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := CutAtTime(tr, bad); err == nil {
			t.Errorf("t = %v: no error", bad)
		}
	}
}

func TestCutK(t *testing.T) {
	tr := parse(t, handTree)
	tie := parse(t, "((1:0.5,2:0.5):0.2,(3:0.5,4:0.5):0.2):0.3;") // two branch points at t = 0.5
	for _, c := range []struct {
		name  string
		tr    *pydt.Tree
		k     int
		want  Partition
		time  float64
		exact bool
	}{
		{"one", tr, 1, Partition{1, 1, 1, 1, 1}, 0, true},
		{"multifurcation jumps past 2", tr, 2, Partition{1, 1, 2, 2, 3}, 0.3, false},
		{"three", tr, 3, Partition{1, 1, 2, 2, 3}, 0.3, true},
		{"four", tr, 4, Partition{1, 1, 2, 3, 4}, 0.4, true},
		{"all", tr, 5, Partition{1, 2, 3, 4, 5}, 0.5, true},
		{"tie: two", tie, 2, Partition{1, 1, 2, 2}, 0.3, true},
		{"tie jumps past 3", tie, 3, Partition{1, 2, 3, 4}, 0.5, false},
	} {
		got, err := CutK(c.tr, c.k)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got.Partition, c.want) || got.Exact != c.exact || !(math.Abs(got.Time-c.time) <= 1e-12) {
			t.Errorf("%s: got %v at %v (exact %v), want %v at %v (exact %v)",
				c.name, got.Partition, got.Time, got.Exact, c.want, c.time, c.exact)
		}
	}
	for _, k := range []int{0, -1, 6} {
		if _, err := CutK(tr, k); err == nil {
			t.Errorf("k = %d: no error", k)
		}
	}
	if _, err := CutK(pydt.New(3), 2); err == nil {
		t.Error("a tree without a root: no error")
	}
}

func TestAdjustedRand(t *testing.T) {
	for _, c := range []struct {
		a, b Partition
		want float64
	}{
		// By hand: pairs together in both 1, in a 1, in b 2, of 6:
		// (1 − 1·2/6)/((1 + 2)/2 − 1·2/6) = 4/7 (scikit-learn's
		// adjusted_rand_score([0,0,1,2], [0,0,1,1]) = 0.5714...).
		{Partition{1, 1, 2, 3}, Partition{1, 1, 2, 2}, 4.0 / 7},
		{Partition{1, 1, 2, 2}, Partition{2, 2, 1, 1}, 1},
		{Partition{1, 1, 2, 2}, Partition{1, 2, 2, 2}, 0},
		{Partition{1, 2, 3}, Partition{1, 2, 3}, 1},
		{Partition{1, 1, 1}, Partition{1, 1, 1}, 1},
		{Partition{1, 1, 1}, Partition{1, 2, 3}, 0},
	} {
		got, err := AdjustedRand(c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(got-c.want) <= 1e-12) {
			t.Errorf("ARI(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if _, err := AdjustedRand(Partition{1}, Partition{1, 2}); err == nil {
		t.Error("different lengths: no error")
	}
}

// TestPosteriorCut cuts a sample of three hand-made trees at K = 2: two
// cut as {1,2}{3,4} (A), one as {1}{2,3,4} (B). Co-clustering: P12 = 2/3,
// P34 = 1, P23 = P24 = 1/3, P13 = P14 = 0. Binder loss per pair: A
// (1/3 + 0 + 0 + 0 + 1/3 + 1/3)/6 = 1/6, B (2/3 + 2/3 + 0 + 2/3 + 0 + 0)/6
// = 1/3, one cluster C (1/3 + 1 + 1 + 2/3 + 2/3 + 0)/6 = 11/18. ARI(A, B) =
// 0 (by hand as in TestAdjustedRand), so E[ARI] is 2/3 for A and 1/3 for B.
func TestPosteriorCut(t *testing.T) {
	a := parse(t, "((1:0.4,2:0.4):0.3,(3:0.3,4:0.3):0.4):0.3;")
	b := parse(t, "(1:0.8,(2:0.5,(3:0.3,4:0.3):0.2):0.3):0.2;")
	src := func(fn func(*pydt.Tree) error) error {
		for _, tr := range []*pydt.Tree{a, b, a} {
			if err := fn(tr); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := CutTrees(src, 4, AtK(2))
	if err != nil {
		t.Fatal(err)
	}
	if s.Trees() != 3 || len(s.Distinct()) != 2 {
		t.Fatalf("%d trees, %d distinct cuts; want 3, 2", s.Trees(), len(s.Distinct()))
	}
	want := [4][4]float64{{1, 2. / 3, 0, 0}, {2. / 3, 1, 1. / 3, 1. / 3}, {0, 1. / 3, 1, 1}, {0, 1. / 3, 1, 1}}
	for i := range 4 {
		for j := range 4 {
			if got := s.Together(i, j); !(math.Abs(got-want[i][j]) <= 1e-12) {
				t.Errorf("P(%d, %d) = %v, want %v", i+1, j+1, got, want[i][j])
			}
		}
	}
	A, B, C := Partition{1, 1, 2, 2}, Partition{1, 2, 2, 2}, Partition{1, 1, 1, 1}
	for _, c := range []struct {
		p           Partition
		binder, ari float64
	}{{A, 1. / 6, 2. / 3}, {B, 1. / 3, 1. / 3}, {C, 11. / 18, 0}} {
		bl, err := s.ExpectedBinder(c.p)
		if err != nil {
			t.Fatal(err)
		}
		ar, err := s.ExpectedARI(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(bl-c.binder) <= 1e-12) || !(math.Abs(ar-c.ari) <= 1e-12) {
			t.Errorf("%v: Binder %v, ARI %v; want %v, %v", c.p, bl, ar, c.binder, c.ari)
		}
	}
	for _, loss := range []Loss{Binder, ARI} {
		ch, err := s.Best(loss, C, Partition{2, 2, 1, 1})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ch.Partition, A) || ch.Candidates != 3 || ch.FromExtra {
			t.Errorf("%v: chose %v of %d (extra %v), want %v of 3", loss, ch.Partition, ch.Candidates, ch.FromExtra, A)
		}
	}
	// An extra candidate can beat every sampled cut: cuts {1,2}{3},
	// {1}{2,3}, {1,3}{2} give every pair P = 1/3, so each cut loses
	// (2/3 + 1/3 + 1/3)/3 = 4/9 and the singletons (1/3·3)/3 = 1/3.
	three := []Partition{{1, 1, 2}, {1, 2, 2}, {1, 2, 1}}
	s3, err := CutTrees(sliceSource(pydt.New(3), three), 3, sliceCutter(three))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s3.Best(Binder, Partition{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Partition, Partition{1, 2, 3}) || !ch.FromExtra || !(math.Abs(ch.ExpectedBinder-1./3) <= 1e-12) {
		t.Errorf("chose %v (extra %v, loss %v), want the singletons (extra, 1/3)", ch.Partition, ch.FromExtra, ch.ExpectedBinder)
	}
	if _, err := s.ExpectedBinder(Partition{1, 2}); err == nil {
		t.Error("a partition of the wrong length: no error")
	}
}

// TestExpectedBinderByPairs checks ExpectedBinder against the mean, over
// the sampled cuts, of the fraction of pairs on which two partitions
// disagree, counted pair by pair, on random partitions.
func TestExpectedBinderByPairs(t *testing.T) {
	parts := []Partition{{1, 1, 2, 3, 3, 1}, {1, 2, 2, 2, 3, 3}, {1, 1, 1, 1, 1, 2}, {1, 1, 2, 3, 3, 1}, {1, 2, 3, 4, 5, 6}}
	s, err := CutTrees(sliceSource(pydt.New(6), parts), 6, sliceCutter(parts))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(parts, Partition{1, 1, 1, 2, 2, 2}) {
		var want float64
		for _, q := range parts {
			d := 0
			for a := range 6 {
				for b := a + 1; b < 6; b++ {
					if (p[a] == p[b]) != (q[a] == q[b]) {
						d++
					}
				}
			}
			want += float64(d) / 15
		}
		want /= float64(len(parts))
		got, err := s.ExpectedBinder(p)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(got-want) <= 1e-12) {
			t.Errorf("%v: %v, want %v", p, got, want)
		}
	}
}

// sliceSource replays tr once per partition of parts.
func sliceSource(tr *pydt.Tree, parts []Partition) func(func(*pydt.Tree) error) error {
	return func(fn func(*pydt.Tree) error) error {
		for range parts {
			if err := fn(tr); err != nil {
				return err
			}
		}
		return nil
	}
}

// sliceCutter returns the partitions of parts in turn, whatever the tree,
// so that CutTrees' counting is tested on chosen partitions.
func sliceCutter(parts []Partition) Cutter {
	i := 0
	return func(*pydt.Tree) (Partition, error) {
		i++
		return parts[(i-1)%len(parts)], nil
	}
}
