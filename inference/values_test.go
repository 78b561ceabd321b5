package inference

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// TestScoreLatentArray scores a tree of the per-dimension model
// (examples/gaussian-perdim.pydt) with a precision per column given as
// values (ReadValues, SetArrays) against independent answers: given the
// tree the columns are independent, so log_lik is the sum of the shared
// model's (examples/gaussian.pydt) log_lik of each column alone at that
// column's precision; log_tree is the shared model's; log_hyper is the sum
// of the priors' log densities, computed here with gonum's distuv.
func TestScoreLatentArray(t *testing.T) {
	dir := t.TempDir()
	const nwk = "((1:0.3,2:0.3):0.4,(3:0.5,4:0.5):0.2):0.3;\n"
	cols := [][]float64{{0.1, 0.4, -1.2, -0.9}, {2, 1.5, -0.3, 0.2}}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tree := write("t.nwk", nwk)
	var both, c1, c2 strings.Builder
	for i := range cols[0] {
		both.WriteString(fmtFloat(cols[0][i]) + "," + fmtFloat(cols[1][i]) + "\n")
		c1.WriteString(fmtFloat(cols[0][i]) + "\n")
		c2.WriteString(fmtFloat(cols[1][i]) + "\n")
	}
	x, x1, x2 := write("x.csv", both.String()), write("x1.csv", c1.String()), write("x2.csv", c2.String())
	const alpha, beta, c = 1.5, 0.3, 0.8
	prec := []float64{2, 0.5}
	vals := write("v.csv", "alpha,beta,c,prec[1],prec[2]\n1.5,0.3,0.8,2,0.5\n")

	v, err := ReadValues(vals, 0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := v.Sets(nil)
	if err != nil {
		t.Fatal(err)
	}
	perdim := filepath.Join("..", "examples", "gaussian-perdim.pydt")
	m, err := Inputs{Model: File{Path: perdim}, Data: map[string]File{"X": {Path: x}}, Set: set}.Load()
	if err != nil {
		t.Fatal(err)
	}
	env := m.NewState().Env
	if err := m.SetArrays(env, v); err != nil {
		t.Fatal(err)
	}
	got, err := m.ScoreTreeFileIn(tree, 0, env)
	if err != nil {
		t.Fatal(err)
	}

	shared := filepath.Join("..", "examples", "gaussian.pydt")
	var wantLik, wantTree float64
	for d, path := range []string{x1, x2} {
		set := []string{"alpha=1.5,beta=0.3,c=0.8", "prec=" + fmtFloat(prec[d])}
		sm, err := Inputs{Model: File{Path: shared}, Data: map[string]File{"X": {Path: path}}, Set: set}.Load()
		if err != nil {
			t.Fatal(err)
		}
		s, err := sm.ScoreTreeFile(tree, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantLik += s[0].LogLik
		wantTree = s[0].LogTree
	}
	wantHyper := distuv.Gamma{Alpha: 2, Beta: 0.5}.LogProb(alpha) + distuv.Beta{Alpha: 1, Beta: 1}.LogProb(beta) +
		distuv.Gamma{Alpha: 1, Beta: 1}.LogProb(c)
	for _, p := range prec {
		wantHyper += distuv.Gamma{Alpha: 1, Beta: 1}.LogProb(p)
	}
	s := got[0]
	for _, tt := range []struct {
		name      string
		got, want float64
	}{{"log_lik", s.LogLik, wantLik}, {"log_tree", s.LogTree, wantTree}, {"log_hyper", s.LogHyper, wantHyper},
		{"log_joint", s.LogJoint, wantLik + wantTree + wantHyper}} {
		if !(math.Abs(tt.got-tt.want) <= 1e-9*math.Max(1, math.Abs(tt.want))) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// The env given is not changed, and Score refuses a latent array
	// outside its support (the zeros of a state never given values).
	if _, err := m.ScoreTreeFileIn(tree, 0, nil); err == nil || !strings.Contains(err.Error(), "prec[1] = 0 is outside its support") {
		t.Errorf("scoring without the array's values: %v", err)
	}
}

// TestSampleValuesRoundTrip checks that sample's params.csv holds the
// elements of latent arrays, that ReadValues reads back draw 2 exactly as
// SamplePrior drew it (the same stream drawn again here), and that the
// values score the tree of that draw.
func TestSampleValuesRoundTrip(t *testing.T) {
	model := filepath.Join("..", "examples", "gaussian-perdim.pydt")
	l, err := Inputs{Model: File{Path: model}, Set: []string{"N=5,D=3"}}.Compile(true)
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.Model()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	const seed = 3
	if err := Sample(m, 3, seed, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, SampleParamsFile))
	if err != nil {
		t.Fatal(err)
	}
	if h, _, _ := strings.Cut(string(b), "\n"); h != "draw,alpha,beta,c,prec[1],prec[2],prec[3]" {
		t.Errorf("params.csv header %q", h)
	}
	rng := rand.New(rand.NewPCG(seed, sampleStream))
	var st *State
	for range 2 {
		if st, err = m.SamplePrior(rng); err != nil {
			t.Fatal(err)
		}
	}
	v, err := ReadValues(filepath.Join(out, SampleParamsFile), 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range v.Names {
		var want float64
		for _, c := range m.Traced() {
			if c.Name == name {
				want = st.Env.Values[c.Var.ID][c.Off]
			}
		}
		if v.X[i] != want {
			t.Errorf("%s = %v in params.csv, drawn %v", name, v.X[i], want)
		}
	}
	set, err := v.Sets(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Inputs{Model: File{Path: model}, Data: map[string]File{"X": {Path: filepath.Join(out, "X.csv")}}, Draw: 2, Set: set}.Load()
	if err != nil {
		t.Fatal(err)
	}
	env := got.NewState().Env
	if err := got.SetArrays(env, v); err != nil {
		t.Fatal(err)
	}
	scores, err := got.ScoreTreeFileIn(filepath.Join(out, SampleTreesFile), 2, env)
	if err != nil {
		t.Fatal(err)
	}
	// The same score from the drawn state itself.
	tr, err := pydt.ParseNewick(strings.Split(mustRead(t, filepath.Join(out, SampleTreesFile)), "\n")[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	ds := got.NewState()
	for _, c := range m.Traced() {
		w, _ := got.G.Lookup(c.Var.Name)
		ds.Env.Values[w.ID][c.Off] = st.Env.Values[c.Var.ID][c.Off]
	}
	ds.Trees = []*pydt.Tree{tr}
	want, err := got.Score(ds)
	if err != nil {
		t.Fatal(err)
	}
	if s := scores[0]; s.LogJoint != want.LogJoint || s.LogLik != want.LogLik || s.LogHyper != want.LogHyper {
		t.Errorf("scores %+v, from the drawn state %+v", scores[0], want)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestValuesErrors checks the errors of a file of values: wrong lengths,
// names the model does not have, values outside their supports, a draw to
// choose, a scalar given twice.
func TestValuesErrors(t *testing.T) {
	dir := t.TempDir()
	x := dataMat(4, 3, func(i, j int) float64 { return float64(i*3 + j) })
	m := compileSource(t, "perdim.pydt", []byte(`dim N, D
data X : real[N, D]
param prec : pos[D]
param w : real[2, 2]
alpha ~ Gamma(2, 0.5)
c ~ Gamma(1, 1)
prec ~ Gamma(1, 1)
w ~ Normal(0, 1)
data y : real
y ~ Normal(w[1, 2], 1)
X ~ PYDT(alpha, 0.5, c, 1 / prec)
`), map[string]*dataset.Matrix{"X": x}, map[string]float64{"y": 0})
	const ok = `"w[1,1]","w[1,2]","w[2,1]","w[2,2]"`
	for _, tt := range []struct {
		name, file string
		draw       int
		set        []string
		want       string // "" for none
	}{
		{"complete", "prec[1],prec[2],prec[3]," + ok + "\n1,2,3,0,0,0,0\n", 0, nil, ""},
		{"spaces in names", "prec[1],prec[2],prec[3],\"w[1, 1]\",\"w[1,2]\",\"w[2 ,1]\",\"w[2,2]\"\n1,2,3,0,0,0,0\n", 0, nil, ""},
		{"too short", "prec[1],prec[2]," + ok + "\n1,2,0,0,0,0\n", 0, nil, "gives 2 of the 3 elements of prec (shape [3]): every element needs a value (prec[3] has none)"},
		{"too long", "prec[1],prec[2],prec[3],prec[4]," + ok + "\n1,2,3,4,0,0,0,0\n", 0, nil, "prec[4]: index 4 is outside 1..3"},
		{"matrix element missing", "prec[1],prec[2],prec[3],\"w[1,1]\",\"w[1,2]\",\"w[2,1]\"\n1,2,3,0,0,0\n", 0, nil, "(w[2,2] has none)"},
		{"wrong rank", "prec[1],prec[2],prec[3],w[1]\n1,2,3,0\n", 0, nil, "w has 2 dimensions (shape [2, 2]) but is indexed with 1"},
		{"twice", "prec[1],prec[2],prec[3],prec[01]," + ok + "\n1,2,3,4,0,0,0,0\n", 0, nil, "prec[01] is given twice"},
		{"not an array", "prec[1],prec[2],prec[3],alpha[1]\n1,2,3,4\n", 0, nil, "alpha[1]: the model has no latent array alpha (it has prec, w)"},
		{"outside the support", "prec[1],prec[2],prec[3]," + ok + "\n1,-2,3,0,0,0,0\n", 0, nil, "prec[2] = -2 is outside the support of prec: it must be positive"},
		{"not a number", "prec[1],prec[2],prec[3]\n1,x,3\n", 0, nil, "line 2, prec[2]"},
		{"draw 2", "draw,prec[1],prec[2],prec[3]," + ok + "\n1,1,2,3,0,0,0,0\n2,4,5,6,0,0,0,0\n", 2, nil, ""},
		{"no draw chosen", "draw,prec[1],prec[2],prec[3]\n1,1,2,3\n2,4,5,6\n", 0, nil, "holds 2 draws: choose one with --draw K"},
		{"no such draw", "draw,prec[1],prec[2],prec[3]\n1,1,2,3\n", 4, nil, "holds no draw 4"},
		{"lines without draws", "prec[1],prec[2],prec[3]\n1,2,3\n4,5,6\n", 0, nil, "holds 2 lines of values but no draw column"},
		{"no values", "prec[1],prec[2],prec[3]\n", 0, nil, "want a header of names and a line of values"},
		{"ragged", "prec[1],prec[2],prec[3]\n1,2\n", 0, nil, "wrong number of fields"},
		{"scalar twice", "alpha,prec[1],prec[2],prec[3]\n1,1,2,3\n", 0, []string{"alpha=2"}, "alpha is given both by --set and by the values file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".csv")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			v, err := ReadValues(path, tt.draw)
			if err == nil {
				_, err = v.Sets(tt.set)
			}
			env := m.NewState().Env
			if err == nil {
				err = m.SetArrays(env, v)
			}
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			case tt.want == "":
				prec, _ := m.G.Lookup("prec")
				want := []float64{1, 2, 3}
				if tt.draw == 2 {
					want = []float64{4, 5, 6}
				}
				for i, x := range env.Values[prec.ID] {
					if x != want[i] {
						t.Errorf("prec = %v, want %v", env.Values[prec.ID], want)
						break
					}
				}
			}
		})
	}
}
