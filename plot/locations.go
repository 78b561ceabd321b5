package plot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// MeanLocations returns the posterior mean location of every node of tr
// (Cap()·D values, node v's at [v·D, (v+1)·D); NaN for unused IDs) given
// the model's data, with every latent scalar fixed at value(name): belief
// propagation on tr at, for a run, the posterior mean hyperparameters
// (Trace.Mean). The leaves of tr must be the data's rows. Observed leaves
// without a noise model sit at their data; with a Normal noise model they
// are the posterior means of the latent locations. A Probit likelihood has
// no Gaussian evidence to propagate and is refused. With standardized
// data (Model.Scaling) the locations are given back in the data's units.
func MeanLocations(m *inference.Model, tr *pydt.Tree, value func(name string) (float64, bool)) ([]float64, error) {
	if tr.NumLeaves() != m.N {
		return nil, fmt.Errorf("the tree has %d leaves, the data %d rows", tr.NumLeaves(), m.N)
	}
	// Leaf i must be data row i: the same labels, or numbers for both.
	for i := range m.N {
		want := strconv.Itoa(i + 1)
		if m.Labels != nil && m.Labels[i] != "" {
			want = m.Labels[i]
		}
		if got := tr.Label(pydt.NodeID(i)); got != want {
			return nil, fmt.Errorf("leaf %d of the tree is %q but data row %d is %q: read the tree with the data's row labels", i+1, got, i+1, want)
		}
	}
	st := m.NewState()
	for _, c := range m.Traced() {
		if c.Var.Role == graph.Clamped { // kept as bound
			continue
		}
		x, ok := value(c.Name)
		if !ok {
			return nil, fmt.Errorf("no value for %s", c.Name)
		}
		st.Env.Values[c.Var.ID][c.Off] = x
	}
	if err := m.Refresh(st.Env); err != nil {
		return nil, err
	}
	params, err := m.TreeParams(st.Env)
	if err != nil {
		return nil, err
	}
	lik := bp.New(tr, m.D)
	if err := lik.SetVariances(params.DimVariances()); err != nil {
		return nil, fmt.Errorf("diffusion variance %v: %w", params.DimVariances(), err)
	}
	var first error
	err = m.Evidence(st.Env, func(i, d int, mean, prec float64) {
		if err := lik.SetEvidence(pydt.NodeID(i), d, mean, prec); err != nil && first == nil {
			first = err
		}
	})
	if err == nil {
		err = first
	}
	if err != nil {
		if errors.Is(err, inference.ErrUnsupported) {
			return nil, fmt.Errorf("node locations: %w", err)
		}
		return nil, err
	}
	n := tr.Cap() * m.D
	mean, variance := make([]float64, n), make([]float64, n)
	if err := lik.Marginals(mean, variance); err != nil {
		return nil, err
	}
	if s := m.Scaling; s != nil {
		for i, x := range mean {
			if !math.IsNaN(x) {
				mean[i] = s.Unscale(i%m.D, x)
			}
		}
	}
	return mean, nil
}

// Observed returns the data observed at the leaves of a model with a
// Normal noise model (N rows of D values, in the data's units), and nil for
// data observed directly at the leaves (the leaves' locations then are the
// data) or a model without Gaussian data.
func Observed(m *inference.Model) []float64 {
	if !m.Trees[0].Gaussian() {
		return nil
	}
	x := slices.Clone(m.Data.Value)
	if s := m.Scaling; s != nil {
		for i, v := range x {
			if !math.IsNaN(v) {
				x[i] = s.Unscale(i%m.D, v)
			}
		}
	}
	return x
}
