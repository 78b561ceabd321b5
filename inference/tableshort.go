package inference

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// MaxArrayRows is how many elements of one latent array the printed table
// and the warnings name. A larger array (the topic proportions theta[m, k]
// of a topic model have M·K elements) is shortened to its first
// MaxArrayRows elements and one line that gives its largest R-hat and
// smallest bulk ESS; summary.json and trace.csv keep every element.
const MaxArrayRows = 10

// arrayOf returns the array part of a scalar's name ("theta" for
// "theta[3,2]"), or "" for a plain scalar.
func arrayOf(name string) string {
	if i := strings.IndexByte(name, '['); i > 0 {
		return name[:i]
	}
	return ""
}

// firstOfArray reports whether a list shortened to MaxArrayRows elements
// of each array keeps the scalar name: a plain scalar always, an array
// element when it is among the first MaxArrayRows elements of its array
// met so far (seen counts them, by array, and is updated). It also returns
// the array's name ("" for a plain scalar).
func firstOfArray(seen map[string]int, name string) (string, bool) {
	a := arrayOf(name)
	if a == "" {
		return "", true
	}
	seen[a]++
	return a, seen[a] <= MaxArrayRows
}

// shortArray is an array whose table rows were cut.
type shortArray struct {
	name       string
	hidden     int
	maxRhat    float64
	minESSBulk float64
}

// shortenTable keeps at most MaxArrayRows elements of each array and
// describes the rest.
func shortenTable(sums []diagnostics.Summary) ([]diagnostics.Summary, []shortArray) {
	var kept []diagnostics.Summary
	var cut []shortArray
	at := map[string]int{}
	seen := map[string]int{}
	for _, s := range sums {
		a, keep := firstOfArray(seen, s.Name)
		if keep {
			kept = append(kept, s)
			continue
		}
		i, ok := at[a]
		if !ok {
			i = len(cut)
			at[a] = i
			cut = append(cut, shortArray{name: a, maxRhat: math.Inf(-1), minESSBulk: math.Inf(1)})
		}
		c := &cut[i]
		c.hidden++
		// NaN R-hat or ESS (a constant element) is left out of the extremes.
		if s.Rhat > c.maxRhat {
			c.maxRhat = s.Rhat
		}
		if s.ESSBulk < c.minESSBulk {
			c.minESSBulk = s.ESSBulk
		}
	}
	return kept, cut
}

// writeShortTable prints the table with large arrays shortened.
func writeShortTable(w io.Writer, sums []diagnostics.Summary) error {
	kept, cut := shortenTable(sums)
	if err := diagnostics.WriteTable(w, kept); err != nil {
		return err
	}
	for _, c := range cut {
		// With every hidden element constant (R-hat and ESS NaN) the
		// extremes are infinite: printed as NA, as the table prints NaN.
		rhat, ess := "NA", "NA"
		if !math.IsInf(c.maxRhat, 0) {
			rhat = fmt.Sprintf("%.3f", c.maxRhat)
		}
		if !math.IsInf(c.minESSBulk, 0) {
			ess = fmt.Sprintf("%.0f", c.minESSBulk)
		}
		if _, err := fmt.Fprintf(w, "... %s: %d more elements not shown (largest rhat %s, smallest ess_bulk %s); summary.json and trace.csv hold every element\n",
			c.name, c.hidden, rhat, ess); err != nil {
			return err
		}
	}
	return nil
}

// nameList joins names for a warning, naming at most MaxArrayRows
// elements of any one array and counting the rest.
func nameList(names []string) string {
	perArray := map[string]int{}
	more := map[string]int{}
	var order []string
	var out []string
	for _, n := range names {
		a, keep := firstOfArray(perArray, n)
		if keep {
			out = append(out, n)
			continue
		}
		if more[a] == 0 {
			order = append(order, a)
		}
		more[a]++
	}
	for _, a := range order {
		out = append(out, fmt.Sprintf("%d more elements of %s", more[a], a))
	}
	return strings.Join(out, ", ")
}
