package predict

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
)

// Split returns a random partition of the rows 0..n-1 into training and
// test rows, the test set holding round(frac·n) rows (at least one, and at
// least one row is left for training), both in increasing order. The same
// n, frac and seed give the same split.
func Split(n int, frac float64, seed uint64) (train, test []int, err error) {
	if !(frac > 0 && frac < 1) {
		return nil, nil, fmt.Errorf("test fraction %v must lie strictly between 0 and 1", frac)
	}
	k := int(math.Round(frac * float64(n)))
	k = max(k, 1)
	if k >= n {
		return nil, nil, fmt.Errorf("a test fraction of %v of %d rows leaves no training rows", frac, n)
	}
	perm := rand.New(rand.NewPCG(seed, 0x5eed5)).Perm(n)
	test = slices.Sorted(slices.Values(perm[:k]))
	train = slices.Sorted(slices.Values(perm[k:]))
	return train, test, nil
}

// KDE is a Gaussian kernel density estimate with a diagonal bandwidth
// proportional to each column's standard deviation: the kernel of training
// row i is N(x; x_i, diag((H·SD_d)²)). It uses the training rows without
// missing entries; missing entries of a query are marginalised (dropped).
type KDE struct {
	Rows [][]float64
	SD   []float64
	H    float64
}

// DefaultBandwidths is the grid of relative bandwidths H over which
// NewKDE chooses by leave-one-out likelihood: 60 values spaced evenly in
// log from 0.01 to 3.
func DefaultBandwidths() []float64 {
	out := make([]float64, 60)
	for i := range out {
		out[i] = 0.01 * math.Pow(300, float64(i)/float64(len(out)-1))
	}
	return out
}

// NewKDE builds a KDE of the complete rows of train and chooses H from
// grid (DefaultBandwidths when nil) by maximising the leave-one-out log
// likelihood of the training rows, Σ_j log (1/(n−1) Σ_{i≠j} K_H(x_j − x_i)).
// It returns the KDE and the criterion at each grid value.
func NewKDE(train [][]float64, grid []float64) (*KDE, []float64, error) {
	var rows [][]float64
	for _, r := range train {
		if !slices.ContainsFunc(r, math.IsNaN) {
			rows = append(rows, r)
		}
	}
	if len(rows) < 2 {
		return nil, nil, errors.New("kde: need at least two training rows without missing entries")
	}
	if err := sameWidth(rows); err != nil {
		return nil, nil, fmt.Errorf("kde: %w", err)
	}
	d := len(rows[0])
	flat := make([]float64, 0, len(rows)*d)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	sd := columnSD(flat, len(rows), d)
	if grid == nil {
		grid = DefaultBandwidths()
	}
	k := &KDE{Rows: rows, SD: sd}
	crit := make([]float64, len(grid))
	best, bestH := math.Inf(-1), math.NaN()
	for g, h := range grid {
		if !(h > 0) || math.IsInf(h, 1) {
			return nil, nil, fmt.Errorf("kde: bandwidth %v must be positive and finite", h)
		}
		k.H = h
		var s float64
		for j := range rows {
			s += k.logDensity(rows[j], j)
		}
		crit[g] = s
		if s > best {
			best, bestH = s, h
		}
	}
	if math.IsNaN(bestH) {
		return nil, nil, errors.New("kde: no bandwidth gives a finite leave-one-out likelihood")
	}
	k.H = bestH
	return k, crit, nil
}

// sameWidth says why rows (complete training rows) are not all as wide as
// the first, or returns nil.
func sameWidth(rows [][]float64) error {
	for i, r := range rows {
		if len(r) != len(rows[0]) {
			return fmt.Errorf("complete training row %d has %d columns, the first %d", i+1, len(r), len(rows[0]))
		}
		for j, v := range r {
			if math.IsInf(v, 0) {
				return fmt.Errorf("complete training row %d, column %d is %v", i+1, j+1, v)
			}
		}
	}
	return nil
}

func columnSD(x []float64, n, d int) []float64 {
	sd := make([]float64, d)
	for k := range d {
		var m float64
		for i := range n {
			m += x[i*d+k]
		}
		m /= float64(n)
		var ss float64
		for i := range n {
			ss += (x[i*d+k] - m) * (x[i*d+k] - m)
		}
		sd[k] = math.Sqrt(ss / float64(n-1))
		if !(sd[k] > 0) {
			sd[k] = 1
		}
	}
	return sd
}

// LogDensity returns the KDE's log density at x (NaN entries marginalised).
// It is an error when x does not have one entry per column of the training
// rows, or the KDE has no training rows or a bandwidth that is not positive.
func (k *KDE) LogDensity(x []float64) (float64, error) {
	if err := k.check(); err != nil {
		return 0, fmt.Errorf("kde: %w", err)
	}
	if err := checkRealQuery(x, len(k.SD)); err != nil {
		return 0, fmt.Errorf("kde: %w", err)
	}
	return k.logDensity(x, -1), nil
}

// check says why the KDE cannot score a query (one built by hand, not by
// NewKDE), or returns nil.
func (k *KDE) check() error {
	if len(k.Rows) == 0 {
		return errors.New("no training rows")
	}
	if !(k.H > 0) || math.IsInf(k.H, 1) {
		return fmt.Errorf("bandwidth %v is not positive and finite", k.H)
	}
	for i, r := range k.Rows {
		if len(r) != len(k.SD) {
			return fmt.Errorf("training row %d has %d columns, the column sds %d", i+1, len(r), len(k.SD))
		}
	}
	return nil
}

// checkRealQuery says why the query row x is not a row of d real columns
// (NaN for missing), or returns nil.
func checkRealQuery(x []float64, d int) error {
	if len(x) != d {
		return fmt.Errorf("query row has %d columns, the training rows %d", len(x), d)
	}
	for j, v := range x {
		if math.IsInf(v, 0) {
			return fmt.Errorf("query row's column %d is %v, not finite or missing (NaN)", j+1, v)
		}
	}
	return nil
}

// logDensity leaves out training row skip (-1 for none); x must have passed
// checkRealQuery.
func (k *KDE) logDensity(x []float64, skip int) float64 {
	l := make([]float64, 0, len(k.Rows))
	for i, r := range k.Rows {
		if i == skip {
			continue
		}
		var s float64
		for d, xv := range x {
			if math.IsNaN(xv) {
				continue
			}
			h := k.H * k.SD[d]
			s += logNormal(xv, r[d], h*h)
		}
		l = append(l, s)
	}
	return logsumexp.Of(l) - math.Log(float64(len(l)))
}

// Gaussian is a single multivariate normal fitted by maximum likelihood
// (sample mean, covariance with divisor n) to the complete training rows.
type Gaussian struct {
	Mean []float64
	Cov  *mat.SymDense
}

// NewGaussian fits a Gaussian to the rows of train without missing entries.
func NewGaussian(train [][]float64) (*Gaussian, error) {
	var rows [][]float64
	for _, r := range train {
		if !slices.ContainsFunc(r, math.IsNaN) {
			rows = append(rows, r)
		}
	}
	if len(rows) < 2 {
		return nil, errors.New("gaussian: need at least two training rows without missing entries")
	}
	if err := sameWidth(rows); err != nil {
		return nil, fmt.Errorf("gaussian: %w", err)
	}
	d := len(rows[0])
	n := float64(len(rows))
	mean := make([]float64, d)
	for _, r := range rows {
		for k, v := range r {
			mean[k] += v / n
		}
	}
	cov := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			var s float64
			for _, r := range rows {
				s += (r[a] - mean[a]) * (r[b] - mean[b])
			}
			cov.SetSym(a, b, s/n)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) || ch.Cond() > 1e12 {
		return nil, fmt.Errorf("gaussian: the sample covariance of %d rows in %d dimensions is singular", len(rows), d)
	}
	return &Gaussian{Mean: mean, Cov: cov}, nil
}

// LogDensity returns the log density at x, NaN entries marginalised (the
// Gaussian of the observed entries' mean and covariance block). It is an
// error when x does not have one entry per column of the training rows.
func (g *Gaussian) LogDensity(x []float64) (float64, error) {
	if err := checkRealQuery(x, len(g.Mean)); err != nil {
		return 0, fmt.Errorf("gaussian: %w", err)
	}
	return g.logDensity(x), nil
}

func (g *Gaussian) logDensity(x []float64) float64 {
	var obs []int
	for k, v := range x {
		if !math.IsNaN(v) {
			obs = append(obs, k)
		}
	}
	if len(obs) == 0 {
		return 0
	}
	c := mat.NewSymDense(len(obs), nil)
	r := mat.NewVecDense(len(obs), nil)
	for a, i := range obs {
		r.SetVec(a, x[i]-g.Mean[i])
		for b := a; b < len(obs); b++ {
			c.SetSym(a, b, g.Cov.At(i, obs[b]))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		return math.NaN()
	}
	var z mat.VecDense
	if err := ch.SolveVecTo(&z, r); err != nil {
		return math.NaN()
	}
	q := mat.Dot(r, &z)
	return -0.5 * (float64(len(obs))*math.Log(2*math.Pi) + ch.LogDet() + q)
}
