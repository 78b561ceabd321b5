package inference

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// Score returns the log joint density of st and its parts: the tree prior,
// the marginal likelihood of the data given the tree (internal and latent
// leaf locations integrated out by belief propagation; for a likelihood
// without closed-form leaf evidence that offers stdlib.TiltedLeaf, such as
// Probit, expectation propagation's approximation, marked by
// LogLikMethod "EP"), and the prior of the scalars. It is the engine's equivalent of CmdStan's log_prob.
// The factors of scalars clamped outside their distribution's support are
// left out (graph.Factor.Omitted); Scores lists what LogHyper includes and
// what it leaves out.
//
// In a model with several PYDTs st holds a tree of each (State.Trees, in
// the order of Model.Trees): log_tree and log_lik sum over them.
//
// When the data reach the leaves through a latent index (y[t, d] ~
// Normal(mu[z[t], d], sd), TreeBinding.Indexed), log_lik is the marginal
// likelihood given the tree and the index's values in st (z), and
// log_hyper includes z's own factors, as the sampler's log_joint.
func (m *Model) Score(st *State) (Scores, error) {
	var s Scores
	if err := m.needTree("score"); err != nil {
		return s, err
	}
	if len(st.Trees) < len(m.Trees) || slices.Contains(st.Trees[:len(m.Trees)], nil) {
		if !m.Several() {
			return s, fmt.Errorf("score: no tree")
		}
		return s, fmt.Errorf("score: %d trees for the %d PYDTs of the model", len(st.Trees), len(m.Trees))
	}
	for k, b := range m.Trees {
		if tr := st.Trees[k]; tr.NumLeaves() != b.N {
			return s, fmt.Errorf("score: the tree%s has %d leaves but %s has %d rows", treeOf(m, k), tr.NumLeaves(), b.Leaves.Name, b.N)
		}
	}
	if err := m.Refresh(st.Env); err != nil {
		return s, fmt.Errorf("score: %w", err)
	}
	if err := m.CheckScalars(st.Env); err != nil {
		return s, fmt.Errorf("score: %w", err)
	}
	for _, v := range m.LatentArrays() {
		for off, x := range st.Env.Values[v.ID] {
			if !v.Support.Contains(x) {
				return s, fmt.Errorf("score: %s[%s] = %v is outside its support (%v)", v.Name, strings.ReplaceAll(elemIndex(v, off), " ", ""), x, v.Support)
			}
		}
	}
	var ll float64
	for k, b := range m.Trees {
		lt, llk, ep, err := scoreTree(b, st.Env, st.Trees[k])
		if err != nil {
			return s, fmt.Errorf("score: %w", err)
		}
		s.LogTree += lt
		ll += llk
		if ep {
			s.LogLikMethod = "EP"
		}
	}
	hyper, data, err := m.LogHyper(st.Env)
	if err != nil {
		return s, fmt.Errorf("score: %w", err)
	}
	s.LogLik = ll + data
	s.LogHyper = hyper
	s.HyperTerms = []string{}
	for _, f := range m.G.Factors {
		switch {
		case f.Omitted:
			s.Omitted = append(s.Omitted, f.String())
		case !f.IsPYDT() && !m.isLeafFactor(f) && !f.Target.IsData:
			s.HyperTerms = append(s.HyperTerms, f.String())
		}
	}
	s.LogJoint = s.LogTree + s.LogLik + s.LogHyper
	if math.IsNaN(s.LogJoint) {
		return s, fmt.Errorf("score: the log density is NaN (log_tree %v, log_lik %v, log_hyper %v)", s.LogTree, s.LogLik, s.LogHyper)
	}
	return s, nil
}

// scoreTree returns the log prior of the tree tr of the PYDT of b and the
// log marginal likelihood of the data at its leaves (expectation
// propagation's estimate, ep, for a likelihood without closed-form
// evidence that offers stdlib.TiltedLeaf).
func scoreTree(b *TreeBinding, env *graph.Env, tr *pydt.Tree) (logTree, ll float64, ep bool, err error) {
	p, err := b.Params(env)
	if err != nil {
		return 0, 0, false, err
	}
	h, err := pydt.NewHarmonic(p.Alpha, p.Beta)
	if err != nil {
		return 0, 0, false, err
	}
	logTree = pydt.LogPrior(tr, p.Alpha, p.Beta, p.Div, h)
	if b.indexedGaussian() {
		// Leaves read through a latent index (mu[z[t], d]) at the given
		// values of the index: each leaf gets the evidence of the data
		// assigned to it, and the residual factor is added, as the
		// sampler's log_lik.
		lik := bp.New(tr, b.D)
		if err := lik.SetVariances(p.DimVariances()); err != nil {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
		}
		var sc []float64
		resid, err := b.indexedEvidence(env, &sc, func(i, d int, mean, prec float64) error {
			return lik.SetEvidence(pydt.NodeID(i), d, mean, prec)
		})
		if err != nil {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
		}
		if err := lik.Recompute(); err != nil {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
		}
		return logTree, lik.LogLik() + resid, false, nil
	}
	if b.ClosedForm() != nil && b.Tilted() != nil {
		// No closed form (Probit): expectation propagation's estimate.
		if err := tr.Validate(); err != nil {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
		}
		ll, err = b.EPLogLik(env, tr, p.Variance)
		if err != nil {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
		}
		return logTree, ll, true, nil
	}
	lik := bp.New(tr, b.D)
	if err := lik.SetVariances(p.DimVariances()); err != nil {
		return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
	}
	if err := b.observe(lik, env); err != nil {
		return 0, 0, false, err
	}
	if err := lik.Recompute(); err != nil {
		if errors.Is(err, bp.ErrZeroEdge) {
			return 0, 0, false, fmt.Errorf("PYDT node %s: %w (a branch of zero length: check the tree's times)", b.Leaves.Name, err)
		}
		return 0, 0, false, fmt.Errorf("PYDT node %s: %w", b.Leaves.Name, err)
	}
	return logTree, lik.LogLik(), false, nil
}

// MarshalJSON writes the scores as a JSON object. JSON has no infinities:
// a log density of −∞ (a tree of zero probability, such as a
// multifurcation when alpha = −2·beta, which admits only binary trees) is
// written as the string "-Inf", and +∞ and NaN as "+Inf" and "NaN".
func (s Scores) MarshalJSON() ([]byte, error) {
	num := func(x float64) any {
		switch {
		case math.IsInf(x, -1):
			return "-Inf"
		case math.IsInf(x, 1):
			return "+Inf"
		case math.IsNaN(x):
			return "NaN"
		}
		return x
	}
	return json.Marshal(struct {
		LogTree  any      `json:"log_tree"`
		LogLik   any      `json:"log_lik"`
		LogHyper any      `json:"log_hyper"`
		LogJoint any      `json:"log_joint"`
		Method   string   `json:"log_lik_method,omitempty"`
		Omitted  []string `json:"omitted,omitempty"`
	}{num(s.LogTree), num(s.LogLik), num(s.LogHyper), num(s.LogJoint), s.LogLikMethod, s.Omitted})
}
