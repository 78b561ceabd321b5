// Package spec_test checks that spec.md, the language reference, agrees with
// the implementation: every model example parses, is in canonical format and
// compiles (or fails exactly as the text says), and the tables of the
// standard library list exactly the registered node types, parameters,
// supports, defaults and functions.
package spec_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// specFile is the language reference, relative to the module root.
const specFile = "spec.md"

// modelName is the file name under which every example is parsed; it is
// the name that appears in quoted diagnostics.
const modelName = "model.pydt"

// block is a fenced code block of spec.md.
type block struct {
	lang string   // first word of the info string
	opts []string // remaining words of the info string
	text string   // content, each line ending in "\n"
	line int      // 1-based line of the opening fence
}

func (b block) has(opt string) bool {
	for _, o := range b.opts {
		if o == opt {
			return true
		}
	}
	return false
}

// readSpec returns spec.md and its fenced code blocks in order.
func readSpec(t *testing.T) (string, []block) {
	t.Helper()
	src, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatalf("reading the language reference: %v", err)
	}
	var blocks []block
	var cur *block
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur == nil {
			if rest, ok := strings.CutPrefix(line, "```"); ok {
				words := strings.Fields(rest)
				if len(words) == 0 {
					t.Errorf("%s:%d: code block without an info string (use pydt, text, sh, ebnf, ...)", specFile, n)
					words = []string{""}
				}
				cur = &block{lang: words[0], opts: words[1:], line: n}
				body.Reset()
			}
			continue
		}
		if strings.TrimSpace(line) == "```" {
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated code block", specFile, cur.line)
	}
	return string(src), blocks
}

// exampleOptions are the words a ```pydt info string may carry.
var exampleOptions = regexp.MustCompile(`^(error|syntax-error|parse-only|strict|(set|data):[A-Za-z_][A-Za-z0-9_]*=\S+)$`)

// TestSpecExamples parses, formats and compiles every ```pydt block:
//
//	```pydt                 must parse, be canonical, and compile (partial mode)
//	```pydt error           must parse and be canonical but fail to compile
//	```pydt syntax-error    must fail to parse
//	```pydt parse-only      must parse and be canonical; it must not compile yet
//	strict                  compile without partial mode (dimensions and data required)
//	set:NAME=VALUE          as --set NAME=VALUE
//	data:NAME=FILE          as --data NAME=FILE, FILE being a ```text file=FILE block
//
// An error or syntax-error block must be followed by a ```text block that
// starts with the first diagnostic exactly as ErrorList.Format prints it.
// A compiled block followed by a ```text summary block must produce exactly
// that graph summary.
func TestSpecExamples(t *testing.T) {
	_, blocks := readSpec(t)
	files := map[string]string{}
	for _, b := range blocks {
		for _, o := range b.opts {
			if name, ok := strings.CutPrefix(o, "file="); ok && b.lang == "text" {
				files[name] = b.text
			}
		}
	}
	n := 0
	for i, b := range blocks {
		if b.lang != "pydt" {
			continue
		}
		n++
		var next *block
		if i+1 < len(blocks) {
			next = &blocks[i+1]
		}
		t.Run(fmt.Sprintf("line%d", b.line), func(t *testing.T) {
			checkExample(t, b, next, files)
		})
	}
	if n < 20 {
		t.Errorf("found only %d pydt examples in %s; the extractor is broken or the examples are gone", n, specFile)
	}
}

func checkExample(t *testing.T, b block, next *block, files map[string]string) {
	opts := graph.Options{Partial: true, Set: map[string]float64{}, Data: map[string]*dataset.Matrix{}}
	for _, o := range b.opts {
		if !exampleOptions.MatchString(o) {
			t.Fatalf("unknown option %q in the info string", o)
		}
		kind, kv, _ := strings.Cut(o, ":")
		name, val, _ := strings.Cut(kv, "=")
		switch kind {
		case "strict":
			opts.Partial = false
		case "set":
			x, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("option %q: %v", o, err)
			}
			opts.Set[name] = x
		case "data":
			content, ok := files[val]
			if !ok {
				t.Fatalf("option %q: no ```text file=%s block in %s", o, val, specFile)
			}
			m, err := dataset.Read(val, strings.NewReader(content))
			if err != nil {
				t.Fatalf("option %q: %v", o, err)
			}
			opts.Data[name] = m
		}
	}
	src := []byte(b.text)
	f, err := lang.Parse(modelName, src)
	if b.has("syntax-error") {
		if err == nil {
			t.Fatalf("parsed without error; the block is marked syntax-error")
		}
		quoted(t, err, src, next)
		return
	}
	if err != nil {
		t.Fatalf("parse errors:\n%s", diagnostics(err, src))
	}
	if got := lang.Format(f); !bytes.Equal(got, src) {
		t.Errorf("not in canonical format; lang.Format gives:\n%s", got)
	}
	g, err := graph.Compile(f, opts)
	switch {
	case b.has("parse-only"):
		if err == nil {
			t.Errorf("compiles now; drop parse-only from the block and update the text on unsupported features")
		}
	case b.has("error"):
		if err == nil {
			t.Fatalf("compiled without error; the block is marked error")
		}
		quoted(t, err, src, next)
	case err != nil:
		t.Fatalf("compile errors:\n%s", diagnostics(err, src))
	case next != nil && next.lang == "text" && next.has("summary"):
		var out bytes.Buffer
		if err := g.Summary(&out); err != nil {
			t.Fatal(err)
		}
		if out.String() != next.text {
			t.Errorf("the summary at line %d differs; the compiler prints:\n%s", next.line, out.String())
		}
	}
}

// quoted checks that the block after an error example starts with the
// example's first diagnostic, formatted as the command-line tools print it.
func quoted(t *testing.T, err error, src []byte, next *block) {
	t.Helper()
	var list lang.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error is not a lang.ErrorList: %v", err)
	}
	var first bytes.Buffer
	if err := list[:1].Format(&first, src); err != nil {
		t.Fatal(err)
	}
	if next == nil || next.lang != "text" {
		t.Fatalf("an error example must be followed by a ```text block quoting its first diagnostic:\n%s", first.String())
	}
	if !strings.HasPrefix(next.text, first.String()) {
		t.Errorf("the block at line %d does not start with the first diagnostic; the compiler prints:\n%s", next.line, diagnostics(err, src))
	}
}

// diagnostics renders an error for a test failure message.
func diagnostics(err error, src []byte) string {
	var list lang.ErrorList
	if !errors.As(err, &list) {
		return err.Error()
	}
	var b bytes.Buffer
	if err := list.Format(&b, src); err != nil {
		return err.Error()
	}
	return b.String()
}

// TestSpecRequiredExamples checks that the reference keeps the examples
// its readers rely on.
func TestSpecRequiredExamples(t *testing.T) {
	_, blocks := readSpec(t)
	want := []struct{ what, snippet string }{
		{"the paper's Gaussian model", "X ~ PYDT(alpha, beta, c, 1 / prec)"},
		{"the probit model", "Y[i, d] ~ Probit(Z[i, d])"},
		{"a model with DivInvSq", "DivInvSq("},
		{"a model with DivNeal", "DivNeal("},
		{"a Normal-noise model", "X ~ Normal(Z, sd)"},
		{"constants", "const "},
		{"named arguments", "divergence = "},
	}
	for _, w := range want {
		found := false
		for _, b := range blocks {
			if b.lang == "pydt" && len(b.opts) == 0 && strings.Contains(b.text, w.snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no compiling example of %s (containing %q)", w.what, w.snippet)
		}
	}
}

// section returns the text of spec.md from the heading that starts with
// prefix up to the next heading of the same or a higher level.
func section(t *testing.T, spec, prefix string) string {
	t.Helper()
	lines := strings.Split(spec, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			h := lines[j]
			if hl := len(h) - len(strings.TrimLeft(h, "#")); hl > 0 && hl <= level && strings.HasPrefix(h[hl:], " ") {
				end = j
				break
			}
		}
		return strings.Join(lines[i:end], "\n")
	}
	t.Errorf("%s has no heading starting with %q", specFile, prefix)
	return ""
}

// paramRows checks a parameter table: one row per parameter, in order,
// with its support and default.
func paramRows(t *testing.T, what, sec string, params []stdlib.Param) {
	t.Helper()
	for _, p := range params {
		def := "required"
		if p.HasDefault {
			def = strconv.FormatFloat(p.Default, 'g', -1, 64)
		}
		row := fmt.Sprintf("| `%s` | %s | %s |", p.Name, p.Support, def)
		if !strings.Contains(sec, row) {
			t.Errorf("%s: the table lacks the row %q", what, row)
		}
	}
}

func signature(name string, params []stdlib.Param) string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return name + "(" + strings.Join(names, ", ") + ")"
}

// TestSpecLibrary checks the tables of section 7 against the stdlib
// registry, so that adding or changing a node type without documenting it
// fails.
func TestSpecLibrary(t *testing.T) {
	spec, _ := readSpec(t)
	for _, name := range stdlib.DistNames() {
		d, _ := stdlib.Lookup(name)
		sig := signature(name, d.Params())
		sec := section(t, spec, "### `"+sig+"`")
		if sec == "" {
			continue
		}
		paramRows(t, sig, sec, d.Params())
		if want := "Support of the value: " + d.Support().String() + "."; !strings.Contains(sec, want) {
			t.Errorf("%s: the section lacks %q", sig, want)
		}
	}
	sig := signature(stdlib.PYDTName, stdlib.PYDTParams)
	if sec := section(t, spec, "### `"+sig+"`"); sec != "" {
		paramRows(t, sig, sec, stdlib.PYDTParams)
	}
	for _, name := range []string{"DivInv", "DivInvSq", "DivNeal"} {
		dt, ok := stdlib.LookupDivergence(name)
		if !ok {
			t.Errorf("divergence function %s is documented but not registered", name)
			continue
		}
		sig := signature(name, dt.Params)
		if sec := section(t, spec, "#### `"+sig+"`"); sec != "" {
			paramRows(t, sig, sec, dt.Params)
		}
	}
	funcs := section(t, spec, "### Deterministic functions")
	for _, name := range stdlib.FuncNames() {
		f, _ := stdlib.LookupFunc(name)
		args := []string{"x", "x, y"}[f.Arity-1]
		if row := fmt.Sprintf("| `%s(%s)` |", name, args); !strings.Contains(funcs, row) {
			t.Errorf("deterministic functions: the table lacks the row %q", row)
		}
	}
	// Every documented function row names a registered function.
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z_0-9]+)\\(").FindAllStringSubmatch(funcs, -1) {
		if _, ok := stdlib.LookupFunc(m[1]); !ok {
			t.Errorf("deterministic functions: %s is documented but not registered", m[1])
		}
	}
	kinds := section(t, spec, "### Kinds")
	for _, k := range lang.Kinds() {
		if row := fmt.Sprintf("| `%s` |", k); !strings.Contains(kinds, row) {
			t.Errorf("kinds: the table lacks the row %q", row)
		}
	}
}
