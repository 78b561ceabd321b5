package pydt

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/newick")

// newickTimeMode selects how a random test tree's divergence times are spread.
type newickTimeMode int

const (
	timesUniform newickTimeMode = iota // uniform between parent and child
	timesNear0                         // log-uniform, crowded against t = 0
	timesNear1                         // 1-t log-uniform, crowded against t = 1
	timesRawS                          // s = -log(1-t) uniform between parent and child: any float64 s
	timesBeyond                        // s log-uniform up to 1e300: 1-t below the float64 range
)

// randomNewickTree builds a random multifurcating tree with n leaves by
// sequential attachment, on a uniformly chosen edge (at a time drawn
// according to mode) or, one time in three, at a branch point.
func randomNewickTree(t testing.TB, rng *rand.Rand, n int, mode newickTimeMode) *Tree {
	t.Helper()
	tr := New(n)
	tr.Plant(0)
	for i := 1; i < n; i++ {
		for {
			nodes := tr.PreOrder(nil)
			u := nodes[rng.IntN(len(nodes))]
			if !tr.IsLeaf(u) && rng.IntN(3) == 0 {
				tr.Attach(NodeID(i), Position{Node: u, AtNode: true})
				break
			}
			lo, hi := tr.ParentTime(u), tr.Time(u)
			f := 0.05 + 0.9*rng.Float64()
			var tm Time
			switch mode {
			case timesUniform:
				tm = TimeAt(lo.T() + f*(hi.T()-lo.T()))
			case timesNear0:
				a, b := lo.T(), hi.T()
				if a == 0 {
					a = math.Min(b, 1) * 1e-15
				}
				if b == 1 {
					b = math.Min(0.5, 1e3*a)
				}
				tm = TimeAt(math.Exp(math.Log(a) + f*(math.Log(b)-math.Log(a))))
			case timesNear1:
				a, b := lo.OneMinus(), hi.OneMinus() // a > b
				if a > 0.5 {
					a = 0.5
				}
				if b == 0 {
					b = a * 1e-10
				}
				tm = TimeFromOneMinus(math.Exp(math.Log(a) + f*(math.Log(b)-math.Log(a))))
			case timesRawS:
				a, b := lo.S(), hi.S()
				if math.IsInf(b, 1) {
					b = a + 3
				}
				tm = TimeFromS(a + f*(b-a))
			case timesBeyond:
				a, b := lo.S(), hi.S()
				if a == 0 {
					a = 1
				}
				if math.IsInf(b, 1) {
					b = math.Min(1e300, a*1e10)
				}
				tm = TimeFromS(math.Exp(math.Log(a) + f*(math.Log(b)-math.Log(a))))
			}
			if lo.Before(tm) && tm.Before(hi) {
				tr.Attach(NodeID(i), Position{Node: u, Time: tm})
				break
			}
		}
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("random tree: %v", err)
	}
	return tr
}

// cladeTimes maps each branch point's set of leaves (sorted leaf IDs) to its
// time, an order-free description of the tree.
func cladeTimes(tr *Tree) map[string]Time {
	out := make(map[string]Time)
	below := make(map[NodeID][]int)
	for _, v := range tr.PostOrder(nil) {
		if tr.IsLeaf(v) {
			below[v] = []int{int(v)}
			continue
		}
		var s []int
		for c := range tr.Children(v) {
			s = append(s, below[c]...)
		}
		slices.Sort(s)
		below[v] = s
		out[fmt.Sprint(s)] = tr.Time(v)
	}
	return out
}

// closeTimes reports whether two times agree to a few ulps in whichever of
// t and 1-t is the smaller, or are equal when rel = 0.
func closeTimes(a, b Time, rel float64) bool {
	if rel == 0 {
		return a == b
	}
	if a.T() <= 0.5 {
		return math.Abs(a.T()-b.T()) <= rel*a.T()
	}
	return math.Abs(a.OneMinus()-b.OneMinus()) <= rel*a.OneMinus()
}

// sameTree compares clades, times (to rel), leaf order of children and labels.
func sameTree(t *testing.T, want, got *Tree, rel float64) {
	t.Helper()
	if got.NumLeaves() != want.NumLeaves() {
		t.Fatalf("N = %d, want %d", got.NumLeaves(), want.NumLeaves())
	}
	for i := range want.NumLeaves() {
		if got.Label(NodeID(i)) != want.Label(NodeID(i)) {
			t.Fatalf("leaf %d label %q, want %q", i, got.Label(NodeID(i)), want.Label(NodeID(i)))
		}
	}
	wc, gc := cladeTimes(want), cladeTimes(got)
	if len(wc) != len(gc) {
		t.Fatalf("%d branch points, want %d\nwant %s\ngot  %s", len(gc), len(wc), want.Newick(), got.Newick())
	}
	for k, wt := range wc {
		gt, ok := gc[k]
		if !ok {
			t.Fatalf("clade %s missing\nwant %s\ngot  %s", k, want.Newick(), got.Newick())
		}
		if !closeTimes(wt, gt, rel) {
			t.Fatalf("clade %s at t = %v (1-t = %v), want t = %v (1-t = %v)", k, gt.T(), gt.OneMinus(), wt.T(), wt.OneMinus())
		}
	}
}

func TestNewickRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	odd := []string{"plain", "with space", "it's", "a'b''c", "(paren)", "semi;colon", "com,ma", "[bracket]", "colon:x",
		"tab\there", "under_score", "ünïcødé", "", "7", "1"}
	for _, tc := range []struct {
		name   string
		n      int
		mode   newickTimeMode
		labels bool
	}{
		{"N1", 1, timesUniform, false},
		{"N2", 2, timesUniform, false},
		{"N3-labels", 3, timesUniform, true},
		{"N10", 10, timesUniform, false},
		{"N15-labels", 15, timesUniform, true},
		{"N40", 40, timesUniform, false},
		{"N10-near0", 10, timesNear0, false},
		{"N30-near0-labels", 30, timesNear0, true},
		{"N10-near1", 10, timesNear1, false},
		{"N30-near1-labels", 30, timesNear1, true},
		{"N200-near1", 200, timesNear1, false},
		{"N40-raw-s", 40, timesRawS, false},
		{"N200-raw-s", 200, timesRawS, true},
		{"N40-beyond", 40, timesBeyond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			annotated, internal := 0, 0
			defer func() { t.Logf("%d of %d branch points annotated", annotated, internal) }()
			for rep := range 20 {
				tr := randomNewickTree(t, rng, tc.n, tc.mode)
				if tc.labels {
					tr.Labels = make([]string, tc.n)
					perm := rng.Perm(len(odd))
					for i := range tc.n {
						if i < len(perm) {
							tr.Labels[i] = odd[perm[i]]
						} else {
							tr.Labels[i] = "row " + strconv.Itoa(i)
						}
					}
					// A label equal to another row's number would be
					// ambiguous; keep the rows distinct by name.
					names := map[string]bool{}
					for i := range tc.n {
						if names[tr.Label(NodeID(i))] {
							tr.Labels[i] = fmt.Sprintf("dup %d", i)
						}
						names[tr.Label(NodeID(i))] = true
					}
				}
				s := tr.Newick()
				got, err := ParseNewick(s, tr.Labels)
				if err != nil {
					t.Fatalf("rep %d: parse %s: %v", rep, s, err)
				}
				if err := got.Validate(); err != nil {
					t.Fatalf("rep %d: parsed tree invalid: %v", rep, err)
				}
				sameTree(t, tr, got, 0)
				annotated += strings.Count(s, "[&s=")
				internal += tr.NumInternal()
				// Without labels: names are read back as Labels (or rows
				// when they are the numbers 1..N).
				if !tc.labels {
					got2, err := ParseNewick(s, nil)
					if err != nil {
						t.Fatal(err)
					}
					if got2.Labels != nil {
						t.Fatalf("numeric names kept as labels %v", got2.Labels)
					}
					sameTree(t, tr, got2, 1e-13)
				}
				// A second round trip is stable to rounding.
				again, err := ParseNewick(got.Newick(), got.Labels)
				if err != nil {
					t.Fatalf("second parse: %v", err)
				}
				sameTree(t, got, again, 0)
			}
		})
	}
}

// TestNewickNearOne checks that times close to 1, and beyond the float64
// range of 1-t (s > 745), are written and read back exactly (Time equality
// is equality of s), through the lengths where they suffice and through an
// [&s=...] annotation where they do not.
func TestNewickNearOne(t *testing.T) {
	for _, s := range []float64{32.236, 34.0, 39.1, 230.3, 690.8, 700, 709.5, 744.4, 745.2, 800, 1e5, 1e20, 1e300} {
		tr := New(3)
		tr.Plant(0)
		tr.Attach(1, Position{Node: 0, Time: TimeAt(0.25)})
		tr.Attach(2, Position{Node: 1, Time: TimeFromS(s)})
		out := tr.Newick()
		got, err := ParseNewick(out, nil)
		if err != nil {
			t.Fatalf("s = %g: %v", s, err)
		}
		if w := got.Parent(2); got.Time(w) != TimeFromS(s) {
			t.Errorf("s = %g read back as %v from %s", s, got.Time(w).S(), out)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("s = %g: %v", s, err)
		}
		if again := got.Newick(); again != out {
			t.Errorf("s = %g: second writing %s differs from %s", s, again, out)
		}
		if under := math.Exp(-s) == 0; under != strings.Contains(out, "[&s=") && under {
			t.Errorf("s = %g: 1-t underflows but %s has no annotation", s, out)
		}
	}
	// Hand-written: a node at 1 - 1e-14 whose leaves are two edges down.
	// The bottom-up sum gives 1-t = 4e-15 + 6e-15 with relative error of
	// an ulp, where 1 - (sum from the top) would keep only ~2 digits.
	s := "(((a:4e-15,b:4e-15):6e-15,c:1e-14):0.99999999999999,d:1):1e-20;"
	got, err := ParseNewick(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for v := range got.Children(got.Root()) {
		if got.IsLeaf(v) {
			continue
		}
		if u := got.Time(v).OneMinus(); !(math.Abs(u-1e-14) <= 1e-28) {
			t.Errorf("1-t = %v, want 1e-14", u)
		}
		for c := range got.Children(v) {
			if !got.IsLeaf(c) {
				if u := got.Time(c).OneMinus(); !(math.Abs(u-4e-15) <= 4e-15*1e-14) {
					t.Errorf("inner 1-t = %v, want 4e-15 to the precision of s", u)
				}
			}
		}
	}
	// Annotations written by other tools' conventions: before or after the
	// length, with an internal label.
	for _, in := range []string{
		"((1:0,2:0)[&s=800]:0.5,3:0.5):0.5;",
		"((1:0,2:0):0.5[&s=800],3:0.5):0.5;",
		"((1:0,2:0)lbl[&s=800]:0.5,3:0.5):0.5;",
	} {
		got, err := ParseNewick(in, nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if w := got.Parent(0); got.Time(w).S() != 800 {
			t.Errorf("%s: s = %v, want 800", in, got.Time(w).S())
		}
	}
}

func TestNewickSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		labels   []string
		want     string // Newick of the result
		wantLbl  []string
	}{
		{"numbers", "((2:0.5,1:0.5):0.25,3:0.75):0.25;", nil, "((2:0.5,1:0.5):0.25,3:0.75):0.25;", nil},
		{"whitespace and comments", " ( ( 2 : 0.5 ,[c]1:0.5 ) [x] :0.25,\n3:0.75\t): 0.25 ; [end]\n", nil,
			"((2:0.5,1:0.5):0.25,3:0.75):0.25;", nil},
		{"names by appearance", "((b:0.5,a:0.5):0.25,'c d':0.75):0.25;", nil, "((b:0.5,a:0.5):0.25,'c d':0.75):0.25;",
			[]string{"b", "a", "c d"}},
		{"quotes", "(('it''s':0.5,'x,y':0.5):0.25,'1':0.75):0.25;", []string{"", "it's", "x,y"},
			"(('it''s':0.5,'x,y':0.5):0.25,1:0.75):0.25;", []string{"", "it's", "x,y"}},
		{"by given labels", "((b:0.5,a:0.5):0.25,c:0.75):0.25;", []string{"a", "b", "c"},
			"((b:0.5,a:0.5):0.25,c:0.75):0.25;", []string{"a", "b", "c"}},
		{"numbers not 1..N", "((1:0.5,3:0.5):0.25,4:0.75):0.25;", nil, "((1:0.5,3:0.5):0.25,4:0.75):0.25;",
			[]string{"1", "3", "4"}},
		{"leading zero is a name", "((01:0.5,2:0.5):0.25,3:0.75):0.25;", nil, "((01:0.5,2:0.5):0.25,3:0.75):0.25;",
			[]string{"01", "2", "3"}},
		{"internal labels ignored", "((1:0.5,2:0.5)x:0.25,3:0.75)'root':0.25;", nil, "((1:0.5,2:0.5):0.25,3:0.75):0.25;", nil},
		{"multifurcation", "(1:0.5,2:0.5,3:0.5,4:0.5):0.5;", nil, "(1:0.5,2:0.5,3:0.5,4:0.5):0.5;", nil},
		{"one leaf", "x:1;", nil, "x:1;", []string{"x"}},
		{"leaf within tolerance", "(1:0.5000000001,2:0.5):0.5;", nil, "(1:0.5,2:0.5):0.5;", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseNewick(tc.in, tc.labels)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := tr.Newick(); got != tc.want {
				t.Errorf("Newick() = %s, want %s", got, tc.want)
			}
			if !slices.Equal(tr.Labels, tc.wantLbl) {
				t.Errorf("Labels = %q, want %q", tr.Labels, tc.wantLbl)
			}
		})
	}
}

// newickLabelsFor gives the row labels used for a malformed case: files
// named labels_*.nwk are parsed against rows a, b, c.
func newickLabelsFor(name string) []string {
	if strings.HasPrefix(name, "labels_") {
		return []string{"a", "b", "c"}
	}
	return nil
}

// TestNewickErrors parses every testdata/newick/bad/*.nwk and compares the
// error message with the .err golden file next to it (go test -update
// rewrites them).
func TestNewickErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "newick", "bad", "*.nwk"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("found only %d malformed cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".nwk")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := ParseNewick(string(in), newickLabelsFor(name))
			if perr == nil {
				t.Fatalf("no error for %q", in)
			}
			checkNewickError(t, string(in), perr)
			golden := strings.TrimSuffix(f, ".nwk") + ".err"
			got := perr.Error() + "\n"
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("error for %q:\n got %s\nwant %s", in, got, want)
			}
		})
	}
}

// checkNewickError asserts that err wraps ErrNewick and is a *NewickError
// with an offset inside the input.
func checkNewickError(t testing.TB, in string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNewick) {
		t.Fatalf("error %v does not wrap ErrNewick", err)
	}
	var ne *NewickError
	if !errors.As(err, &ne) {
		t.Fatalf("error %v is not a *NewickError", err)
	}
	if ne.Pos.Offset < 0 || ne.Pos.Offset > len(in) {
		t.Fatalf("error offset %d outside input of %d bytes", ne.Pos.Offset, len(in))
	}
	if ne.Msg == "" {
		t.Fatalf("error %v has no message", err)
	}
}

func TestReadNewickTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	var want []*Tree
	for i := range 5 {
		tr := randomNewickTree(t, rng, 6, newickTimeMode(i%3))
		tr.Labels = []string{"a", "b", "c", "d e", "f", "g"}
		want = append(want, tr)
		if err := WriteNewick(&buf, tr); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			buf.WriteString("\n  [a comment line]\r\n")
		}
	}
	got, err := ReadNewickTrees(bytes.NewReader(buf.Bytes()), want[0].Labels)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d trees, want %d", len(got), len(want))
	}
	for i := range want {
		sameTree(t, want[i], got[i], 1e-13)
	}

	// No trailing newline, CRLF line ends.
	got, err = ReadNewickTrees(strings.NewReader("(1:0.5,2:0.5):0.5;\r\n(2:0.25,1:0.25):0.75;"), nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("got %d trees, err %v", len(got), err)
	}

	// Errors name the line.
	in := "(1:0.5,2:0.5):0.5;\n\n(1:0.5,2:0.5):0.5;\n(1:0.5,2:0.5:0.5;\n"
	_, err = ReadNewickTrees(strings.NewReader(in), nil)
	var ne *NewickError
	if !errors.As(err, &ne) || !errors.Is(err, ErrNewick) {
		t.Fatalf("error %v is not a NewickError", err)
	}
	if ne.Pos.Line != 4 || ne.Pos.Offset != 12 {
		t.Errorf("error at %v, want line 4, offset 12: %v", ne.Pos, err)
	}
	if want := "newick: line 4, offset 12: unexpected ':' after a node: want ',', ')' or ';'"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestNewickInternalLabels writes branch point labels where ape and
// Bio.Phylo read them (after the closing parenthesis, before the length),
// quoted when needed, and reads the tree back with the labels ignored.
func TestNewickInternalLabels(t *testing.T) {
	tr, err := ParseNewick("((1:0.5,2:0.5):0.3,3:0.8):0.2;", nil)
	if err != nil {
		t.Fatal(err)
	}
	inner := tr.Parent(0)
	tests := []struct {
		name  string
		label func(NodeID) string
		want  string
	}{
		{"nil", nil, "((1:0.5,2:0.5):0.3,3:0.8):0.2;"},
		{"numbers", func(v NodeID) string {
			if v == inner {
				return "0.93"
			}
			return "1"
		}, "((1:0.5,2:0.5)0.93:0.3,3:0.8)1:0.2;"},
		{"empty and quoted", func(v NodeID) string {
			if v == inner {
				return "it's x"
			}
			return ""
		}, "((1:0.5,2:0.5)'it''s x':0.3,3:0.8):0.2;"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tr.AppendNewickLabeled(nil, tc.label))
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			back, err := ParseNewick(got, nil)
			if err != nil {
				t.Fatal(err)
			}
			if back.Newick() != tr.Newick() {
				t.Errorf("read back %s, want %s", back.Newick(), tr.Newick())
			}
		})
	}
}

func TestWriteNewickError(t *testing.T) {
	tr := New(2)
	tr.Plant(0)
	tr.Attach(1, Position{Node: 0, Time: TimeAt(0.5)})
	if err := WriteNewick(failWriter{}, tr); err == nil {
		t.Fatal("no error from a failing writer")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func BenchmarkNewickWrite(b *testing.B) {
	tr := randomNewickTree(b, rand.New(rand.NewPCG(1, 1)), 1000, timesUniform)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = tr.AppendNewick(buf[:0])
	}
}

func BenchmarkNewickParse(b *testing.B) {
	tr := randomNewickTree(b, rand.New(rand.NewPCG(1, 1)), 1000, timesUniform)
	s := tr.Newick()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNewick(s, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewickParseStar parses a star tree: one branch point with 20000
// leaves. Linking children one AddChild at a time made it quadratic.
func BenchmarkNewickParseStar(b *testing.B) {
	const n = 20000
	var sb strings.Builder
	for i := range n {
		sb.WriteString(",")
		sb.WriteString(strconv.Itoa(i + 1))
		sb.WriteString(":0.5")
	}
	s := "(" + sb.String()[1:] + "):0.5;"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNewick(s, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestForEachNewickBounded checks the limits of reading a file of trees
// (the line limit lowered to 100 bytes): on main, score --tree /dev/zero
// read until memory ran out.
func TestForEachNewickBounded(t *testing.T) {
	defer func(n int) { maxNewickLine = n }(maxNewickLine)
	maxNewickLine = 100
	long := "(1:0.5,2:0.5):0.5;" + strings.Repeat(" ", maxNewickLine)
	cases := []struct {
		name, in string
		want     string
		trees    int // trees handed over before the error
	}{
		{"NUL on line 2", "(1:0.5,2:0.5):0.5;\n(1:0.5,\x002:0.5):0.5;\n", "newick: line 2, offset 7: a NUL byte: this is not a text file", 1},
		{"long line", "(1:0.5,2:0.5):0.5;\n" + long + "\n", "newick: line 2, offset 0: line longer than 100 bytes, the longest tree pydtlang reads", 1},
		{"extra close", "((1:0.5,2:0.5):0.5),3:1);\n", "newick: line 1, offset 23: unbalanced parentheses: ')' without a matching '(' (the tree has 2 '(' and 3 ')')", 0},
	}
	for _, c := range cases {
		n := 0
		err := ForEachNewick(strings.NewReader(c.in), nil, func(tr *Tree) error {
			n++
			return nil
		})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, ErrNewick) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if n != c.trees {
			t.Errorf("%s: %d trees before the error, want %d", c.name, n, c.trees)
		}
	}
	// A line just within the limit is read.
	ok := "(1:0.5,2:0.5):0.5;" + strings.Repeat(" ", maxNewickLine-len("(1:0.5,2:0.5):0.5;")-1) + "\n"
	trees, err := ReadNewickTrees(strings.NewReader(ok+ok), nil)
	if err != nil || len(trees) != 2 {
		t.Errorf("lines at the limit: %d trees, %v", len(trees), err)
	}
}

// TestForEachNewickLabels: each tree is read with its own labels, so a
// leaf label names another row from tree to tree.
func TestForEachNewickLabels(t *testing.T) {
	in := "((a:0.5,b:0.5):0.4,c:0.9):0.1;\n((a:0.5,b:0.5):0.4,c:0.9):0.1;\n"
	labels := [][]string{{"a", "b", "c"}, {"c", "b", "a"}}
	cherry := [][2]NodeID{{0, 1}, {2, 1}} // a and b's rows in each tree
	n := 0
	err := ForEachNewickLabels(strings.NewReader(in), func(i int) []string { return labels[i] }, func(tr *Tree) error {
		c := cherry[n]
		if tr.Parent(c[0]) != tr.Parent(c[1]) {
			t.Errorf("tree %d: rows %d and %d are not a cherry: %s", n, c[0], c[1], tr.Newick())
		}
		if !slices.Equal(tr.Labels, labels[n]) {
			t.Errorf("tree %d: labels %v, want %v", n, tr.Labels, labels[n])
		}
		n++
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("read %d trees: %v", n, err)
	}
}
