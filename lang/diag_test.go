package lang

import (
	"bytes"
	"sort"
	"testing"
)

func TestSuggest(t *testing.T) {
	cands := []string{"alpha", "beta", "Gamma", "Normal", "DivInvSq", "real"}
	tests := []struct{ name, want string }{
		{"alpah", "alpha"},   // transposition
		{"gamma", "Gamma"},   // case only
		{"Normla", "Normal"}, // transposition
		{"Norml", "Normal"},  // deletion
		{"DivInvSqr", "DivInvSq"},
		{"reel", "real"},
		{"bta", "beta"},
		{"al", ""},    // names under three runes need a case-only match
		{"alpha", ""}, // the name itself is not a suggestion
		{"zzzzz", ""}, // nothing close
		{"x", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.name, cands); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"ab", "ba", 1},
		{"kitten", "sitting", 3}, {"ca", "abc", 3}, {"αβ", "βα", 1},
	}
	for _, tt := range tests {
		if got := editDistance([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestErrorListFormat(t *testing.T) {
	src := []byte("a ~ A\n\tb ~ Gama(x\xff, 1)\n")
	var l ErrorList
	l.Add(Position{Filename: "f", Line: 2, Column: 9, Offset: 14}, "late")
	l.Add(Position{Filename: "f", Line: 2, Column: 7, Offset: 12}, "unknown distribution").Hint = "Gamma"
	l.Add(Position{Filename: "f", Line: 9, Column: 1}, "beyond the file")
	sort.Sort(l)
	var b bytes.Buffer
	if err := l.Format(&b, src); err != nil {
		t.Fatal(err)
	}
	want := "f:2:7: unknown distribution\n" +
		"\tb ~ Gama(x\xff, 1)\n" +
		"\t     ^\n" +
		"hint: did you mean \"Gamma\"?\n" +
		"f:2:9: late\n" +
		"\tb ~ Gama(x\xff, 1)\n" +
		"\t       ^\n" +
		"f:9:1: beyond the file\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if l.Err() == nil || ErrorList(nil).Err() != nil {
		t.Error("Err must be nil exactly for an empty list")
	}
}

// TestErrorListSortKeepsInsertionOrder checks that errors at one position
// keep the order they were added in, whatever their text.
func TestErrorListSortKeepsInsertionOrder(t *testing.T) {
	at := func(line, col int) Position { return Position{Filename: "f", Line: line, Column: col} }
	var l ErrorList
	l.Add(at(3, 1), "z: third line")
	l.Add(at(1, 5), "row 2: invalid value")
	l.Add(at(1, 5), "row 3: invalid value")
	l.Add(at(1, 5), "197 more invalid values in X")
	l.Add(at(1, 2), "b: earlier column")
	l.Add(Position{Filename: "e", Line: 9, Column: 9}, "other file first")
	l.Sort()
	want := []string{"other file first", "b: earlier column", "row 2: invalid value", "row 3: invalid value",
		"197 more invalid values in X", "z: third line"}
	for i, e := range l {
		if e.Msg != want[i] {
			t.Errorf("position %d: %q, want %q", i, e.Msg, want[i])
		}
	}
}
