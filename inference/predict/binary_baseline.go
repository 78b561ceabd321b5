package predict

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/pydtlang/pydtlang/internal/logsumexp"
)

// Bernoulli is the baseline for binary rows of independent columns, each
// Bernoulli with a Beta(1, 1) prior on its probability: the posterior
// predictive P(y_k = 1) = (n1_k + 1)/(n_k + 2), n_k the training rows
// observing column k and n1_k those with a 1 (Laplace's rule of
// succession).
type Bernoulli struct {
	P []float64
}

// NewBernoulli fits the Bernoulli baseline to binary training rows (0 or
// 1, NaN missing).
func NewBernoulli(train [][]float64) (*Bernoulli, error) {
	if len(train) == 0 {
		return nil, errors.New("bernoulli baseline: no training rows")
	}
	d := len(train[0])
	ones, n := make([]float64, d), make([]float64, d)
	for i, r := range train {
		if len(r) != d {
			return nil, fmt.Errorf("bernoulli baseline: row %d has %d columns, row 1 %d", i+1, len(r), d)
		}
		for k, v := range r {
			switch {
			case math.IsNaN(v):
			case v == 0 || v == 1:
				ones[k] += v
				n[k]++
			default:
				return nil, fmt.Errorf("bernoulli baseline: row %d, column %d is %v, not 0 or 1", i+1, k+1, v)
			}
		}
	}
	b := &Bernoulli{P: make([]float64, d)}
	for k := range b.P {
		b.P[k] = (ones[k] + 1) / (n[k] + 2)
	}
	return b, nil
}

// LogProb returns the log probability of the binary row y's observed
// entries (NaN entries marginalised). It is an error when y's length is
// not the number of columns fitted or an entry is neither 0, 1 nor NaN.
func (b *Bernoulli) LogProb(y []float64) (float64, error) {
	if err := checkBinaryQuery(y, len(b.P)); err != nil {
		return 0, fmt.Errorf("bernoulli baseline: %w", err)
	}
	var s float64
	for k, v := range y {
		switch {
		case math.IsNaN(v):
		case v == 1:
			s += math.Log(b.P[k])
		default:
			s += math.Log1p(-b.P[k])
		}
	}
	return s, nil
}

// checkBinaryQuery says why the query row y is not a binary row of d
// columns (entries 0, 1 or NaN for missing), or returns nil.
func checkBinaryQuery(y []float64, d int) error {
	if len(y) != d {
		return fmt.Errorf("query row has %d columns, the training rows %d", len(y), d)
	}
	for k, v := range y {
		if !math.IsNaN(v) && v != 0 && v != 1 {
			return fmt.Errorf("query row's column %d is %v, not 0, 1 or missing (NaN)", k+1, v)
		}
	}
	return nil
}

// BinaryKernel is the Aitchison–Aitken kernel estimate of binary rows,
// the binary counterpart of a Gaussian KDE: P(y) = (1/n) Σ_i Π_k
// (1−λ)^[y_k = x_ik] λ^[y_k ≠ x_ik] over the n complete training rows x_i,
// each entry of the training row flipped with probability λ in (0, 1/2].
// Missing entries of a query are marginalised (dropped).
type BinaryKernel struct {
	Rows   [][]float64
	Lambda float64
}

// DefaultFlips is the grid of flip probabilities λ over which
// NewBinaryKernel chooses by leave-one-out likelihood: 50 values spaced
// evenly in log from 0.001 to 0.5.
func DefaultFlips() []float64 {
	out := make([]float64, 50)
	for i := range out {
		out[i] = 0.001 * math.Pow(500, float64(i)/float64(len(out)-1))
	}
	return out
}

// NewBinaryKernel builds the kernel estimate of the complete binary rows
// of train (at least two) and chooses λ from grid (DefaultFlips when nil)
// by maximising the leave-one-out log likelihood of the training rows,
// Σ_j log (1/(n−1) Σ_{i≠j} Π_k K_λ(x_jk, x_ik)); ties go to the smaller λ.
// It returns the estimate and the criterion at each grid value.
func NewBinaryKernel(train [][]float64, grid []float64) (*BinaryKernel, []float64, error) {
	var rows [][]float64
	for i, r := range train {
		if len(r) != len(train[0]) {
			return nil, nil, fmt.Errorf("binary kernel: row %d has %d columns, row 1 %d", i+1, len(r), len(train[0]))
		}
		if slices.ContainsFunc(r, math.IsNaN) {
			continue
		}
		for k, v := range r {
			if v != 0 && v != 1 {
				return nil, nil, fmt.Errorf("binary kernel: row %d, column %d is %v, not 0 or 1", i+1, k+1, v)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) < 2 {
		return nil, nil, fmt.Errorf("binary kernel: %d complete training rows; need at least two", len(rows))
	}
	if grid == nil {
		grid = DefaultFlips()
	}
	bk := &BinaryKernel{Rows: rows}
	crit := make([]float64, len(grid))
	best := 0
	for g, lam := range grid {
		if !(lam > 0 && lam <= 0.5) {
			return nil, nil, fmt.Errorf("binary kernel: flip probability %v is not in (0, 1/2]", lam)
		}
		bk.Lambda = lam
		for j, r := range rows {
			crit[g] += bk.logProb(r, j)
		}
		if crit[g] > crit[best] {
			best = g
		}
	}
	bk.Lambda = grid[best]
	return bk, crit, nil
}

// LogProb returns the kernel estimate's log probability of the binary row
// y's observed entries. It is an error when y's length is not the
// training rows' or an entry is neither 0, 1 nor NaN.
func (bk *BinaryKernel) LogProb(y []float64) (float64, error) {
	if len(bk.Rows) == 0 {
		return 0, errors.New("binary kernel: no training rows")
	}
	if err := checkBinaryQuery(y, len(bk.Rows[0])); err != nil {
		return 0, fmt.Errorf("binary kernel: %w", err)
	}
	return bk.logProb(y, -1), nil
}

// logProb leaves out training row skip (-1 for none); y must have passed
// checkBinaryQuery.
func (bk *BinaryKernel) logProb(y []float64, skip int) float64 {
	l := make([]float64, 0, len(bk.Rows))
	same, diff := math.Log1p(-bk.Lambda), math.Log(bk.Lambda)
	for i, r := range bk.Rows {
		if i == skip {
			continue
		}
		var s float64
		for k, v := range y {
			switch {
			case math.IsNaN(v):
			case v == r[k]:
				s += same
			default:
				s += diff
			}
		}
		l = append(l, s)
	}
	return logsumexp.Of(l) - math.Log(float64(len(l)))
}
