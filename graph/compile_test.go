package graph

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
)

var update = flag.Bool("update", false, "rewrite golden files")

// options reads the test directives at the top of a model file:
//
//	#! set N=2 D=3
//	#! data Y=y.csv   (relative to testdata)
//	#! partial
//	#! needpydt
func options(t *testing.T, src []byte) Options {
	t.Helper()
	opts := Options{Set: map[string]float64{}, Data: map[string]*dataset.Matrix{}}
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "#! ")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		switch fields[0] {
		case "partial":
			opts.Partial = true
		case "needpydt":
			opts.NeedPYDT = true
		case "set":
			for _, kv := range fields[1:] {
				k, v, _ := strings.Cut(kv, "=")
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("bad directive %q", line)
				}
				opts.Set[k] = x
			}
		case "data":
			for _, kv := range fields[1:] {
				k, v, _ := strings.Cut(kv, "=")
				m, err := dataset.ReadFile(filepath.Join("testdata", v))
				if err != nil {
					t.Fatal(err)
				}
				m.Source = v
				opts.Data[k] = m
			}
		}
	}
	return opts
}

func compileFile(t *testing.T, path string) (string, *Graph, error) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(path)
	f, err := lang.Parse(name, src)
	if err != nil {
		var b bytes.Buffer
		err.(lang.ErrorList).Format(&b, src)
		t.Fatalf("parse error in test input:\n%s", b.String())
	}
	g, err := Compile(f, options(t, src))
	var b bytes.Buffer
	if err != nil {
		if err := err.(lang.ErrorList).Format(&b, src); err != nil {
			t.Fatal(err)
		}
	}
	return b.String(), g, err
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	want := strings.TrimSuffix(path, ".pydt") + ".golden"
	if *update {
		if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatalf("missing golden file (run go test ./graph -update): %v", err)
	}
	if got != string(b) {
		t.Errorf("%s: output differs from %s\n--- got\n%s--- want\n%s", path, want, got, b)
	}
}

// eachModel runs test as a subtest for each model file under dir.
func eachModel(t *testing.T, dir string, test func(t *testing.T, path string)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.pydt"))
	if len(files) == 0 {
		t.Fatal("no test inputs")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) { test(t, path) })
	}
}

// TestCompileErrors compiles each model under testdata/errors and compares
// the diagnostics, carets and hints with the golden file beside it.
func TestCompileErrors(t *testing.T) {
	eachModel(t, "testdata/errors", func(t *testing.T, path string) {
		got, _, err := compileFile(t, path)
		if err == nil {
			t.Fatalf("compiled without error")
		}
		golden(t, path, got)
	})
}

// TestCompileSummaries compiles each valid model under testdata/ok and
// compares the graph summary with the golden file.
func TestCompileSummaries(t *testing.T) {
	eachModel(t, "testdata/ok", func(t *testing.T, path string) {
		diags, g, err := compileFile(t, path)
		if err != nil {
			t.Fatalf("unexpected errors:\n%s", diags)
		}
		var b bytes.Buffer
		if err := g.Summary(&b); err != nil {
			t.Fatal(err)
		}
		golden(t, path, b.String())
	})
}
