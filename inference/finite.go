package inference

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pydtlang/pydtlang/inference/scalar"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// ErrNotFinite is wrapped by the error that stops a chain whose state has a
// log density that is NaN or infinite.
var ErrNotFinite = errors.New("the chain's state is not finite")

// checkFinite returns an error naming the first part of the log joint
// density of the chain's state that is not finite, or nil: the tree prior,
// the likelihood, then each scalar factor. after names what ran last.
func (ch *Chain) checkFinite(after string) error {
	if !scalar.Finite(ch.logTree()) || !scalar.Finite(ch.logLik()) {
		return ch.notFinite(after, "")
	}
	for _, f := range ch.m.G.Factors {
		if f.IsPYDT() || ch.m.isLeafFactor(f) || f.Omitted {
			continue
		}
		if lp := ch.logFactor(f); !scalar.Finite(lp) {
			return ch.notFinite(after, fmt.Sprintf("the log density of %s (%s) is %v", f.Target.Name, f, lp))
		}
	}
	return nil
}

// notFinite builds the error for a state whose density is not finite after
// the step named after: it names the PYDT node and the part that failed,
// the values that explain it, and what to try. what describes the failing
// part when the caller knows it.
func (ch *Chain) notFinite(after, what string) error {
	if err := ch.st.Env.Err(); err != nil {
		// An expression could not be evaluated (an index outside its
		// array): that, not float64, is why the density is not finite.
		return fmt.Errorf("%s: %w", after, err)
	}
	// The tree named is the first whose density is not finite, or the
	// first tree.
	t := ch.trees[0]
	for _, u := range ch.trees {
		if !scalar.Finite(u.lik.LogLik()) || !scalar.Finite(u.logTree()) {
			t = u
			break
		}
	}
	tb := t.b
	lt, ll := t.logTree(), t.lik.LogLik()
	var b strings.Builder
	closest := closestToOne(t.Tree, &ch.order)
	switch {
	case what != "":
		b.WriteString(what)
	case !scalar.Finite(ll):
		fmt.Fprintf(&b, "the log likelihood of PYDT node %s is %v", tb.Leaves.Name, ll)
	case !scalar.Finite(lt):
		fmt.Fprintf(&b, "the log density of the tree of PYDT node %s is %v (alpha = %g, beta = %g, divergence %v)",
			tb.Leaves.Name, lt, t.moves.Alpha(), t.moves.Beta(), t.moves.Divergence())
	default:
		b.WriteString("a scalar's log density is not finite")
	}
	if what != "" && scalar.Finite(ll) && scalar.Finite(lt) {
		// A factor off the trees: its value, not the tree, is at fault.
		b.WriteString("; float64 cannot evaluate the density of this state. The value may sit on the boundary of its support " +
			"(a probability of exactly 0 or 1, a scale of 0), where priors with most of their mass at the boundary put it " +
			"(a Dirichlet or Beta with parameters far below 1, a Gamma with shape far below 1): try parameters nearer 1")
		return fmt.Errorf("%w after %s: %s", ErrNotFinite, after, b.String())
	}
	fmt.Fprintf(&b, " (variance %s; the divergence closest to t = 1 has 1 - t = %g)", varianceString(t.lik), closest)
	b.WriteString("; float64 cannot evaluate the density of this state. Try: standardize the data (run --standardize: columns of unit scale, which the default priors assume)")
	if tb.Exact() {
		fmt.Fprintf(&b, "; use a Normal noise model (%s ~ Normal(Z, sd) with param Z : real[N, D] and Z ~ PYDT(...)), which keeps divergences away from t = 1", tb.Data.Name)
	}
	b.WriteString("; or priors that keep c away from 0 and the variance on the data's scale")
	return fmt.Errorf("%w after %s: %s", ErrNotFinite, after, b.String())
}

// closestToOne returns the smallest 1 - t over the tree's branch points (1
// for a tree without any); order is scratch space.
func closestToOne(tr *pydt.Tree, order *[]pydt.NodeID) float64 {
	u := 1.0
	*order = tr.PreOrder((*order)[:0])
	for _, v := range *order {
		if !tr.IsLeaf(v) {
			u = math.Min(u, tr.Time(v).OneMinus())
		}
	}
	return u
}
