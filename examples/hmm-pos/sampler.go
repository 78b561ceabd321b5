package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/hmm"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/pydt/sim"
	"github.com/pydtlang/pydtlang/stdlib/softmaxleaf"
)

// config holds the model's fixed parameters.
type config struct {
	K, V       int
	transPrior float64 // Dirichlet parameter of the initial distribution and of each transition row
	alpha      float64 // the PYDT's α, β and divergence constant c (a(t) = c/(1-t)), fixed
	beta, c    float64
	precShape  float64 // Gamma(shape, rate) prior on the diffusion precision 1/σ²
	precRate   float64
}

// sampler is the blocked Gibbs sampler of an HMM over word ids whose
// states' emission logits η_k (length V, emission probabilities
// softmax(η_k)) are the leaves of a PYDT:
//
//	prec ~ Gamma(precShape, precRate)
//	eta  ~ PYDT(alpha, beta, c, 1 / prec)      # K leaves in V dimensions
//	pi0 ~ Dirichlet(transPrior); trans[k] ~ Dirichlet(transPrior)
//	z[1] ~ Categorical(pi0); z[t] ~ Categorical(trans[z[t - 1]])
//	w[t] ~ Categorical(softmax(eta[z[t]]))
//
// A sweep draws, each from its conditional given everything else: z by
// FFBS; pi0 and the transition rows from their Dirichlet posteriors; each
// η_k by softmaxleaf's AuxGibbs and Step given the tree's Gaussian message into
// leaf k (belief propagation with η_k's own evidence removed and every
// other leaf observed exactly) and the counts of the words its state
// emits; the tree given η as exactly observed leaves (treemove: subtree,
// time and position moves); the precision from its Gamma conditional
// given the tree and η with the internal locations integrated out, as the
// engine's gibbs(prec) draws it (bp.Model.UnitStats).
type sampler struct {
	config
	w, z  []int
	chain hmm.Chain
	eta   []float64 // K×V
	logEm []float64 // K×V: log softmax(η_k)
	emit  []float64 // T×K
	ws    hmm.Workspace
	sw    softmaxleaf.Workspace

	tree   *pydt.Tree
	lik    *bp.Model
	moves  *treemove.Sampler
	prec   float64
	counts []float64 // K×V
	init   []int
	trans  []int
	alpha  []float64
	// scratch: BP marginals (Cap·V), the message into a leaf.
	mMean, mVar, mu, mp []float64
	// scratch of UnitStats, per dimension.
	unitQ, unitC []float64
	unitN        []int
	rng          *rand.Rand
	// Accepted counts the accepted MH proposals of the η updates.
	Accepted, Proposed int
}

func (c config) check() error {
	if c.K < 2 || c.V < 2 {
		return fmt.Errorf("hmm-pos: need K >= 2 states and V >= 2 words, got K = %d, V = %d", c.K, c.V)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"trans-prior", c.transPrior}, {"c", c.c}, {"prec shape", c.precShape}, {"prec rate", c.precRate}} {
		if !(p.v > 0) || math.IsInf(p.v, 1) {
			return fmt.Errorf("hmm-pos: %s = %v, need a positive number", p.name, p.v)
		}
	}
	return pydt.CheckPrior(c.alpha, c.beta, pydt.DivInv{C: c.c})
}

// newSampler starts from the prior: the precision, the tree and η, the
// initial distribution and the transition rows drawn from it.
func newSampler(cfg config, w []int, rng *rand.Rand) (*sampler, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	K, V := cfg.K, cfg.V
	if len(w) == 0 {
		return nil, fmt.Errorf("hmm-pos: no tokens")
	}
	for t, v := range w {
		if v < 0 || v >= V {
			return nil, fmt.Errorf("hmm-pos: word %d of token %d is not in 0..%d", v, t, V-1)
		}
	}
	s := &sampler{config: cfg, w: w, rng: rng,
		z:      make([]int, len(w)),
		chain:  hmm.Chain{K: K, LogInit: make([]float64, K), LogTrans: make([]float64, K*K)},
		eta:    make([]float64, K*V),
		logEm:  make([]float64, K*V),
		emit:   make([]float64, len(w)*K),
		counts: make([]float64, K*V),
		init:   make([]int, K), trans: make([]int, K*K), alpha: make([]float64, K),
		mu: make([]float64, V), mp: make([]float64, V),
	}
	s.prec = distuv.Gamma{Alpha: cfg.precShape, Beta: cfg.precRate, Src: rng}.Rand()
	if err := s.drawTree(); err != nil {
		return nil, err
	}
	if err := s.drawChainParams(true); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sampler) div() pydt.Divergence { return pydt.DivInv{C: s.c} }

// drawTree draws the tree and η from the PYDT prior given s.prec and sets
// up belief propagation and the tree moves on it.
func (s *sampler) drawTree() error {
	K, V := s.K, s.V
	tr, x, err := sim.Draw(s.rng, K, sim.Params{Alpha: s.config.alpha, Beta: s.beta, Div: s.div(), Variance: 1 / s.prec, Dims: V})
	if err != nil {
		return err
	}
	copy(s.eta, x[:K*V])
	return s.setTree(tr)
}

// setTree makes tr the sampler's tree, with η observed at its leaves.
func (s *sampler) setTree(tr *pydt.Tree) error {
	s.tree = tr
	s.lik = bp.New(tr, s.V)
	if err := s.lik.SetVariance(1 / s.prec); err != nil {
		return err
	}
	if err := s.lik.ObserveMatrix(s.eta); err != nil {
		return err
	}
	mv, err := treemove.New(s.lik, s.config.alpha, s.beta, s.div(), s.rng)
	if err != nil {
		return err
	}
	s.moves = mv
	n := tr.Cap() * s.V
	s.mMean, s.mVar = make([]float64, n), make([]float64, n)
	s.unitQ, s.unitC, s.unitN = make([]float64, s.V), make([]float64, s.V), make([]int, s.V)
	s.refreshEmissions()
	return nil
}

// refreshEmissions recomputes log softmax(η_k) for every state.
func (s *sampler) refreshEmissions() {
	V := s.V
	for k := range s.K {
		row := s.eta[k*V : (k+1)*V]
		lse := softmaxleaf.LogSumExp(row)
		for v, x := range row {
			s.logEm[k*V+v] = x - lse
		}
	}
}

// drawChainParams draws the initial distribution and the transition rows
// from their posteriors given s.z, or from their prior.
func (s *sampler) drawChainParams(prior bool) error {
	K := s.K
	clear(s.init)
	clear(s.trans)
	if !prior {
		if err := hmm.Counts(s.z, K, s.init, s.trans); err != nil {
			return err
		}
	}
	if err := hmm.LogDirichletPost(s.rng, s.transPrior, s.init, s.alpha, s.chain.LogInit); err != nil {
		return err
	}
	for i := range K {
		if err := hmm.LogDirichletPost(s.rng, s.transPrior, s.trans[i*K:(i+1)*K], s.alpha, s.chain.LogTrans[i*K:(i+1)*K]); err != nil {
			return err
		}
	}
	return nil
}

// drawStates draws z by FFBS and returns log p(w | parameters).
func (s *sampler) drawStates() (float64, error) {
	K, V := s.K, s.V
	for t, v := range s.w {
		row := s.emit[t*K : (t+1)*K]
		for k := range row {
			row[k] = s.logEm[k*V+v]
		}
	}
	return s.chain.FFBS(s.rng, s.emit, len(s.w), s.z, &s.ws)
}

// message writes the tree's Gaussian message into leaf k (the conditional
// of η_k given every other leaf, the tree and the precision) to s.mu
// (means) and s.mp (precisions): leaf k's evidence is removed, the
// marginals computed, and the evidence restored by the caller.
func (s *sampler) message(k int) error {
	V := s.V
	leaf := pydt.NodeID(k)
	for d := range V {
		if err := s.lik.SetEvidence(leaf, d, 0, 0); err != nil {
			return err
		}
	}
	if err := s.lik.Marginals(s.mMean, s.mVar); err != nil {
		return err
	}
	for d := range V {
		s.mu[d] = s.mMean[k*V+d]
		s.mp[d] = 1 / s.mVar[k*V+d]
	}
	return nil
}

// drawEta draws each η_k given the tree, the other leaves and the counts
// of the words state k emits.
func (s *sampler) drawEta() error {
	K, V := s.K, s.V
	clear(s.counts)
	for t, v := range s.w {
		s.counts[s.z[t]*V+v]++
	}
	for k := range K {
		if err := s.message(k); err != nil {
			return fmt.Errorf("message into leaf %d: %w", k+1, err)
		}
		row := s.eta[k*V : (k+1)*V]
		tg := softmaxleaf.Target{Mu: s.mu, Prec: s.mp, Counts: s.counts[k*V : (k+1)*V]}
		// The augmentation sweep follows changed counts within a few
		// sweeps; the Laplace steps add moves along correlated
		// directions. Each leaves the conditional invariant.
		if err := s.sw.AuxGibbs(s.rng, &tg, row); err != nil {
			return fmt.Errorf("eta[%d]: %w", k+1, err)
		}
		acc, err := s.sw.Step(s.rng, &tg, row)
		if err != nil {
			return fmt.Errorf("eta[%d]: %w", k+1, err)
		}
		s.Proposed++
		if acc {
			s.Accepted++
		}
		for d, x := range row {
			if err := s.lik.Observe(pydt.NodeID(k), d, x); err != nil {
				return err
			}
		}
	}
	s.refreshEmissions()
	return nil
}

// drawPrec draws the diffusion precision from its Gamma conditional given
// the tree and η, the internal locations integrated out: with η observed
// exactly at the leaves, log p(η | tree, prec) = Σ_d [c_d + (n_d/2) log prec
// − prec q_d / 2] (bp.Model.UnitStats: q_d = η_dᵀ K⁻¹ η_d, K_ij the time
// of the lowest common ancestor of leaves i and j), so the conditional is
// Gamma(shape + Σn/2, rate + Σq/2). This is the engine's gibbs(prec)
// (inference.gibbsPrecisionStep; session 22); drawn given sampled
// locations, as this sampler did before, the precision is conditioned on
// the K − 1 internal locations as well, which are strongly coupled with
// it. A state whose statistics float64 cannot form (values meeting through
// edges of numerically zero length) keeps its precision, as the engine's.
func (s *sampler) drawPrec() error {
	err := s.lik.UnitStats(s.unitQ, s.unitC, s.unitN)
	if errors.Is(err, bp.ErrNoDensity) || errors.Is(err, bp.ErrZeroEdge) {
		return nil
	}
	if err != nil {
		return err
	}
	var q float64
	n := 0
	for d := range s.V {
		q += s.unitQ[d]
		n += s.unitN[d]
	}
	if math.IsInf(q, 0) || math.IsNaN(q) {
		return nil
	}
	s.prec = distuv.Gamma{Alpha: s.precShape + float64(n)/2, Beta: s.precRate + q/2, Src: s.rng}.Rand()
	return s.lik.SetVariance(1 / s.prec)
}

// sweep runs one sweep and returns log p(w | the parameters before it).
func (s *sampler) sweep() (float64, error) {
	ll, err := s.drawStates()
	if err != nil {
		return math.NaN(), fmt.Errorf("states: %w", err)
	}
	if err := s.drawChainParams(false); err != nil {
		return ll, fmt.Errorf("transitions: %w", err)
	}
	if err := s.drawEta(); err != nil {
		return ll, err
	}
	if err := s.moves.Sweep(); err != nil {
		return ll, fmt.Errorf("tree: %w", err)
	}
	if err := s.drawPrec(); err != nil {
		return ll, fmt.Errorf("precision: %w", err)
	}
	return ll, nil
}
