package em

import (
	"errors"
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/stdlib"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// Site is a scalar likelihood p(y | z) of a leaf location z that EP
// approximates by a Gaussian.
type Site interface {
	// Tilted returns the log normaliser log Z = log ∫ N(z; m, v) p(y | z) dz
	// of the tilted distribution and its mean and variance, for a cavity
	// N(m, v), v > 0, at entry k = i·D + d of the data (so that a
	// likelihood may have parameters that vary by entry).
	Tilted(k int, y, m, v float64) (logZ, mean, variance float64, err error)
}

// Probit is the likelihood of stdlib.Probit: y = 1 when z + ε > 0,
// ε ~ N(0, 1), so p(y = 1 | z) = Φ(z); y = 0 otherwise. Its moments are
// stdlib.Probit's Tilted.
type Probit struct{}

// Tilted returns stdlib.Probit's tilted moments.
func (Probit) Tilted(_ int, y, m, v float64) (logZ, mean, variance float64, err error) {
	return stdlib.Probit{}.Tilted(y, m, v, nil)
}

// ErrNotConverged is wrapped by the error of an EP run that reached its
// iteration limit.
var ErrNotConverged = errors.New("em: EP did not converge")

// EP holds expectation-propagation site approximations (Minka 2001) for
// every leaf and dimension of a tree with a non-Gaussian likelihood: the
// site of (i, d) is Z̃ N(μ̃; z_id, 1/τ̃), entered into the tree as the
// Gaussian leaf evidence N(μ̃; z, 1/τ̃) through bp.Model.SetEvidence, as a
// sampler's augmentation step does. Missing observations (NaN) get no site.
//
// Fit runs parallel EP: one belief-propagation pass gives every leaf's
// marginal, each site is refitted against its cavity (the marginal divided
// by the site) and moved a fraction Damping of the way, in natural
// parameters, until no site changes by more than Tol. Sites persist between
// calls of Fit, so an EM loop restarts EP from the last fixed point.
type EP struct {
	// Site is the likelihood.
	Site Site
	// Damping is the step in (0, 1] (default 0.5).
	Damping float64
	// MaxIter bounds the sweeps of one Fit (default 500).
	MaxIter int
	// Tol is the convergence threshold on the site parameters (default
	// 1e-9, relative).
	Tol float64

	y          []float64 // N×D, NaN missing
	n, d       int
	tau, nu    []float64 // site precision τ̃ and τ̃ μ̃
	mean, vari []float64
	sweeps     int
}

// NewEP returns EP sites for the observations y (row-major, N rows of D
// values, NaN for missing) under the likelihood site.
func NewEP(site Site, y []float64, n, d int) (*EP, error) {
	if site == nil {
		return nil, fmt.Errorf("em: EP needs a likelihood")
	}
	if n < 1 || d < 1 || len(y) != n*d {
		return nil, fmt.Errorf("em: EP observations of length %d for %d leaves × %d dimensions", len(y), n, d)
	}
	return &EP{Site: site, y: y, n: n, d: d, tau: make([]float64, n*d), nu: make([]float64, n*d)}, nil
}

// check reports whether the sites fit the model's tree.
func (ep *EP) check(m *bp.Model) error {
	if m.Tree().NumLeaves() != ep.n || m.Dims() != ep.d {
		return fmt.Errorf("em: EP sites for %d leaves × %d dimensions, model has %d × %d",
			ep.n, ep.d, m.Tree().NumLeaves(), m.Dims())
	}
	return nil
}

// Sweeps returns the number of sweeps the last Fit took.
func (ep *EP) Sweeps() int { return ep.sweeps }

// setEvidence writes the sites into m.
func (ep *EP) setEvidence(m *bp.Model) error {
	for i := range ep.n {
		for k := range ep.d {
			j := i*ep.d + k
			var err error
			if ep.tau[j] > 0 {
				err = m.SetEvidence(pydt.NodeID(i), k, ep.nu[j]/ep.tau[j], ep.tau[j])
			} else {
				err = m.SetEvidence(pydt.NodeID(i), k, 0, 0)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// cavity returns the cavity mean and variance of site j given the marginal
// (mm, mv) of its location.
func (ep *EP) cavity(j int, mm, mv float64) (float64, float64, bool) {
	p := 1/mv - ep.tau[j]
	if !(p > 0) || math.IsInf(p, 1) {
		return 0, 0, false
	}
	v := 1 / p
	return v * (mm/mv - ep.nu[j]), v, true
}

// Fit runs EP to convergence on m's tree at m's variance, leaves the sites
// as m's leaf evidence, and returns Σ log Z̃ over the sites, so that
// m.LogLik() + Σ log Z̃ is EP's estimate of log p(Y | tree). It returns an
// error wrapping ErrNotConverged (with the sites as far as they got) after
// MaxIter sweeps.
func (ep *EP) Fit(m *bp.Model) (float64, error) {
	if err := ep.check(m); err != nil {
		return 0, err
	}
	damp, maxIter, tol := ep.Damping, ep.MaxIter, ep.Tol
	if damp == 0 {
		damp = 0.5
	}
	if !(damp > 0 && damp <= 1) {
		return 0, fmt.Errorf("em: EP damping %v outside (0, 1]", damp)
	}
	if maxIter == 0 {
		maxIter = 500
	}
	if tol == 0 {
		tol = 1e-9
	}
	size := m.Tree().Cap() * ep.d
	if len(ep.mean) != size {
		ep.mean, ep.vari = make([]float64, size), make([]float64, size)
	}
	converged := false
	ep.sweeps = 0
	for !converged && ep.sweeps < maxIter {
		ep.sweeps++
		if err := ep.setEvidence(m); err != nil {
			return 0, err
		}
		if err := m.Marginals(ep.mean, ep.vari); err != nil {
			return 0, err
		}
		change := 0.0
		err := ep.eachSite(func(j int, y, mm, mv float64) error {
			cm, cv, ok := ep.cavity(j, mm, mv)
			if !ok {
				return nil // skip a site whose cavity is improper
			}
			_, tm, tv, err := ep.Site.Tilted(j, y, cm, cv)
			if err != nil {
				return err
			}
			nt := 1/tv - 1/cv
			nn := tm/tv - cm/cv
			if !(nt >= 0) {
				nt, nn = 0, 0
			}
			nt = (1-damp)*ep.tau[j] + damp*nt
			nn = (1-damp)*ep.nu[j] + damp*nn
			change = math.Max(change, math.Abs(nt-ep.tau[j])/(1+ep.tau[j]))
			change = math.Max(change, math.Abs(nn-ep.nu[j])/(1+math.Abs(ep.nu[j])))
			ep.tau[j], ep.nu[j] = nt, nn
			return nil
		})
		if err != nil {
			return 0, err
		}
		converged = change < tol
	}
	if err := ep.setEvidence(m); err != nil {
		return 0, err
	}
	c, err := ep.logZConst(m)
	if err != nil {
		return 0, err
	}
	if !converged {
		return c, fmt.Errorf("%w after %d sweeps", ErrNotConverged, ep.sweeps)
	}
	return c, nil
}

// logZConst returns Σ log Z̃_j with the sites as m's evidence: for site j
// with cavity N(m, v), log Z̃ = log Ẑ - log N(μ̃; m, v + 1/τ̃), Ẑ the tilted
// normaliser, so that the site Z̃ N(μ̃; z, 1/τ̃) integrates against the
// cavity to Ẑ.
func (ep *EP) logZConst(m *bp.Model) (float64, error) {
	if err := m.Marginals(ep.mean, ep.vari); err != nil {
		return 0, err
	}
	total := 0.0
	err := ep.eachSite(func(j int, y, mm, mv float64) error {
		if ep.tau[j] == 0 {
			lz, _, _, err := ep.Site.Tilted(j, y, mm, mv)
			if err != nil {
				return err
			}
			total += lz
			return nil
		}
		cm, cv, ok := ep.cavity(j, mm, mv)
		if !ok {
			return errors.New("em: EP: improper cavity")
		}
		lz, _, _, err := ep.Site.Tilted(j, y, cm, cv)
		if err != nil {
			return err
		}
		mu := ep.nu[j] / ep.tau[j]
		sv := cv + 1/ep.tau[j]
		r := mu - cm
		total += lz + 0.5*(log2Pi+math.Log(sv)) + r*r/(2*sv)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// eachSite calls fn for every observed entry j = i·D + k (leaf i,
// dimension k) with its value y and the current marginal mean and variance
// of its location (ep.mean, ep.vari), skipping missing entries. An error
// from fn stops the loop and is returned naming the leaf and dimension.
func (ep *EP) eachSite(fn func(j int, y, mean, vari float64) error) error {
	for i := range ep.n {
		for k := range ep.d {
			j := i*ep.d + k
			y := ep.y[j]
			if math.IsNaN(y) {
				continue
			}
			if err := fn(j, y, ep.mean[j], ep.vari[j]); err != nil {
				return fmt.Errorf("leaf %d, dimension %d: %w", i+1, k, err)
			}
		}
	}
	return nil
}

// EPLogLik returns EP's estimate of log p(Y | tree) for observations y
// (row-major, N rows of D values; NaN missing) under the likelihood site
// at leaf locations that diffuse with variance σ² = variance: the log
// normaliser of the EP approximation, not a bound. It returns an error for
// an invalid tree or data, or when EP does not converge.
func EPLogLik(tr *pydt.Tree, variance float64, y []float64, dims int, site Site) (float64, error) {
	ep, err := NewEP(site, y, tr.NumLeaves(), dims)
	if err != nil {
		return 0, err
	}
	return EPLogLikSites(tr, variance, ep)
}

// EPLogLikSites is EPLogLik with the sites (and their data) given: it runs
// ep to convergence on a fresh belief-propagation model of tr.
func EPLogLikSites(tr *pydt.Tree, variance float64, ep *EP) (float64, error) {
	if err := tr.Validate(); err != nil {
		return 0, fmt.Errorf("em: EPLogLik: %w", err)
	}
	m := bp.New(tr, ep.d)
	if err := m.SetVariance(variance); err != nil {
		return 0, fmt.Errorf("em: EPLogLik: %w", err)
	}
	c, err := ep.Fit(m)
	if err != nil {
		return 0, fmt.Errorf("em: EPLogLik: %w", err)
	}
	return m.LogLik() + c, nil
}
