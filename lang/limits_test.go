package lang

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// parseErrors parses src and returns its diagnostics, failing the test if
// there are none.
func parseErrors(t *testing.T, src string) ErrorList {
	t.Helper()
	_, err := Parse("model.pydt", []byte(src))
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Parse error is %v, want a non-empty ErrorList", err)
	}
	return list
}

// sum returns the model line "X ~ PYDT(1, 0.5, 1, 1 / prec + 0 + ... + 0)"
// with terms zeros.
func sum(terms int) string {
	return "prec ~ Gamma(1, 1)\nX ~ PYDT(1, 0.5, 1, 1 / prec" + strings.Repeat(" + 0", terms) + ")\n"
}

// TestLongStatement checks that a statement longer than MaxStatementTokens
// is one positioned error, found without parsing it, and that one just
// under the limit parses and formats (the formatter and Walk recurse once
// per operator of a chain).
func TestLongStatement(t *testing.T) {
	list := parseErrors(t, sum(20_000)+"beta ~ Beta(1, 1) $\n")
	if len(list) != 2 {
		t.Fatalf("got %d errors, want 2:\n%v", len(list), list)
	}
	want := "model.pydt:2:1: statement too long (more than 10000 tokens): split it into smaller statements"
	if got := list[0].Error(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The parser resynchronises after the long statement.
	if got := list[1].Error(); got != `model.pydt:3:19: invalid character "$"` {
		t.Errorf("second error %q", got)
	}

	// A cut between two items of a list is not also a second statement.
	names := make([]string, MaxStatementTokens/2+10)
	for i := range names {
		names[i] = fmt.Sprintf("d%d", i)
	}
	list = parseErrors(t, "dim "+strings.Join(names, ", ")+"\n")
	if len(list) != 1 || !strings.HasPrefix(list[0].Msg, "statement too long") {
		t.Errorf("a long dim list: %v", list)
	}

	src := sum(MaxStatementTokens/2 - 10)
	f, err := Parse("model.pydt", []byte(src))
	if err != nil {
		t.Fatalf("a statement under the limit: %v", err)
	}
	if got := string(Format(f)); got != src {
		t.Errorf("Format changed a long sum")
	}
	n := 0
	Inspect(f, func(Node) bool { n++; return true })
	if n < MaxStatementTokens/2 {
		t.Errorf("Inspect visited %d nodes", n)
	}
}

// TestNestingLimits checks the limits on brackets and loops: deep
// parentheses are fine up to the documented 200 levels, and a loop that
// brings more than MaxLoopIndices indices into scope is reported once and
// left out of the tree, however deep the nesting goes.
func TestNestingLimits(t *testing.T) {
	paren := func(n int) string {
		return "x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n"
	}
	if _, err := Parse("model.pydt", []byte(paren(maxNesting-1))); err != nil {
		t.Errorf("%d parentheses: %v", maxNesting-1, err)
	}
	list := parseErrors(t, paren(1000))
	if len(list) != 1 || !strings.Contains(list[0].Msg, "nested too deeply") {
		t.Errorf("1000 parentheses: %v", list)
	}

	loops := func(k int) string {
		return "dim N\nparam z : real[N]\n" + strings.Repeat("for i in 1:N {\n", k) +
			"z[i] ~ Normal(0, 1)\n" + strings.Repeat("}\n", k) + "y ~ Normal(0, 1) $\n"
	}
	if list := parseErrors(t, loops(MaxLoopIndices)); len(list) != 1 || list[0].Msg != `invalid character "$"` {
		t.Errorf("%d nested loops: %v", MaxLoopIndices, list)
	}
	for _, k := range []int{MaxLoopIndices + 1, 4000} {
		f, err := Parse("model.pydt", []byte(loops(k)))
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 2 {
			t.Fatalf("%d nested loops: got %v, want two errors", k, err)
		}
		want := "model.pydt:103:1: loops nested too deeply (more than 100 loop indices in scope)"
		if got := list[0].Error(); got != want {
			t.Errorf("%d nested loops: got %q, want %q", k, got, want)
		}
		if got := list[1].Pos.Line; got != k*2+4 {
			t.Errorf("%d nested loops: the parser lost its place: %v", k, list[1])
		}
		depth := 0
		for s := f.Stmts[2]; s != nil; depth++ {
			fb, ok := s.(*ForBlock)
			if !ok {
				break
			}
			s = nil
			if len(fb.Body) > 0 {
				s = fb.Body[0]
			}
		}
		if depth != MaxLoopIndices {
			t.Errorf("%d nested loops: the tree holds %d, want %d", k, depth, MaxLoopIndices)
		}
	}
	// Several ranges in one header count one each.
	list = parseErrors(t, "for "+strings.Repeat("i in 1:2, ", MaxLoopIndices)+"j in 1:2 { }\n")
	if len(list) != 1 || !strings.Contains(list[0].Msg, "loops nested too deeply") {
		t.Errorf("a header with %d ranges: %v", MaxLoopIndices+1, list)
	}
}

// TestSuggestLongName checks that Suggest gives up on names longer than
// MaxSuggestLen rather than spending time quadratic in their length.
func TestSuggestLongName(t *testing.T) {
	long := strings.Repeat("a", 20_000)
	if got := Suggest(long, []string{long + "b", "alpha"}); got != "" {
		t.Errorf("Suggest matched a name of %d runes", len(long))
	}
	if got := Suggest("alpah", []string{long, "alpha"}); got != "alpha" {
		t.Errorf("Suggest(alpah) = %q with a long candidate", got)
	}
	name := strings.Repeat("b", MaxSuggestLen)
	if got := Suggest(name, []string{name[1:] + "c"}); got != name[1:]+"c" {
		t.Errorf("a name of MaxSuggestLen runes got no hint")
	}
}

// TestFormatClipsLongLines checks that a diagnostic on a very long line
// shows a window around the column, marked with "…", with the caret under
// the right character; and that a message quoting a huge name is cut.
func TestFormatClipsLongLines(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		col      int    // 1-based rune column of the error
		wantLine string // the clipped source line
	}{
		{"start", "x$" + strings.Repeat("y", 1_000_000), 2, "x$" + strings.Repeat("y", 60) + "…"},
		{"middle", strings.Repeat("y", 500_000) + "$" + strings.Repeat("y", 500_000), 500_001,
			"…" + strings.Repeat("y", 60) + "$" + strings.Repeat("y", 60) + "…"},
		{"end", strings.Repeat("é", 100) + "$", 101, "…" + strings.Repeat("é", 60) + "$"},
		{"tabs", "\t\ty$", 4, "\t\ty$"},
		{"short", "abc$", 4, "abc$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte("dim N\n" + tt.line + "\n")
			offset := 6 + len(string([]rune(tt.line)[:tt.col-1]))
			var l ErrorList
			l.Add(Position{Filename: "f", Line: 2, Column: tt.col, Offset: offset}, "bad")
			var b bytes.Buffer
			if err := l.Format(&b, src); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != 3 || lines[1] != tt.wantLine {
				t.Fatalf("got\n%s\nwant the line %q", b.String(), tt.wantLine)
			}
			caret := []rune(lines[2])
			shown := []rune(lines[1])
			if len(caret) == 0 || caret[len(caret)-1] != '^' || shown[len(caret)-1] != '$' {
				t.Errorf("the caret is not under the error:\n%s", b.String())
			}
			for i, r := range caret[:len(caret)-1] {
				if r == '\t' && shown[i] != '\t' || r != '\t' && r != ' ' {
					t.Errorf("bad caret padding %q", lines[2])
				}
			}
		})
	}

	// A position without an offset (an error made by hand) is found by
	// its column.
	var l ErrorList
	l.Add(Position{Filename: "f", Line: 1, Column: 300_001}, "bad")
	var b bytes.Buffer
	if err := l.Format(&b, []byte(strings.Repeat("y", 300_000)+"$"+strings.Repeat("y", 300_000))); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 300 || !strings.Contains(b.String(), "…"+strings.Repeat("y", 60)+"$") {
		t.Errorf("by column: got %d bytes:\n%.400s", b.Len(), b.String())
	}

	// A message quoting a huge name is cut.
	l = ErrorList{{Pos: Position{Filename: "f", Line: 1, Column: 1}, Msg: "undefined: " + strings.Repeat("a", 100_000)}}
	b.Reset()
	if err := l.Format(&b, nil); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 600 || !strings.HasSuffix(b.String(), "a…\n") {
		t.Errorf("a long message: %d bytes", b.Len())
	}
}

// TestFormatLineEndings checks that Format finds lines ending in "\r\n" or
// a lone "\r" and skips a byte order mark, as Parse does.
func TestFormatLineEndings(t *testing.T) {
	for _, src := range []string{
		"\uFEFFa = 1\nb = 2 $\nc = 3\n", "a = 1\r\nb = 2 $\r\nc = 3\r\n", "a = 1\rb = 2 $\rc = 3\r", "\uFEFFa = 1\rb = 2 $\r\nc = 3",
	} {
		_, err := Parse("f", []byte(src))
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 1 {
			t.Fatalf("%q: got %v, want one error", src, err)
		}
		var b bytes.Buffer
		if err := list.Format(&b, []byte(src)); err != nil {
			t.Fatal(err)
		}
		want := "f:2:7: invalid character \"$\"\nb = 2 $\n      ^\n"
		if b.String() != want {
			t.Errorf("%q: got\n%q\nwant\n%q", src, b.String(), want)
		}
	}
}

// TestRemoveDuplicates checks that only exact repeats are removed.
func TestRemoveDuplicates(t *testing.T) {
	at := func(line, col int) Position { return Position{Filename: "f", Line: line, Column: col} }
	var l ErrorList
	l.Add(at(2, 1), "b")
	l.Add(at(1, 1), "a")
	l.Add(at(2, 1), "b")
	l.Add(at(2, 1), "c")
	l.Add(at(2, 1), "b").Hint = "x"
	l.Add(at(1, 1), "a")
	l.RemoveDuplicates()
	var got []string
	for _, e := range l {
		got = append(got, e.Error()+e.Hint)
	}
	want := "f:1:1: a|f:2:1: b|f:2:1: c|f:2:1: bx"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestFormatManyErrors checks that Format stops after MaxFormatted
// diagnostics: a line of 200,000 stray characters is 200,000 errors.
func TestFormatManyErrors(t *testing.T) {
	src := []byte("x ~ Normal(0, 1)\n" + strings.Repeat("$", 200_000) + "\n")
	list := parseErrors(t, string(src))
	if len(list) != 200_000 {
		t.Errorf("%d errors", len(list))
	}
	var b bytes.Buffer
	if err := list.Format(&b, src); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 40_000 || !strings.HasSuffix(b.String(), "\n... and 199900 more errors\n") {
		t.Errorf("%d bytes, ending %q", b.Len(), b.String()[max(0, b.Len()-100):])
	}
}

// BenchmarkLongStatement measures parsing a statement just under
// MaxStatementTokens, so that a change that makes it superlinear shows up
// under benchstat rather than as a timed assertion in a test.
func BenchmarkLongStatement(b *testing.B) {
	src := sum(MaxStatementTokens/2 - 20)
	for b.Loop() {
		if _, err := Parse("model.pydt", []byte(src)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSuggestLongName measures Suggest against a candidate far longer
// than MaxSuggestLen, which it must skip rather than compare.
func BenchmarkSuggestLongName(b *testing.B) {
	long := strings.Repeat("a", 20_000)
	for b.Loop() {
		Suggest("alpah", []string{long, "alpha"})
	}
}
