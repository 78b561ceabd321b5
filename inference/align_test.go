package inference

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// TestLabelGroups: the label axes of the HMM are found from the graph:
// pi0's components (z[1] ~ Categorical(pi0)), both axes of trans (the row
// read at z[t - 1] and its components) and mu's first axis (mu[z[t], d]).
func TestLabelGroups(t *testing.T) {
	m := compileHMM(t, 6, 3, 2, func(i, j int) float64 { return float64(i) })
	gs := labelGroups(m)
	if len(gs) != 1 || gs[0].z.Name != "z" || gs[0].K != 3 {
		t.Fatalf("groups %v, want z of 3 states", gs)
	}
	want := map[string][]bool{"pi0": {true}, "trans": {true, true}, "mu": {true, false}}
	got := map[string][]bool{}
	for v, a := range gs[0].axes {
		got[v.Name] = a
	}
	if len(got) != len(want) {
		t.Errorf("label axes %v, want %v", got, want)
	}
	for n, a := range want {
		if !slices.Equal(got[n], a) {
			t.Errorf("label axes of %s: %v, want %v", n, got[n], a)
		}
	}
}

// TestAlignPlantedPermutation: draws scattered around one truth whose
// labels are permuted per chain, and switched mid-chain in chain 1, have a
// large raw R-hat for pi0 and trans; aligned, the R-hat is about 1, the
// means are the truth's (the reference draw is unpermuted) and the modal
// states are the true states.
func TestAlignPlantedPermutation(t *testing.T) {
	const T, K, C, L = 20, 3, 4, 300
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64(i) })
	cols := m.Traced()
	rng := rand.New(rand.NewPCG(1, 2))
	zTrue := make([]int, T)
	for i := range zTrue {
		zTrue[i] = (i / 3) % K
	}
	p0 := []float64{0.6, 0.3, 0.1}
	A := []float64{0.8, 0.15, 0.05, 0.1, 0.7, 0.2, 0.05, 0.25, 0.7}
	perms := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {1, 0, 2}}
	kept := make([][][]float64, len(cols))
	for i := range kept {
		kept[i] = make([][]float64, C)
	}
	lj := make([][]float64, C)
	for c := range C {
		for d := range L {
			perm := perms[c]
			if c == 0 && d >= L/2 {
				perm = []int{2, 1, 0} // switched mid-chain
			}
			lj[c] = append(lj[c], -100+rng.Float64())
			if c == 0 && d == 0 {
				lj[c][d] = 0 // the reference: unpermuted
			}
			flip := rng.IntN(T) // one element per draw off the truth
			for i, col := range cols {
				var x float64
				switch col.Var.Name {
				case "z":
					k := zTrue[col.Off]
					if col.Off == flip && !(c == 0 && d == 0) {
						k = (k + 1) % K
					}
					x = float64(perm[k] + 1)
				case "pi0":
					// element perm[k] holds state k's value
					k := slices.Index(perm, col.Off)
					x = p0[k] + 0.02*rng.NormFloat64()
				case "trans":
					j, k := slices.Index(perm, col.Off/K), slices.Index(perm, col.Off%K)
					x = A[j*K+k] + 0.02*rng.NormFloat64()
				default:
					x = rng.NormFloat64()
				}
				kept[i][c] = append(kept[i][c], x)
			}
		}
	}
	plain, info, err := summarizeTraced(m, cols, lj, kept)
	if err != nil {
		t.Fatal(err)
	}
	if info == nil || len(info.Arrays) != 1 || info.Chain != 1 || info.Draw != 1 {
		t.Fatalf("aligned %+v, want z aligned to chain 1's first draw", info)
	}
	for _, s := range plain {
		if strings.HasPrefix(s.Name, "z[") || strings.HasPrefix(s.Name, "pi0") || strings.HasPrefix(s.Name, "trans") {
			t.Errorf("label-dependent %s among the plain scalars", s.Name)
		}
		if s.Name == "occupied(z)" && s.Mean != K {
			t.Errorf("occupied(z) mean %v, want %d", s.Mean, K)
		}
	}
	if len(info.Scalars) != K+K*K {
		t.Fatalf("%d aligned scalars, want %d", len(info.Scalars), K+K*K)
	}
	raw := map[string]float64{}
	for i, col := range cols {
		if col.Var.Name == "pi0" || col.Var.Name == "trans" {
			raw[col.Name] = rhatOf(kept[i])
		}
	}
	for i, s := range info.Scalars {
		var want float64
		if i < K {
			want = p0[i]
		} else {
			want = A[i-K]
		}
		if math.Abs(s.Mean-want) > 4*0.02/math.Sqrt(C*L) {
			t.Errorf("aligned %s mean %.4f, want %.4f", s.Name, s.Mean, want)
		}
		if s.Rhat > 1.01 {
			t.Errorf("aligned %s R-hat %.3f, want about 1", s.Name, s.Rhat)
		}
	}
	if raw["pi0[1]"] < 1.5 || raw["trans[1,1]"] < 1.2 {
		t.Errorf("raw R-hat of pi0[1] %.3f, trans[1,1] %.3f: the planted switch should show", raw["pi0[1]"], raw["trans[1,1]"])
	}
	a := info.Arrays[0]
	for i, k := range a.Modal {
		if k != zTrue[i]+1 || a.ModalProb[i] < 0.8 {
			t.Errorf("z[%d]: modal state %d (prob %.3f), want %d", i+1, k, a.ModalProb[i], zTrue[i]+1)
		}
	}
	if math.Abs(a.Agreement-(1-1.0/T)) > 1e-3 {
		t.Errorf("agreement %.4f, want %.4f", a.Agreement, 1-1.0/T)
	}
}

// rhatOf is the split R-hat of draws, by the same summary the run uses.
func rhatOf(chains [][]float64) float64 {
	return diagnostics.Summarize("x", chains).Rhat
}

// TestRunHMMAligned: a short run of the HMM reports no raw per-state
// column (so its warnings cannot name z[t], pi0 or trans unaligned),
// reports pi0 and trans aligned in summary.json and the table, and writes
// the states file with one row per time point.
func TestRunHMMAligned(t *testing.T) {
	const T, K = 30, 3
	m := compileHMM(t, T, K, 1, func(i, j int) float64 { return float64((i/10)%K)*3 + 0.1*math.Sin(float64(i)) })
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 60, Chains: 2, Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Scalars {
		if strings.Contains(s.Name, "[") {
			t.Errorf("raw per-state column %s in the summary", s.Name)
		}
	}
	if res.Aligned == nil || len(res.Aligned.Scalars) != K+K*K || res.Aligned.Arrays[0].Var != "z" {
		t.Fatalf("aligned %+v, want pi0 and trans aligned with z", res.Aligned)
	}
	var b bytes.Buffer
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\nz[") || !strings.Contains(out, "label switching: the 3 states of z with pi0, trans are aligned") {
		t.Errorf("table:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "warning: split R-hat") {
			for _, s := range res.Aligned.Scalars {
				if strings.Contains(line, s.Name+",") || strings.Contains(line, s.Name+":") {
					if s.Rhat <= 1.01 {
						t.Errorf("warning names %s whose aligned R-hat is %.3f", s.Name, s.Rhat)
					}
				}
			}
		}
	}
	states, err := os.ReadFile(filepath.Join(dir, StatesFileOf("z")))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(states)), "\n"); len(rows) != T+1 || rows[0] != "t,state,prob" {
		t.Errorf("states file has %d lines, header %q", len(rows), rows[0])
	}
	if !strings.Contains(string(must(os.ReadFile(filepath.Join(dir, SummaryFile)))), `"aligned"`) {
		t.Error("summary.json has no aligned block")
	}
}
