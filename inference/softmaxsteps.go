package inference

import (
	"fmt"
	"math"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
	"github.com/pydtlang/pydtlang/stdlib/softmaxleaf"
)

// This file holds the update of PYDT leaves that are the logits of
// categorical factors (stdlib.CategoryLogits): w[t] ~
// Categorical(softmax(eta[z[t]])), an HMM over words whose states'
// emission logits are the leaves of a tree, or a topic model whose topics'
// log word weights are. The leaves are latent values of the graph; the
// tree observes them exactly and is their Gaussian prior.

// softmaxLeafStep draws each row of a PYDT's latent leaf matrix (the
// logits of one leaf) from its conditional given everything else:
//
//	p(η_i | ...) ∝ N(η_i; μ_i, diag(1/prec_i)) · Π_v softmax(η_i)_v^{n_iv}
//
// with (μ_i, prec_i) the tree's Gaussian message into leaf i (belief
// propagation with leaf i's evidence removed and every other leaf observed
// exactly) and n_iv the number of elements of the categorical readers whose
// logit row is row i and whose category is v. The draw is exact
// (stdlib/softmaxleaf): a data-augmentation Gibbs sweep, then prior
// elliptical slice, independence Metropolis-Hastings and generalised
// elliptical slice steps on the Laplace approximation, each leaving the
// conditional invariant. The tree then observes the new row.
type softmaxLeafStep struct {
	m       *Model
	k       int // the tree's index in Model.Trees
	b       *TreeBinding
	rows    []graph.Row // each reader's logit row
	readers []*graph.Factor
}

// softmaxLeafScratch is a chain's scratch space of a softmaxLeafStep.
type softmaxLeafScratch struct {
	counts, mu, mp []float64
	ws             softmaxleaf.Workspace
}

// newSoftmaxLeaf returns the step for the k-th tree of m when its leaves
// are latent logits (TreeBinding.LatentLeaves), else nil.
func newSoftmaxLeaf(m *Model, k int) *softmaxLeafStep {
	b := m.Trees[k]
	if !b.LatentLeaves() {
		return nil
	}
	s := &softmaxLeafStep{m: m, k: k, b: b, readers: b.softmax}
	for _, f := range b.softmax {
		r, _ := softmaxRow(f, b.Leaves)
		s.rows = append(s.rows, r)
	}
	return s
}

// Name is softmax-leaf(eta), eta the leaf matrix.
func (s *softmaxLeafStep) Name() string { return "softmax-leaf(" + s.b.Leaves.Name + ")" }

func (s *softmaxLeafStep) Explain() string {
	var names []string
	for _, f := range s.readers {
		names = append(names, f.Target.Name)
	}
	return fmt.Sprintf("exact draw of each of the %d rows of %s (a leaf's logits) given the tree's Gaussian message into its leaf and the counts of the categories of %s drawn with softmax of that row: "+
		"data-augmentation Gibbs, then prior elliptical slice, independence Metropolis-Hastings and elliptical slice on the Laplace approximation (stdlib/softmaxleaf); the tree observes the new row exactly",
		s.b.N, s.b.Leaves.Name, strings.Join(names, ", "))
}

func (s *softmaxLeafStep) targets() []siteTarget {
	terms := []term{{F: s.b.Factor, Elem: -1}}
	for _, f := range s.readers {
		terms = append(terms, term{F: f, Elem: -1})
	}
	out := make([]siteTarget, s.b.N*s.b.D)
	for off := range out {
		out[off] = siteTarget{V: s.b.Leaves, Off: off, Terms: terms}
	}
	return out
}

// countCategories sets counts (N·D) to the number of elements of the
// readers whose logit row is each leaf row and whose category is each
// column.
func (s *softmaxLeafStep) countCategories(env *graph.Env, counts []float64) error {
	clear(counts)
	for i, f := range s.readers {
		if err := addCategoryCounts(env, f, s.rows[i], s.b.D, counts); err != nil {
			return err
		}
	}
	return nil
}

func (s *softmaxLeafStep) update(ch *Chain) error {
	env := ch.st.Env
	t := ch.trees[s.k]
	N, D := s.b.N, s.b.D
	sc := scratchOf(ch, s, func() *softmaxLeafScratch {
		return &softmaxLeafScratch{counts: make([]float64, N*D), mu: make([]float64, D), mp: make([]float64, D)}
	})
	if err := s.countCategories(env, sc.counts); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	eta := env.Values[s.b.Leaves.ID]
	for i := range N {
		leaf := pydt.NodeID(i)
		for d := range D {
			if err := t.lik.SetEvidence(leaf, d, 0, 0); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
		if err := leafMessage(t.lik, leaf, sc.mu, sc.mp); err != nil {
			return fmt.Errorf("%s: message into leaf %d: %w", s.Name(), i+1, err)
		}
		usable := true
		for d := range D {
			if math.IsNaN(sc.mu[d]) || math.IsInf(sc.mu[d], 0) || !(sc.mp[d] > 0) || math.IsInf(sc.mp[d], 1) {
				usable = false
			}
		}
		row := eta[i*D : (i+1)*D]
		if usable {
			tg := softmaxleaf.Target{Mu: sc.mu, Prec: sc.mp, Counts: sc.counts[i*D : (i+1)*D]}
			if err := sc.ws.AuxGibbs(ch.rng, &tg, row); err != nil {
				return fmt.Errorf("%s: row %d: %w", s.Name(), i+1, err)
			}
			// The Laplace approximation's Newton iteration starts from
			// the current row, a function of the chain's state alone, so
			// that a resumed chain continues exactly.
			sc.ws.Mode = append(sc.ws.Mode[:0], row...)
			if _, err := sc.ws.Step(ch.rng, &tg, row); err != nil {
				return fmt.Errorf("%s: row %d: %w", s.Name(), i+1, err)
			}
		} else {
			// A message float64 cannot represent (an edge far shorter
			// than it resolves): keep the row, as other conditional
			// updates are refused (see gibbsCStep). The count is the
			// run's skipped_updates, which the printed table reports.
			ch.Skipped++
		}
		for d, x := range row {
			if err := t.lik.Observe(leaf, d, x); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
	}
	return ch.m.Refresh(env)
}

// leafMessage writes to mean and prec (D values each) the tree's Gaussian
// message into leaf, whose evidence the caller has removed: the posterior
// of the location of its parent given the rest of the evidence
// (bp.Model.PointMarginal at the parent), carried down the edge to the
// leaf, whose variance σ²_d·(t_leaf − t_parent) it adds. It costs
// O(depth · D) where Marginals, which gives the same for every node, costs
// O(N · D): a sweep over the leaves is O(N · depth · D), not O(N² · D).
func leafMessage(lik *bp.Model, leaf pydt.NodeID, mean, prec []float64) error {
	tr, s2 := lik.Tree(), lik.Variances()
	p := tr.Parent(leaf)
	if p == pydt.NoNode {
		// The only leaf: it diffuses from the origin, x = 0 at t = 0.
		for d := range mean {
			mean[d], prec[d] = 0, 1/(s2[d]*tr.Time(leaf).T())
		}
		return nil
	}
	if err := lik.PointMarginal(pydt.Position{Node: p, AtNode: true}, mean, prec); err != nil {
		return err
	}
	l := tr.BranchLength(leaf)
	for d, v := range prec {
		prec[d] = 1 / (v + s2[d]*l)
	}
	return nil
}

// logitsEmit is an element of a categorical reader of a Markov chain's
// states whose logit row is the state itself (w[t] ~
// Categorical(softmax(eta[z[t]]))): its emission log-likelihood under
// state k is eta[k, w[t]] − log Σ_v exp(eta[k, v]), with the normaliser
// computed once per state and sweep (stdlib.CategoryLogits).
type logitsEmit struct {
	f      *graph.Factor
	off    int // the element's target offset
	t      int // the state it reads, 0-based
	logits *graph.Var
}

// logitsEmitOf reports whether element e of f, which reads z[t] alone,
// is a categorical whose logits are the row of a K-row matrix picked by
// z[t] itself.
func logitsEmitOf(e factorElem, v *graph.Var, t, K int) (logitsEmit, bool) {
	c, ok := e.f.Type.(stdlib.CategoryLogits)
	if !ok || len(e.f.Args) != 1 {
		return logitsEmit{}, false
	}
	r, ok := e.f.Args[c.LogitsParam()].(graph.Row)
	if !ok || len(r.Idx) != 1 || len(r.V.Dims) != 2 || r.V.Dims[0] != K {
		return logitsEmit{}, false
	}
	el, ok := r.Idx[0].(graph.Elem)
	if !ok || el.V != v {
		return logitsEmit{}, false
	}
	return logitsEmit{f: e.f, off: e.off, t: t, logits: r.V}, true
}

// addLogitsEmissions adds to logEmit (T×K) the emission log-likelihoods
// of the logit emissions es, with the log normaliser of each of the K
// rows of each logit matrix computed once (lse is scratch space).
func addLogitsEmissions(env *graph.Env, es []logitsEmit, K int, logEmit []float64, lse *[]float64) {
	var last *graph.Var
	for _, e := range es {
		eta := env.Values[e.logits.ID]
		V := e.logits.Dims[1]
		if e.logits != last {
			if cap(*lse) < K {
				*lse = make([]float64, K)
			}
			*lse = (*lse)[:K]
			for k := range K {
				(*lse)[k] = stdlib.LogSoftmaxNorm(eta[k*V : (k+1)*V])
			}
			last = e.logits
		}
		x := env.Values[e.f.Target.ID][e.off]
		if math.IsNaN(x) {
			continue
		}
		row := logEmit[e.t*K : (e.t+1)*K]
		if x != math.Trunc(x) || x < 1 || x > float64(V) {
			for k := range row {
				row[k] = math.Inf(-1)
			}
			continue
		}
		for k := range K {
			row[k] += eta[k*V+int(x)-1] - (*lse)[k]
		}
	}
}
