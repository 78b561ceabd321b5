package predict

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// DefaultProbitBurn and DefaultProbitDraws are the refresh sweeps of the
// auxiliary variables per tree of a Probit run when RunOptions.ProbitBurn
// or RunOptions.ProbitDraws is zero: the first DefaultProbitBurn sweeps
// are discarded and each of the next DefaultProbitDraws gives a predictive
// mixture.
const (
	DefaultProbitBurn  = 20
	DefaultProbitDraws = 5
)

// ProbitGibbs runs, for the tree of lik with its parameters fixed, a Gibbs
// sampler of the Probit auxiliary variables u given the binary data y
// (N·D entries, row-major, 0 or 1, NaN missing): it alternates the latent
// locations given u (bp.SampleLocations, with leaf evidence N(u; z, 1)) and
// u given the leaf locations z (Normal(z, 1) truncated to u > 0 when
// y = 1, u < 0 when y = 0), as the run's sampler does with the tree fixed.
// The locations start from the prior given the tree. After burn sweeps,
// each of the next draws sweeps calls fn with the Gaussian predictive
// mixture of the tree given that u (Tree, no noise): a new row's binary
// entries then have P(y = 1) = Φ(μ/√(1+v)) per component
// (Mixture.LogProbBinary), and the average over draws of those
// probabilities is a Markov chain estimate of the posterior predictive
// given the tree. lik's evidence is overwritten.
func ProbitGibbs(rng *rand.Rand, lik *bp.Model, p Params, y []float64, burn, draws int, opt Options, fn func(*Mixture) error) error {
	d := lik.Dims()
	for k, v := range y {
		if !math.IsNaN(v) && v != 0 && v != 1 {
			return fmt.Errorf("predict: binary data entry %d (row %d, column %d) is %v, not 0 or 1", k+1, k/d+1, k%d+1, v)
		}
	}
	return thresholdGibbs(rng, lik, p, y, probitSide, burn, draws, opt, fn)
}

// probitSide is stdlib.Probit's Side: y = 1 says u > 0, y = 0 says u < 0.
func probitSide(y float64) float64 { return 2*y - 1 }

// thresholdGibbs is ProbitGibbs for any stdlib.ThresholdLeaf: side(y) = +1
// says u > 0 and −1 says u < 0 (ThresholdLeaf.Side).
func thresholdGibbs(rng *rand.Rand, lik *bp.Model, p Params, y []float64, side func(float64) float64, burn, draws int, opt Options, fn func(*Mixture) error) error {
	tr := lik.Tree()
	d := lik.Dims()
	n := tr.NumLeaves()
	if len(y) != n*d {
		return fmt.Errorf("predict: %d binary data entries for %d leaves and %d dimensions", len(y), n, d)
	}
	for k, v := range y {
		if s := side(v); !math.IsNaN(v) && s != 1 && s != -1 {
			return fmt.Errorf("predict: data entry %d (row %d, column %d) is %v, on neither side of the threshold", k+1, k/d+1, k%d+1, v)
		}
	}
	if burn < 0 || draws < 1 {
		return fmt.Errorf("predict: need burn ≥ 0 and at least one draw, got %d and %d", burn, draws)
	}
	if p.Noise != nil {
		return fmt.Errorf("predict: a Probit model has no noise variance")
	}
	s2, err := p.variances(d)
	if err != nil {
		return err
	}
	if err := lik.SetVariances(s2); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	for i := range n {
		for k := range d {
			if err := lik.SetEvidence(pydt.NodeID(i), k, 0, 0); err != nil {
				return fmt.Errorf("predict: %w", err)
			}
		}
	}
	locs := make([]float64, tr.Cap()*d)
	for s := range burn + draws {
		if err := lik.SampleLocations(rng, locs); err != nil {
			return fmt.Errorf("predict: probit refresh sweep %d: %w", s+1, err)
		}
		for i := range n {
			for k := range d {
				yv := y[i*d+k]
				if math.IsNaN(yv) {
					continue
				}
				z := locs[i*d+k]
				var u float64
				if side(yv) > 0 {
					u = scalar.NormalAbove(rng, z, 1, 0)
				} else {
					u = scalar.NormalBelow(rng, z, 1, 0)
				}
				if err := lik.SetEvidence(pydt.NodeID(i), k, u, 1); err != nil {
					return fmt.Errorf("predict: %w", err)
				}
			}
		}
		if s < burn {
			continue
		}
		mx, err := Tree(lik, p, opt)
		if err != nil {
			return err
		}
		if err := fn(mx); err != nil {
			return err
		}
	}
	return nil
}

// probitMixture returns the average of the mixtures of thresholdGibbs's
// draws with the sides side: one mixture
// holding every draw's components with their weights divided by draws.
func probitMixture(rng *rand.Rand, lik *bp.Model, p Params, y []float64, side func(float64) float64, burn, draws int, opt Options) (*Mixture, error) {
	out := &Mixture{D: lik.Dims()}
	lw := -math.Log(float64(draws))
	err := thresholdGibbs(rng, lik, p, y, side, burn, draws, opt, func(mx *Mixture) error {
		for j := range mx.LogW {
			out.LogW = append(out.LogW, mx.LogW[j]+lw)
		}
		out.Mean = append(out.Mean, mx.Mean...)
		out.Var = append(out.Var, mx.Var...)
		out.Node = append(out.Node, mx.Node...)
		out.At = append(out.At, mx.At...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
