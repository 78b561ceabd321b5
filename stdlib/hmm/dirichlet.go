package hmm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"
)

func checkAlpha(alpha []float64, dst []float64) error {
	if len(alpha) == 0 {
		return errors.New("hmm: Dirichlet with no components")
	}
	if len(dst) != len(alpha) {
		return fmt.Errorf("hmm: Dirichlet: dst has length %d, want %d", len(dst), len(alpha))
	}
	for k, a := range alpha {
		if !(a > 0) || math.IsInf(a, 1) {
			return fmt.Errorf("hmm: Dirichlet: alpha[%d] = %v, want a positive finite number", k, a)
		}
	}
	return nil
}

// logGamma draws log X for X ~ Gamma(a, 1) with gonum's Gamma sampler. For
// a < 1 it uses X = Y U^(1/a) with Y ~ Gamma(a+1, 1) and U uniform, so
// log X = log Y + log(U)/a is exact even when X itself underflows (a
// small shape puts much mass below 1e-308).
func logGamma(src rand.Source, u *rand.Rand, a float64) float64 {
	if a >= 1 {
		return math.Log(distuv.Gamma{Alpha: a, Beta: 1, Src: src}.Rand())
	}
	y := distuv.Gamma{Alpha: a + 1, Beta: 1, Src: src}.Rand()
	return math.Log(y) + math.Log(1-u.Float64())/a
}

// LogDirichlet draws p ~ Dirichlet(alpha) and writes log p into dst
// (len(dst) = len(alpha)): normalised Gamma(alpha_k, 1) draws from gonum
// (distuv.Gamma), kept in log space so that components far below 1e-308
// (small alpha, large K) stay finite. Use it for a row of transition or
// emission log probabilities: with counts n from Counts, the posterior of a
// row under a Dirichlet(a) prior is Dirichlet(a + n). rng must not be nil.
func LogDirichlet(rng *rand.Rand, alpha []float64, dst []float64) error {
	if rng == nil {
		return errors.New("hmm: LogDirichlet: nil random source")
	}
	if err := checkAlpha(alpha, dst); err != nil {
		return err
	}
	for k, a := range alpha {
		dst[k] = logGamma(rng, rng, a)
	}
	s := floats.LogSumExp(dst)
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return fmt.Errorf("hmm: LogDirichlet: Gamma draws sum to exp(%v)", s)
	}
	for k := range dst {
		dst[k] -= s
	}
	return nil
}

// Dirichlet draws p ~ Dirichlet(alpha) into dst (len(dst) = len(alpha)),
// by LogDirichlet and exponentiation; components below about 1e-308
// become 0. rng must not be nil.
func Dirichlet(rng *rand.Rand, alpha []float64, dst []float64) error {
	if err := LogDirichlet(rng, alpha, dst); err != nil {
		return err
	}
	for k, v := range dst {
		dst[k] = math.Exp(v)
	}
	return nil
}
