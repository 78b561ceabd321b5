package inference

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/em"
)

// Tilted returns the leaf factor's stdlib.TiltedLeaf capability when its
// evidence has no closed form (an augmented likelihood such as Probit) but
// expectation propagation can approximate it; nil otherwise.
func (b *TreeBinding) Tilted() stdlib.TiltedLeaf {
	if b.augmented == nil || b.Leaf == nil {
		return nil
	}
	t, _ := b.Leaf.Type.(stdlib.TiltedLeaf)
	return t
}

// leafSite is the leaf factor as an EP site (em.Site), its parameters
// evaluated at each entry.
type leafSite struct {
	b   *TreeBinding
	env *graph.Env
	t   stdlib.TiltedLeaf
	p   []float64
}

func (s *leafSite) Tilted(k int, y, m, v float64) (float64, float64, float64, error) {
	q, err := s.b.params(s.env, k, math.NaN(), &s.p)
	if err != nil {
		return 0, 0, 0, err
	}
	return s.t.Tilted(y, m, v, q)
}

// EPLogLik returns expectation propagation's approximation of the log
// density of the data given the tree tr (every location integrated out)
// at diffusion variance variance, for a leaf likelihood that offers
// stdlib.TiltedLeaf (see em.EP). It is an approximation, not a bound.
func (b *TreeBinding) EPLogLik(env *graph.Env, tr *pydt.Tree, variance float64) (float64, error) {
	t := b.Tilted()
	if t == nil {
		return 0, unsupportedError(fmt.Sprintf("the leaf likelihood of %s offers no EP approximation (stdlib.TiltedLeaf)", b.Leaves.Name))
	}
	if b.Data == nil {
		return 0, nil
	}
	y := env.Values[b.Data.ID]
	ep, err := em.NewEP(&leafSite{b: b, env: env, t: t}, y, b.N, b.D)
	if err != nil {
		return 0, err
	}
	ll, err := em.EPLogLikSites(tr, variance, ep)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.Leaf, err)
	}
	return ll, nil
}
