package tagreport

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/internal/brown"
)

// TestHandWorked checks the accuracies and the state table of a tiny
// labelling against values worked out by hand: state 0 holds tokens 0-2
// (words x y x, base tags a a b, full tags a1 a2 b), state 1 token 3 (word z,
// base b, tag b), state 2 is empty.
func TestHandWorked(t *testing.T) {
	tg := &brown.Tagging{
		Vocab:      &brown.Vocab{Words: []string{"x", "y", "z"}},
		Tagset:     []string{"a1", "a2", "b"},
		BaseTagset: []string{"a", "b"},
	}
	z := []int{0, 0, 0, 1}
	w := []int{0, 1, 0, 2}
	base := []int{0, 0, 1, 1}
	tags := []int{0, 1, 2, 2}
	m1b, m1f, o1b, err := Accuracies(tg, z, 3, tags, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"many-to-one base", m1b, 3.0 / 4},
		{"many-to-one full", m1f, 2.0 / 4},
		{"one-to-one base", o1b, 3.0 / 4},
	} {
		if !(math.Abs(tc.got-tc.want) <= 1e-12) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	var buf bytes.Buffer
	mapping, words, err := States(&buf, tg, z, 3, w, base)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := "\nstate  tokens  tag (share)    top words\n" +
		"    1       3  a      ( 67%)  x y\n" +
		"    2       1  b      (100%)  z\n" +
		"    3       0  (empty)\n"
	if buf.String() != wantOut {
		t.Errorf("table:\n%q\nwant\n%q", buf.String(), wantOut)
	}
	if mapping[0] != 0 || mapping[1] != 1 {
		t.Errorf("mapping %v, want states 1, 2 to base tags a, b", mapping)
	}
	if !slices.Equal(words[0], []string{"x", "y"}) || !slices.Equal(words[1], []string{"z"}) || len(words[2]) != 0 {
		t.Errorf("words %q", words)
	}
}

// TestErrors checks that a state out of range is an error, not a panic.
func TestErrors(t *testing.T) {
	tg := &brown.Tagging{Vocab: &brown.Vocab{Words: []string{"x"}}, Tagset: []string{"a"}, BaseTagset: []string{"a"}}
	if _, _, _, err := Accuracies(tg, []int{2}, 1, []int{0}, []int{0}); err == nil {
		t.Error("Accuracies: state 2 of K = 1 accepted")
	}
	if _, _, err := States(&bytes.Buffer{}, tg, []int{2}, 1, []int{0}, []int{0}); err == nil {
		t.Error("States: state 2 of K = 1 accepted")
	}
}
