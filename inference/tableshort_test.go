package inference

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference/diagnostics"
)

// TestShortTable: an array of more than MaxArrayRows elements is cut to
// its first MaxArrayRows rows and one line whose extremes come from the
// hidden rows; scalars and small arrays are printed whole; the warnings
// name at most MaxArrayRows elements of an array and count the rest.
func TestShortTable(t *testing.T) {
	sums := []diagnostics.Summary{{Name: "alpha", Rhat: 1, ESSBulk: 500}}
	for i := 1; i <= 3; i++ {
		sums = append(sums, diagnostics.Summary{Name: fmt.Sprintf("w[%d]", i), Rhat: 1, ESSBulk: 400})
	}
	var bad []string
	for i := 1; i <= 25; i++ {
		s := diagnostics.Summary{Name: fmt.Sprintf("theta[%d,1]", i), Rhat: 1.0, ESSBulk: 300}
		if i == 17 {
			s.Rhat, s.ESSBulk = 1.5, 12
		}
		sums = append(sums, s)
		bad = append(bad, s.Name)
	}
	var b strings.Builder
	if err := writeShortTable(&b, sums); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"alpha", "w[3]", "theta[10,1]", "... theta: 15 more elements not shown (largest rhat 1.500, smallest ess_bulk 12)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "theta[11,1]") {
		t.Errorf("table shows theta[11,1]:\n%s", out)
	}
	// Every hidden element constant: NA, not -Inf.
	var flat []diagnostics.Summary
	for i := 1; i <= MaxArrayRows+2; i++ {
		flat = append(flat, diagnostics.Summary{Name: fmt.Sprintf("k[%d]", i), Rhat: math.NaN(), ESSBulk: math.NaN()})
	}
	b.Reset()
	if err := writeShortTable(&b, flat); err != nil {
		t.Fatal(err)
	}
	if want := "... k: 2 more elements not shown (largest rhat NA, smallest ess_bulk NA)"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	got := nameList(append([]string{"alpha", "w[1]"}, bad...))
	want := "alpha, w[1], theta[1,1], theta[2,1], theta[3,1], theta[4,1], theta[5,1], theta[6,1], theta[7,1], theta[8,1], theta[9,1], theta[10,1], 15 more elements of theta"
	if got != want {
		t.Errorf("nameList = %q, want %q", got, want)
	}
}
