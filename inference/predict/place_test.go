package predict

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"math"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestClusterProbs checks the grouping of a hand-made mixture's
// components by cluster: with equal component densities at x, each
// cluster's probability is the sum of its components' weights.
func TestClusterProbs(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,(3:0.6,4:0.6):0.1,5:0.7):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	n12, n34, root := tr.Parent(0), tr.Parent(2), tr.Root()
	part := []int{1, 1, 2, 3, 4} // the cut at t = 0.45
	cut := pydt.TimeAt(0.45)
	w := []float64{0.1, 0.2, 0.3, 0.15, 0.25}
	mx := &Mixture{D: 1}
	for j, c := range []struct {
		node pydt.NodeID
		at   pydt.Time
	}{
		{n12, pydt.TimeAt(0.48)}, // on the edge above {1,2}, after the cut: cluster 1
		{n12, pydt.TimeAt(0.40)}, // on the same edge before the cut: new
		{n34, tr.Time(n34)},      // at {3,4}'s branch point (t = 0.4), which the cut splits: new
		{4, pydt.TimeAt(0.6)},    // on the edge above leaf 5: cluster 4
		{root, tr.Time(root)},    // at the root: new
	} {
		mx.add(math.Log(w[j]), []float64{0}, []float64{1}, c.node, c.at)
	}
	want := []float64{0.75, 0.1, 0, 0, 0.15}
	for _, x := range [][]float64{{0}, {math.NaN()}} {
		got, err := ClusterProbs(mx, tr, part, cut, x)
		if err != nil {
			t.Fatal(err)
		}
		for c := range want {
			if !(math.Abs(got[c]-want[c]) <= 1e-12) {
				t.Errorf("x = %v: P(cluster %d) = %v, want %v", x, c, got[c], want[c])
			}
		}
	}
	// Densities weigh in: with the cluster-4 component's mean moved to 3,
	// at x = 3 the other components' densities are exp(−3²/2) times its
	// own.
	mx.Mean[3] = 3
	got, err := ClusterProbs(mx, tr, part, cut, []float64{3})
	if err != nil {
		t.Fatal(err)
	}
	f := math.Exp(-4.5) // the others' density relative to the moved one
	z := 0.85*f + 0.15
	if !(math.Abs(got[4]-0.15/z) <= 1e-12) || !(math.Abs(got[0]-0.75*f/z) <= 1e-12) {
		t.Errorf("x = 3: %v, want P(4) = %v, P(new) = %v", got, 0.15/z, 0.75*f/z)
	}
	if _, err := ClusterProbs(mx, tr, []int{1, 1}, cut, []float64{0}); err == nil {
		t.Error("wrong number of labels: no error")
	}
	if _, err := ClusterProbs(&Mixture{D: 1, LogW: []float64{0}, Mean: []float64{0}, Var: []float64{1}}, tr, part, cut, []float64{0}); err == nil {
		t.Error("a mixture without placements: no error")
	}
}

// TestCutSharesOtherTree checks the sharing of a component among the
// clusters of a partition that is not the tree's own cut: on the tree
// ((1,2),(3,4)) cut at t = 0.45, a component joining below {3,4} after the
// cut has cluster mates 3 and 4, which the partition {1,2,3}, {4} puts in
// clusters 1 and 2, half each.
func TestCutSharesOtherTree(t *testing.T) {
	tr, err := pydt.ParseNewick("((1:0.5,2:0.5):0.2,(3:0.4,4:0.4):0.3):0.3;", nil)
	if err != nil {
		t.Fatal(err)
	}
	n34 := tr.Parent(2) // at t = 0.6
	mx := &Mixture{D: 1}
	mx.add(math.Log(0.25), []float64{0}, []float64{1}, n34, pydt.TimeAt(0.5)) // above {3,4}, after the cut
	mx.add(math.Log(0.25), []float64{0}, []float64{1}, 0, pydt.TimeAt(0.7))   // above leaf 1
	mx.add(math.Log(0.5), []float64{0}, []float64{1}, n34, pydt.TimeAt(0.4))  // before the cut: new
	got, err := ClusterProbs(mx, tr, []int{1, 1, 1, 2}, pydt.TimeAt(0.45), []float64{math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.25 + 0.125, 0.125}
	for c := range want {
		if !(math.Abs(got[c]-want[c]) <= 1e-12) {
			t.Errorf("P(cluster %d) = %v, want %v", c, got[c], want[c])
		}
	}
}

// TestPlaceRowsAveragesTrees checks PlaceRows on a hand-made run of two
// rows whose two kept trees, (1,2) branching at t = 0.5 and at t = 0.8,
// have different c, for the Gaussian and the Probit model. A row with
// every entry missing has the same predictive density under each tree, so
// its cluster probabilities are the plain average over the trees of the
// generative process's: the new point diverges from the root edge before
// the cut at t = 0.3 with probability 1 − (1 − 0.3)^(c Γ(2−β)/Γ(3+α))
// (a new cluster), and otherwise joins (1,2), whose rows the partition
// {1}, {2} puts in clusters 1 and 2, half each. An observed row weighs the
// trees by its predictive density under each.
func TestPlaceRowsAveragesTrees(t *testing.T) {
	const alpha, beta = 0.5, 0.2
	cs := []float64{1, 3}
	noDiv := func(c float64) float64 {
		lg1, _ := math.Lgamma(2 - beta) // the rate a(t) Γ(m−β)/Γ(m+1+α), m = 2
		lg2, _ := math.Lgamma(3 + alpha)
		return math.Pow(0.7, c*math.Exp(lg1-lg2))
	}
	pNew := 1 - (noDiv(cs[0])+noDiv(cs[1]))/2
	for _, c := range []struct {
		name, src string
		data      []float64
		row       []float64
	}{
		{"Gaussian", gaussianSrc, []float64{0, 1}, []float64{0.2}},
		{"Probit", probitSrc, []float64{0, 1}, []float64{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := compile(t, c.src, &dataset.Matrix{Rows: 2, Cols: 1, Data: c.data, Source: "x.csv"})
			dir := t.TempDir()
			if _, err := inference.Run(context.Background(), m, inference.Config{Iters: 4, Chains: 1, Seed: 5, Out: dir}); err != nil {
				t.Fatal(err)
			}
			trace := "chain,iteration,log_joint,log_lik,alpha,beta,c,prec\n"
			for i, cv := range cs {
				trace += "1," + strconv.Itoa(i+3) + ",0,0,0.5,0.2," + strconv.FormatFloat(cv, 'g', -1, 64) + ",1\n"
			}
			trees := "(1:0.5,2:0.5):0.5;\n(1:0.2,2:0.2):0.8;\n"
			if err := os.WriteFile(filepath.Join(dir, "trace.csv"), []byte(trace), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "trees-1.nwk"), []byte(trees), 0o644); err != nil {
				t.Fatal(err)
			}
			opt := RunOptions{Trees: -1, Nodes: 400, ProbitBurn: 5, ProbitDraws: 2, Seed: 3}
			part := []int{1, 2}
			got, err := PlaceRows(m, dir, part, pydt.TimeAt(0.3), [][]float64{{math.NaN()}, c.row}, opt)
			if err != nil {
				t.Fatal(err)
			}
			// Quadrature puts each node's mass at one time, so the cut
			// splits the root edge's mass to within about one node's.
			want := []float64{pNew, (1 - pNew) / 2, (1 - pNew) / 2}
			for k := range want {
				if !(math.Abs(got[0][k]-want[k]) <= 5e-3) {
					t.Errorf("missing row: P(cluster %d) = %v, want %v", k, got[0][k], want[k])
				}
			}
			// The observed row (Gaussian: no random refresh): each tree
			// alone, in a run of its own, gives P(c | x, T) and p(x | T)
			// (PredictRun); the average weighs them by p(x | T).
			if c.name != "Gaussian" {
				return
			}
			want = make([]float64, 3)
			var ws float64
			for i, cv := range cs {
				one := t.TempDir()
				for _, f := range []string{"run.json", "trace.csv", "trees-1.nwk"} {
					b, err := os.ReadFile(filepath.Join(dir, f))
					if err != nil {
						t.Fatal(err)
					}
					switch f {
					case "trace.csv":
						b = []byte(strings.SplitAfter(trace, "\n")[0] + "1,3,0,0,0.5,0.2," + strconv.FormatFloat(cv, 'g', -1, 64) + ",1\n")
					case "trees-1.nwk":
						b = []byte(strings.SplitAfter(trees, "\n")[i])
					}
					if err := os.WriteFile(filepath.Join(one, f), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p, err := PlaceRows(m, one, part, pydt.TimeAt(0.3), [][]float64{c.row}, opt)
				if err != nil {
					t.Fatal(err)
				}
				pr, err := PredictRun(m, one, [][]float64{c.row}, opt)
				if err != nil {
					t.Fatal(err)
				}
				w := math.Exp(pr.LogDensity[0])
				ws += w
				for k := range want {
					want[k] += w * p[0][k]
				}
			}
			for k := range want {
				if !(math.Abs(got[1][k]-want[k]/ws) <= 1e-9) {
					t.Errorf("observed row: P(cluster %d) = %v, want %v", k, got[1][k], want[k]/ws)
				}
			}
			var sum float64
			for _, p := range got[1] {
				sum += p
			}
			if !(math.Abs(sum-1) <= 1e-9) {
				t.Errorf("observed row: probabilities %v sum to %v", got[1], sum)
			}
		})
	}
}

// TestTreeAverage checks PlaceRows' average over trees: weights
// exp(lt) normalised (two trees at log densities log 1 and log 3 weigh
// 1/4 and 3/4), unchanged by a common shift of 1000 nats, and an error,
// not NaN probabilities, when the total density is NaN, zero or infinite.
func TestTreeAverage(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	pc := [][]float64{{0, 1, 0}, {0.5, 0, 0.5}}
	want := []float64{0.375, 0.25, 0.375}
	for _, shift := range []float64{0, -1000, 1000} {
		got, err := treeAverage([]float64{shift, shift + math.Log(3)}, pc, 2)
		if err != nil {
			t.Fatalf("shift %v: %v", shift, err)
		}
		for c := range want {
			if !(math.Abs(got[c]-want[c]) <= 1e-12) {
				t.Errorf("shift %v: cluster %d: %v, want %v", shift, c, got[c], want[c])
			}
		}
	}
	for _, lt := range [][]float64{{nan, 0}, {-inf, -inf}, {inf, 0}} {
		got, err := treeAverage(lt, pc, 2)
		if err == nil || !strings.Contains(err.Error(), "total density over 2 trees") {
			t.Errorf("log densities %v: %v, error %v; want an error naming the total", lt, got, err)
		}
	}
}
