package inference

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
)

// TestSubModelRows checks the model the subsample's MCMC run estimates α
// and β on (EMPlan.subModel), which no other test looks inside (the
// search's tests see only its α and β, which any rows would give): its
// leaves' data are the chosen rows of the data as the model holds them
// (standardized: not the file's values), with their labels, in order; a
// value clamped by --set stays clamped at that value (a sampled β would
// shift the posterior of α silently), and the learned α and β stay
// latent.
func TestSubModelRows(t *testing.T) {
	src, err := os.ReadFile("../examples/gaussian.pydt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		set     map[string]float64
		clamped map[string]float64
		latent  []string
	}{
		{"both learned", nil, nil, []string{"alpha", "beta", "c", "prec"}},
		{"beta clamped", map[string]float64{"beta": 0.2}, map[string]float64{"beta": 0.2}, []string{"alpha", "c", "prec"}},
		{"alpha clamped", map[string]float64{"alpha": 0.7}, map[string]float64{"alpha": 0.7}, []string{"beta", "c", "prec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := fourClusters(24, 0.3, 5)
			for i := range x.Rows {
				x.RowLabels = append(x.RowLabels, fmt.Sprintf("r%d", i+1))
			}
			raw := slices.Clone(x.Data) // Standardize scales the model's values in place
			m := compileSource(t, "gaussian.pydt", src, map[string]*dataset.Matrix{"X": x}, tc.set)
			if _, err := m.Standardize(); err != nil {
				t.Fatal(err)
			}
			p, err := PlanEM(m)
			if err != nil {
				t.Fatal(err)
			}
			rows := []int{0, 3, 7, 8, 20, 23}
			sub, err := p.subModel(rows)
			if err != nil {
				t.Fatal(err)
			}
			b, sb := m.Trees[0], sub.Trees[0]
			if sb.N != len(rows) || sb.D != b.D || len(sb.Data.Value) != len(rows)*b.D {
				t.Fatalf("subsample of %d rows: %d rows × %d columns, %d values", len(rows), sb.N, sb.D, len(sb.Data.Value))
			}
			standardized := false
			for k, i := range rows {
				for j := range b.D {
					got, want := sb.Data.Value[k*b.D+j], b.Data.Value[i*b.D+j]
					if got != want {
						t.Errorf("row %d (of the data %d), column %d: %v, want the model's %v", k+1, i+1, j+1, got, want)
					}
					standardized = standardized || got != raw[i*b.D+j]
				}
				if l := sb.Data.Data.RowLabels; len(l) != len(rows) || l[k] != x.RowLabels[i] {
					t.Errorf("row %d: labels %v, want %s at %d", k+1, l, x.RowLabels[i], k+1)
				}
			}
			if !standardized {
				t.Error("the subsample holds the file's values, not the standardized ones")
			}
			for name, want := range tc.clamped {
				v := sub.G.ByName[name]
				if v == nil || v.Role != graph.Clamped || v.Value[0] != want {
					t.Errorf("%s in the subsample's model: %+v, want clamped at %v", name, v, want)
				}
			}
			for _, name := range tc.latent {
				if v := sub.G.ByName[name]; v == nil || v.Role != graph.Latent {
					t.Errorf("%s in the subsample's model: %+v, want latent", name, v)
				}
			}
		})
	}
}
