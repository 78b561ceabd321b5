package inference

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadResult checks ReadResult on summary.json files written by hand:
// an MCMC run's is read (null diagnostics as NaN), an EM run's and a
// malformed one are errors naming the file.
func TestReadResult(t *testing.T) {
	for _, tc := range []struct {
		name, text, err string
	}{
		{"mcmc", `{"scalars": [{"name": "log_joint", "mean": -3.5, "rhat": null, "ess_bulk": 12}], "chains": 2}`, ""},
		{"em", `{"method": "em", "bound": -12.5}`, "EM run"},
		{"truncated", `{"scalars": [`, "summary.json"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := ReadResult(dir)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), SummaryFile) {
				t.Errorf("%s: error %v, want one naming %s and %q", tc.name, err, SummaryFile, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Chains != 2 || len(res.Scalars) != 1 || res.Scalars[0].Name != "log_joint" || res.Scalars[0].Mean != -3.5 ||
			!math.IsNaN(res.Scalars[0].Rhat) || res.Scalars[0].ESSBulk != 12 {
			t.Errorf("%s: read %+v", tc.name, res)
		}
	}
}
