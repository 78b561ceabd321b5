package graph

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/lang"
)

// fuzzSeeds returns the models the compiler fuzz target starts from: the
// examples, the models under testdata/ok and testdata/errors, and every
// ```pydt block of the language reference. The hostile cases (long sums,
// deep loops, huge sizes, BOMs, CR line endings, ...) are in
// testdata/fuzz/FuzzCompile, which go test reads by itself.
func fuzzSeeds(t testing.TB) [][]byte {
	t.Helper()
	var seeds [][]byte
	for _, pattern := range []string{"../examples/*.pydt", "testdata/ok/*.pydt", "testdata/errors/*.pydt"} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no seeds match %s", pattern)
		}
		for _, path := range files {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, src)
		}
	}
	spec, err := os.ReadFile("../spec.md")
	if err != nil {
		t.Fatal(err)
	}
	var block *bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(spec))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block == nil && strings.HasPrefix(line, "```pydt"):
			block = &bytes.Buffer{}
		case block != nil && strings.TrimSpace(line) == "```":
			seeds = append(seeds, block.Bytes())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		}
	}
	if len(seeds) < 40 {
		t.Fatalf("only %d seeds", len(seeds))
	}
	return seeds
}

// FuzzCompile parses and compiles mutated models. It checks that Compile
// never panics, that its error is always a non-empty lang.ErrorList whose
// every entry has a position (a line and column in the model, or a --set
// binding), and that the diagnostics and a compiled graph print. Each
// model is compiled twice: unbound (as check does without data) and with
// every dimension bound to 2.
func FuzzCompile(f *testing.F) {
	for _, src := range fuzzSeeds(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := lang.Parse("fuzz.pydt", src)
		if err != nil {
			return // FuzzParse covers the parser's errors
		}
		g := compileChecked(t, file, src, Options{Partial: true})
		if len(g.Dims) == 0 {
			return
		}
		set := map[string]float64{}
		for _, d := range g.Dims {
			set[d.Name] = 2
		}
		compileChecked(t, file, src, Options{Partial: true, Set: set})
	})
}

// compileChecked compiles file and checks the invariants of FuzzCompile.
func compileChecked(t *testing.T, file *lang.File, src []byte, opts Options) *Graph {
	t.Helper()
	g, err := Compile(file, opts)
	if g == nil {
		t.Fatal("Compile returned a nil Graph")
	}
	if err != nil {
		var list lang.ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("Compile error %#v is not a non-empty ErrorList", err)
		}
		lines := 1 + bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r"))
		for _, e := range list {
			inModel := e.Pos.Filename == "fuzz.pydt" && e.Pos.Line >= 1 && e.Pos.Column >= 1 &&
				e.Pos.Line <= lines && e.Pos.Offset <= len(src)
			binding := e.Pos.Line == 0 && strings.HasPrefix(e.Pos.Filename, "--set ")
			if !inModel && !binding {
				t.Errorf("error without a position: %q at %#v\n--- model\n%s", e.Msg, e.Pos, src)
			}
		}
		if err := list.Format(io.Discard, src); err != nil {
			t.Fatal(err)
		}
		return g
	}
	if err := g.Summary(io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, fac := range g.Factors {
		_ = fac.String()
	}
	return g
}
