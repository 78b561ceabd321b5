package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/hmm"
)

// gibbs is the blocked Gibbs sampler of a Bayesian HMM over word ids:
// K states, a Dirichlet(transPrior) prior on the initial distribution and
// on each transition row, Dirichlet(emitPrior) on each state's word
// distribution. A sweep draws the states by FFBS given the parameters, then
// the parameters from their Dirichlet posteriors given the states.
type gibbs struct {
	K, V                  int
	transPrior, emitPrior float64
	w                     []int // 0-based word ids
	z                     []int // 0-based states
	chain                 hmm.Chain
	logEmitTab            []float64 // K*V
	logEmit               []float64 // T*K
	ws                    hmm.Workspace
	init, trans, emit     []int
	alpha                 []float64
	rng                   *rand.Rand
}

// newGibbs starts the sampler from parameters drawn from the prior
// (fromPrior) or from states drawn uniformly at random and parameters drawn
// given them. (From random states every state sees the same words and
// the symmetry breaks slowly.)
func newGibbs(w []int, K, V int, transPrior, emitPrior float64, fromPrior bool, rng *rand.Rand) (*gibbs, error) {
	if K < 1 || V < 1 || len(w) == 0 {
		return nil, fmt.Errorf("hmm baseline: K = %d states, V = %d words, %d tokens", K, V, len(w))
	}
	for t, v := range w {
		if v < 0 || v >= V {
			return nil, fmt.Errorf("hmm baseline: word %d of token %d is not in 0..%d", v, t, V-1)
		}
	}
	g := &gibbs{K: K, V: V, transPrior: transPrior, emitPrior: emitPrior, w: w, rng: rng,
		z:          make([]int, len(w)),
		chain:      hmm.Chain{K: K, LogInit: make([]float64, K), LogTrans: make([]float64, K*K)},
		logEmitTab: make([]float64, K*V),
		logEmit:    make([]float64, len(w)*K),
		init:       make([]int, K), trans: make([]int, K*K), emit: make([]int, K*V),
		alpha: make([]float64, max(K, V)),
	}
	if fromPrior {
		return g, g.drawParams(true)
	}
	for t := range g.z {
		g.z[t] = rng.IntN(K)
	}
	return g, g.drawParams(false)
}

// drawParams draws the initial distribution, the transition rows and the
// emission rows from their posteriors given g.z, or from their prior.
func (g *gibbs) drawParams(prior bool) error {
	K, V := g.K, g.V
	clear(g.init)
	clear(g.trans)
	clear(g.emit)
	if !prior {
		if err := hmm.Counts(g.z, K, g.init, g.trans); err != nil {
			return err
		}
		for t, v := range g.w {
			g.emit[g.z[t]*V+v]++
		}
	}
	if err := hmm.LogDirichletPost(g.rng, g.transPrior, g.init, g.alpha, g.chain.LogInit); err != nil {
		return err
	}
	for i := 0; i < K; i++ {
		if err := hmm.LogDirichletPost(g.rng, g.transPrior, g.trans[i*K:(i+1)*K], g.alpha, g.chain.LogTrans[i*K:(i+1)*K]); err != nil {
			return err
		}
		if err := hmm.LogDirichletPost(g.rng, g.emitPrior, g.emit[i*V:(i+1)*V], g.alpha, g.logEmitTab[i*V:(i+1)*V]); err != nil {
			return err
		}
	}
	return nil
}

// sweep runs one Gibbs sweep and returns log p(w | the parameters before
// the sweep).
func (g *gibbs) sweep() (float64, error) {
	K, V := g.K, g.V
	for t, v := range g.w {
		row := g.logEmit[t*K : (t+1)*K]
		for k := range row {
			row[k] = g.logEmitTab[k*V+v]
		}
	}
	ll, err := g.chain.FFBS(g.rng, g.logEmit, len(g.w), g.z, &g.ws)
	if err != nil {
		return math.NaN(), err
	}
	return ll, g.drawParams(false)
}
