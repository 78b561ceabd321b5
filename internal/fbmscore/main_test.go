package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
)

// readStatesFile reads every state of an fbm log in testdata.
func readStatesFile(t *testing.T, name string, n int) []*state {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*state
	if err := readStates(f, n, false, func(s *state) error { out = append(out, s); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// readTable reads whitespace-separated numbers, one row per line.
func readTable(t *testing.T, name string) [][]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r []float64
		for _, f := range strings.Fields(l) {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, x)
		}
		rows = append(rows, r)
	}
	return rows
}

func readDataFile(t *testing.T, name string) ([]float64, int, int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, n, d, err := readData(f)
	if err != nil {
		t.Fatal(err)
	}
	return x, n, d
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// TestReadFbmLog checks the reading of fbm's binary log against fbm's own
// printouts of the same log (testdata/README.md): every parent and
// divergence time of each iteration's tree (dft-display -b -t), c1 and σ²
// (dft-tbl c1@1 V1) and the cumulative CPU time (dft-tbl k).
func TestReadFbmLog(t *testing.T) {
	const n = 8
	ss := readStatesFile(t, "small.log", n)
	tbl := readTable(t, "small-tbl.txt")
	if len(ss) != 3 || len(tbl) != 3 {
		t.Fatalf("%d states, %d table rows, want 3", len(ss), len(tbl))
	}
	for i, s := range ss {
		if s.Index != i+1 {
			t.Errorf("state %d has index %d", i, s.Index)
		}
		if !near(s.C1, tbl[i][0], 1e-8) || !near(s.SD*s.SD, tbl[i][1], 1e-8) {
			t.Errorf("iteration %d: c1 %v, σ² %v; fbm prints %v, %v", s.Index, s.C1, s.SD*s.SD, tbl[i][0], tbl[i][1])
		}
		rows := readTable(t, fmt.Sprintf("small-tree-%d.txt", i+1))
		if len(rows) != 2*n-1 {
			t.Fatalf("small-tree-%d.txt: %d rows", i+1, len(rows))
		}
		for _, r := range rows { // tree, node, parent, time
			k, p := int(r[1]), int32(r[2])
			if got := s.Parents[k+n-1]; got != p {
				t.Errorf("iteration %d: node %d has parent %d, fbm prints %d", s.Index, k, got, p)
			}
			if k < 0 && math.Abs(s.Divt[-k-1]-r[3]) > 5e-7 {
				t.Errorf("iteration %d: node %d at %v, fbm prints %v", s.Index, k, s.Divt[-k-1], r[3])
			}
		}
		tr, err := buildTree(s, n)
		if err != nil {
			t.Fatal(err)
		}
		// The same tree: each case's parent and the times.
		for _, r := range rows {
			if k := int(r[1]); k > 0 {
				p := tr.Parent(leafID(k))
				if got := tr.Time(p).T(); math.Abs(got-s.Divt[-int(r[2])-1]) > 1e-15 {
					t.Errorf("iteration %d: case %d's parent at %v, want %v", s.Index, k, got, s.Divt[-int(r[2])-1])
				}
			}
		}
	}

	ms := readStatesFile(t, "medium.log", 500)
	mt := readTable(t, "medium-tbl.txt")
	if len(ms) != 10 || len(mt) != 10 {
		t.Fatalf("medium: %d states, %d table rows, want 10", len(ms), len(mt))
	}
	for i, s := range ms {
		if !near(s.C1, mt[i][0], 1e-8) || !near(s.SD*s.SD, mt[i][1], 1e-8) {
			t.Errorf("medium iteration %d: c1 %v, σ² %v; fbm prints %v, %v", s.Index, s.C1, s.SD*s.SD, mt[i][0], mt[i][1])
		}
		if ms := mt[i][2] * 60000; math.Abs(float64(s.CPUms)-ms) > 0.01 || s.CPUms <= 0 {
			t.Errorf("medium iteration %d: %d ms of CPU, fbm prints %v min = %v ms", s.Index, s.CPUms, mt[i][2], ms)
		}
		if _, err := buildTree(s, 500); err != nil {
			t.Fatal(err)
		}
	}
}

// denseLogLik is log p(X | tree, σ²) by the closed form: the cases'
// locations in each dimension are jointly Gaussian with mean 0 and
// covariance σ² t_ij, t_ij the divergence time of the last common ancestor
// of cases i and j (1 for i = j), read from fbm's parent array directly.
func denseLogLik(t *testing.T, s *state, x []float64, n, d int) float64 {
	t.Helper()
	parent := func(k int) int { return int(s.Parents[k+n-1]) }
	anc := func(i int) map[int]bool {
		a := map[int]bool{}
		for k := i; k != 0; k = parent(k) {
			a[k] = true
		}
		return a
	}
	cov := mat.NewSymDense(n, nil)
	sigma2 := s.SD * s.SD
	for i := 1; i <= n; i++ {
		ai := anc(i)
		for j := i; j <= n; j++ {
			tij := 1.0
			if j != i {
				k := parent(j)
				for !ai[k] {
					k = parent(k)
				}
				tij = s.Divt[-k-1]
			}
			cov.SetSym(i-1, j-1, sigma2*tij)
		}
	}
	nd, ok := distmv.NewNormal(make([]float64, n), cov, nil)
	if !ok {
		t.Fatal("covariance not positive definite")
	}
	ll := 0.0
	col := make([]float64, n)
	for k := range d {
		for i := range n {
			col[i] = x[i*d+k]
		}
		ll += nd.LogProb(col)
	}
	return ll
}

// TestLogLikMatchesDense: the scored log likelihood of fbm's trees (those
// of small.log on its data, and random binary trees in fbm's layout) equals
// the closed-form Gaussian density.
func TestLogLikMatchesDense(t *testing.T) {
	x, n, d := readDataFile(t, "small.txt")
	cases := readStatesFile(t, "small.log", n)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		cases = append(cases, randomState(rng, 2+rng.IntN(9)))
	}
	for i, s := range cases {
		nn, dd, xx := n, d, x
		if i >= 3 { // a random tree: random data of 3 dimensions
			nn, dd = len(s.Divt)+1, 3
			xx = make([]float64, nn*dd)
			for j := range xx {
				xx[j] = 2 * rng.NormFloat64()
			}
		}
		tr, err := buildTree(s, nn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := logLik(tr, xx, dd, s.SD*s.SD)
		if err != nil {
			t.Fatal(err)
		}
		if want := denseLogLik(t, s, xx, nn, dd); !near(got, want, 1e-9) {
			t.Errorf("case %d (N = %d): log lik %v, closed form %v", i, nn, got, want)
		}
	}
}

// randomState returns a random binary tree over n cases in fbm's layout:
// nodes merged in random pairs, each new node earlier than its children.
func randomState(rng *rand.Rand, n int) *state {
	s := &state{Parents: make([]int32, 2*n), Divt: make([]float64, n-1), SD: 0.5 + rng.Float64(), C1: 1}
	type top struct {
		k int
		t float64
	}
	var tops []top
	for i := 1; i <= n; i++ {
		tops = append(tops, top{i, 1})
	}
	perm := rng.Perm(n - 1) // node numbers in random order
	for m := 0; len(tops) > 1; m++ {
		i := rng.IntN(len(tops))
		a := tops[i]
		tops = append(tops[:i], tops[i+1:]...)
		j := rng.IntN(len(tops))
		b := tops[j]
		k := -(perm[m] + 1)
		tt := math.Min(a.t, b.t) * (0.2 + 0.75*rng.Float64())
		s.Divt[-k-1] = tt
		s.Parents[a.k+n-1], s.Parents[b.k+n-1] = int32(k), int32(k)
		tops[j] = top{k, tt}
	}
	s.Parents[tops[0].k+n-1] = 0
	return s
}

// TestScoreTrace: the trace of small.log has a row per iteration with the
// closed-form log likelihood, c1, 1/σ² and the CPU seconds, in mixbench's
// columns.
func TestScoreTrace(t *testing.T) {
	x, n, d := readDataFile(t, "small.txt")
	f, err := os.Open(filepath.Join("testdata", "small.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	rows, err := score(&buf, f, x, n, d, false)
	if err != nil || rows != 3 {
		t.Fatalf("%d rows, %v", rows, err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != "sweep,log_lik,c,root_t,sum_s,leaf_depth,prec,cpu_s" || len(lines) != 4 {
		t.Fatalf("trace:\n%s", buf.String())
	}
	ss := readStatesFile(t, "small.log", n)
	for i, l := range lines[1:] {
		var v [8]float64
		for j, f := range strings.Split(l, ",") {
			if v[j], err = strconv.ParseFloat(f, 64); err != nil {
				t.Fatal(err)
			}
		}
		s := ss[i]
		root := 0.0
		for j, p := range s.Parents[:n-1] {
			if p == 0 {
				root = s.Divt[n-2-j]
			}
		}
		if v[0] != float64(i+1) || !near(v[1], denseLogLik(t, s, x, n, d), 1e-9) || v[2] != s.C1 ||
			!near(v[3], root, 1e-12) || !near(v[6], 1/(s.SD*s.SD), 1e-15) || v[7] != float64(s.CPUms)/1000 {
			t.Errorf("row %q; state %+v", l, *s)
		}
	}
}

// leafID is the NodeID of fbm's case k.
func leafID(k int) pydt.NodeID { return pydt.NodeID(k - 1) }

// TestBadInput: a file that is not a well-formed fbm log of a one-tree
// model, and parent arrays that are not a tree, give errors, not panics.
func TestBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "small.log"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(b []byte, n int) error {
		return readStates(bytes.NewReader(b), n, false, func(*state) error { return nil })
	}
	if err := read(good, 8); err != nil {
		t.Fatal(err)
	}
	flip := func(off int) []byte { b := bytes.Clone(good); b[off] ^= 0xff; return b }
	size := int(binary.LittleEndian.Uint32(good[8:]))
	for name, b := range map[string][]byte{
		"magic":     flip(0),
		"trailer":   flip(headerLen + size + 4),
		"truncated": good[:len(good)-5],
		"text":      []byte("this is not an fbm log file at all"),
	} {
		if err := read(b, 8); err == nil || err == io.EOF || !strings.Contains(err.Error(), "fbm log") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	// A run stopped mid-record or mid-iteration: with partial, the
	// complete iterations (two of three) are read.
	for _, cut := range []int{5, 300, 700} {
		k := 0
		err := readStates(bytes.NewReader(good[:len(good)-cut]), 8, true, func(*state) error { k++; return nil })
		if err != nil || k != 2 {
			t.Errorf("partial, %d bytes cut: %d iterations, %v", cut, k, err)
		}
	}
	if err := read(good, 9); err == nil || !strings.Contains(err.Error(), "record of") {
		t.Errorf("wrong number of cases: error %v", err)
	}

	rng := rand.New(rand.NewPCG(1, 1))
	const n = 6
	bad := map[string]func(s *state){
		"two roots":      func(s *state) { s.Parents[n] = 0 },
		"leaf parent":    func(s *state) { s.Parents[n] = 2 },
		"self parent":    func(s *state) { s.Parents[0] = -(n - 1) },
		"out of range":   func(s *state) { s.Parents[n] = -n },
		"time 1":         func(s *state) { s.Divt[0] = 1 },
		"time NaN":       func(s *state) { s.Divt[2] = math.NaN() },
		"three children": func(s *state) { s.Parents[n], s.Parents[n+1], s.Parents[n+2] = -1, -1, -1 },
		"short":          func(s *state) { s.Divt = s.Divt[1:] },
		"time order": func(s *state) {
			for j, p := range s.Parents[:n-1] {
				if p == 0 {
					s.Divt[n-2-j] = 0.99999
				}
			}
		},
	}
	for name, f := range bad {
		s := randomState(rng, n)
		if _, err := buildTree(s, n); err != nil {
			t.Fatalf("%s: the tree before the change: %v", name, err)
		}
		f(s)
		if _, err := buildTree(s, n); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, _, _, err := readData(strings.NewReader("1 2\n3\n")); err == nil {
		t.Error("ragged data: no error")
	}
}
