package scalar

import (
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/internal/truncnorm"
)

// NormalAbove draws X ~ Normal(mu, sd²) conditioned on X > lo, exactly, far
// into the tail (Robert 1995); see truncnorm.NormalAbove, which it calls,
// for the method and the preconditions.
func NormalAbove(rng *rand.Rand, mu, sd, lo float64) float64 {
	return truncnorm.NormalAbove(rng, mu, sd, lo)
}

// NormalBelow draws X ~ Normal(mu, sd²) conditioned on X < hi, exactly: the
// mirror image of NormalAbove.
func NormalBelow(rng *rand.Rand, mu, sd, hi float64) float64 {
	return truncnorm.NormalBelow(rng, mu, sd, hi)
}

// StdNormalTail draws Z ~ Normal(0, 1) conditioned on Z > a, exactly.
func StdNormalTail(rng *rand.Rand, a float64) float64 {
	return truncnorm.StdNormalTail(rng, a)
}
