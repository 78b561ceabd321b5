package inference

import (
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// userBeta is a user's node type that is a Beta under another name.
type userBeta struct{ stdlib.Beta }

func (userBeta) Name() string { return "MyBeta" }

// TestPlanEMBetaByCapability: EM learns beta under a prior that offers
// stdlib.BetaPrior, found by capability and not by the name "Beta" (a
// user's Beta-like type was refused).
func TestPlanEMBetaByCapability(t *testing.T) {
	lib := stdlib.Default()
	if err := lib.Register(userBeta{}); err != nil {
		t.Fatal(err)
	}
	f, err := lang.Parse("mybeta.pydt", []byte(`dim N, D
data X : real[N, D]
beta ~ MyBeta(2, 3)
X ~ PYDT(1, beta, 1, 1)
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.Compile(f, graph.Options{Library: lib, Data: map[string]*dataset.Matrix{"X": fourClusters(8, 0.3, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(g)
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanEM(m)
	if err != nil {
		t.Fatal(err)
	}
	if p.Beta == nil || p.Beta.Name != "beta" {
		t.Fatalf("beta not learned: %s", p.Explain())
	}
}
