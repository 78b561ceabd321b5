package inference

import (
	"strings"
	"testing"
)

// namedStep is an Updater with a given name and explanation, for the
// layout of Schedule.Explain.
type namedStep struct{ name, text string }

func (s namedStep) Name() string        { return s.name }
func (s namedStep) Explain() string     { return s.text }
func (s namedStep) update(*Chain) error { return nil }

// TestExplainAlignsLongNames: a step name longer than the usual 22-character
// column (orbit(prec, noise, times) has 25) widens the column for every
// line, so that the explanations still start in one column; short names keep
// the 22-character column.
func TestExplainAlignsLongNames(t *testing.T) {
	for _, tc := range []struct {
		steps []Updater
		col   int // where each explanation starts
	}{
		{[]Updater{namedStep{"tree", "A"}, namedStep{"gibbs(c)", "B"}}, 4 + 22 + 1},
		{[]Updater{namedStep{"tree", "A"}, namedStep{"orbit(prec, noise, times)", "B"}, namedStep{"σ(x)", "C"}}, 4 + 25 + 1},
	} {
		text := (&Schedule{Steps: tc.steps}).Explain()
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if len(lines) != len(tc.steps) {
			t.Fatalf("%d lines for %d steps:\n%s", len(lines), len(tc.steps), text)
		}
		for i, l := range lines {
			r := []rune(l)
			if len(r) != tc.col+1 || string(r[tc.col]) != tc.steps[i].Explain() || r[tc.col-1] != ' ' {
				t.Errorf("line %q: the explanation %q should start at column %d", l, tc.steps[i].Explain(), tc.col)
			}
		}
	}
}
