package inference

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// perdimModel is the source of examples/gaussian-perdim.pydt: a latent
// array prec[D].
func perdimModel(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile("../examples/gaussian-perdim.pydt")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// matrixModel has a latent matrix w[2, 3] whose elements have priors
// centred far apart (w[i, j] near 10 i + j), so a column read from the
// wrong element shows in its mean.
const matrixModel = `
dim N, D
data X : real[N, D]
param w : real[2, 3]
X ~ PYDT(1, 0.5, 1, 1)
for i in 1:2, j in 1:3 {
  w[i, j] ~ Normal(10 * i + j, 0.1)
}
`

// TestTraced: trace.csv's columns are the stochastic scalars, then every
// element of the latent arrays other than the leaf locations, named in the
// language's 1-based row-major indexing (prec[2], w[1,3]).
func TestTraced(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"scalars only", `
dim N, D
data X : real[N, D]
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
X ~ PYDT(1, 0.5, c, 1 / prec)
`, []string{"c", "prec"}},
		{"latent leaves are not traced", `
dim N, D
data X : real[N, D]
param Z : real[N, D]
Z ~ PYDT(1, 0.5, 1, 1)
X ~ Normal(Z, 0.5)
`, nil},
		{"per-dimension precision", perdimModel(t), []string{"alpha", "beta", "c", "prec[1]", "prec[2]"}},
		{"matrix", matrixModel, []string{"w[1,1]", "w[1,2]", "w[1,3]", "w[2,1]", "w[2,2]", "w[2,3]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := compileModel(t, tc.src, 3, 2, nil)
			var got []string
			for k, c := range m.Traced() {
				got = append(got, c.Name)
				if !c.Var.Scalar() && c.Off != k-len(m.Scalars()) {
					t.Errorf("%s: offset %d", c.Name, c.Off)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Traced = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLatentArrayTraced: a run writes every element of a latent matrix to
// trace.csv under its own name (each column's mean is near its element's
// prior mean 10 i + j, as nothing else informs w) and summarises it.
func TestLatentArrayTraced(t *testing.T) {
	x := dataMat(4, 1, func(i, j int) float64 { return float64(i) })
	m := compileSource(t, "matrix.pydt", []byte(matrixModel), map[string]*dataset.Matrix{"X": x}, nil)
	dir := t.TempDir()
	res, err := Run(context.Background(), m, Config{Iters: 200, Burn: 50, Chains: 2, Seed: 1, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	col := traceColumns(t, dir)
	for i := 1; i <= 2; i++ {
		for j := 1; j <= 3; j++ {
			name := "w[" + strconv.Itoa(i) + "," + strconv.Itoa(j) + "]"
			mean, _ := meanSE(col(name))
			// The draws are exact prior draws (sd 0.1); 0.05 is over 7
			// standard errors of the mean of 300 of them.
			if want := float64(10*i + j); !(math.Abs(mean-want) <= 0.05) {
				t.Errorf("%s: mean %.4f, want near %v", name, mean, want)
			}
			if !slices.ContainsFunc(res.Scalars, func(s diagnostics.Summary) bool { return s.Name == name }) {
				t.Errorf("summary has no diagnostics for %s", name)
			}
		}
	}
}

// TestPerDimensionRunResumesExactly: with prec[D] in the trace, an
// interrupted and resumed run is byte for byte the uninterrupted one.
func TestPerDimensionRunResumesExactly(t *testing.T) {
	x := dataMat(5, 2, func(i, j int) float64 { return float64(i%2)*2 + float64(j) - 0.3*float64(i) })
	m := compileSource(t, "perdim.pydt", []byte(perdimModel(t)), map[string]*dataset.Matrix{"X": x}, nil)
	checkDeterministicAndResumable(t, m)
}

// TestSummarizeLatentArray: runs of chains 1 and 2 of a design merge into
// the summary of the two-chain run, the latent matrix's elements included.
func TestSummarizeLatentArray(t *testing.T) {
	src := copyDir(t, filepath.Join("testdata", "v1run", "src"))
	model := filepath.Join(src, "matrix.pydt")
	if err := os.WriteFile(model, []byte(matrixModel), 0o644); err != nil {
		t.Fatal(err)
	}
	in := Inputs{Model: File{Path: model}, Data: map[string]File{"X": {Path: filepath.Join(src, "points.csv")}}}
	cfg := Config{Iters: 30, Burn: 10, Seed: 3}
	whole := mergeRunOf(t, in, cfg, 0, 2)
	got, err := Summarize([]string{mergeRunOf(t, in, cfg, 1, 1), mergeRunOf(t, in, cfg, 0, 1)}, filepath.Join(t.TempDir(), "merged"))
	if err != nil {
		t.Fatal(err)
	}
	var want Result
	if err := readJSONFile(filepath.Join(whole, SummaryFile), &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Scalars) != 2+6 || !reflect.DeepEqual(got.Scalars, want.Scalars) {
		t.Fatalf("merged scalars %+v, want the two-chain run's %+v", got.Scalars, want.Scalars)
	}
}
