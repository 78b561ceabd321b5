// Package hmm holds the numerics of a hidden Markov chain over K discrete
// states: the forward algorithm (log-likelihood), forward filtering with
// backward sampling (FFBS), forward-backward marginals, transition counts
// for conjugate Dirichlet updates, and Dirichlet draws.
//
// The package knows nothing of graphs, models or chains of MCMC: callers
// give a Chain (log initial and transition probabilities) and the emission
// log-likelihood of every state at every time, logEmit[t*K+k] = log p(y_t |
// z_t = k), and get back numbers. States are 0-based.
//
// # Numerics
//
// The fast path works in probability space with per-step scaling: at each
// time the emission log-likelihoods are shifted by their maximum before
// exponentiation, and the forward messages are renormalised, so emissions
// that differ by thousands of nats and sequences of any length are fine.
// Underflow loses only terms below about 1e-304 (a transition probability
// below e^-700, a state whose filtering probability underflows), which
// cannot matter unless the step's scaling constant is itself tiny, or the
// state is reached only through such terms. The fast path detects those
// cases (a scaling constant below 1e-250; in FFBS, backward weights
// summing below it; in Marginals, a backward message above 1e250 or
// marginals not summing to 1 within 1e-9) and then redoes the computation
// in log space with log-sum-exp, which is exact but about ten times
// slower. The answer is therefore never silently wrong.
//
// A Workspace holds every buffer; reuse one across calls and they allocate
// nothing after the first call of a given size.
package hmm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

// ErrImpossible is wrapped by the error returned when the observations have
// probability zero under the chain: no path of states has a finite log
// probability.
var ErrImpossible = errors.New("no state path has non-zero probability")

// tau is the smallest per-step scaling constant (and the reciprocal of the
// largest backward message) the fast path accepts; below it, mass lost to
// underflow (at most about 1e-308 per term) could matter, so the
// computation is redone in log space.
const tau = 1e-250

// rowTol is how far from 1 the probabilities of LogInit or of a row of
// LogTrans may sum.
const rowTol = 1e-9

// Chain is a Markov chain over K states: LogInit[k] = log p(z_1 = k) and
// LogTrans[i*K+j] = log p(z_t = j | z_{t-1} = i). Entries may be -Inf (an
// impossible start or move); each row must be a probability vector (its
// probabilities summing to 1 within 1e-9).
type Chain struct {
	K                 int
	LogInit, LogTrans []float64
}

// Workspace holds the forward messages and scratch buffers of the
// algorithms; reuse it across calls (no allocation per sweep once its
// buffers have grown to the largest K and T used). The zero value is ready
// to use. A Workspace must not be used by two goroutines at once.
type Workspace struct {
	pi    []float64 // K: exp(LogInit)
	a     []float64 // K*K: exp(LogTrans)
	alpha []float64 // T*K: normalised forward messages (fast path)
	logc  []float64 // T: log p(y_t | y_1..t-1)
	e     []float64 // K: scratch, emissions / weights
	p     []float64 // K: scratch, predicted state probabilities
	b0    []float64 // K: backward message
	b1    []float64 // K: backward message
	la    []float64 // T*K: log forward messages (log path, grown lazily)
	lb    []float64 // K*2: log backward messages (log path)

	// forceLog makes every call take the log-space path (tests).
	forceLog bool
	// noFastBackward makes Marginals redo a fast forward pass in log space
	// as when its backward checks fail (tests).
	noFastBackward bool
	// switchAt, when positive, makes FFBS's fast backward pass switch to
	// log space at time switchAt-1 (tests).
	switchAt int
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func (ws *Workspace) prepare(K, T int) {
	ws.pi = grow(ws.pi, K)
	ws.a = grow(ws.a, K*K)
	ws.alpha = grow(ws.alpha, T*K)
	ws.logc = grow(ws.logc, T)
	ws.e = grow(ws.e, K)
	ws.p = grow(ws.p, K)
	ws.b0 = grow(ws.b0, K)
	ws.b1 = grow(ws.b1, K)
}

// validate checks the chain and the emission table and fills ws.pi and
// ws.a with the initial and transition probabilities. A probability below
// about 1e-308 becomes 0 there; the fast path stays exact to far below
// its tolerances all the same (its checks catch the cases where such a
// move is the only way through).
func (c *Chain) validate(logEmit []float64, T int, ws *Workspace) error {
	if c == nil {
		return errors.New("hmm: nil chain")
	}
	if ws == nil {
		return errors.New("hmm: nil workspace")
	}
	K := c.K
	if K < 1 {
		return fmt.Errorf("hmm: chain has %d states, want at least 1", K)
	}
	if T < 1 {
		return fmt.Errorf("hmm: sequence length %d, want at least 1", T)
	}
	if len(c.LogInit) != K {
		return fmt.Errorf("hmm: LogInit has length %d, want K = %d", len(c.LogInit), K)
	}
	if K > math.MaxInt/K || len(c.LogTrans) != K*K {
		return fmt.Errorf("hmm: LogTrans has length %d, want K*K = %d", len(c.LogTrans), K*K)
	}
	if T > math.MaxInt/K || len(logEmit) != T*K {
		return fmt.Errorf("hmm: logEmit has length %d, want T*K = %d*%d", len(logEmit), T, K)
	}
	ws.prepare(K, T)
	if err := checkRow("LogInit", K, 0, c.LogInit, ws.pi); err != nil {
		return err
	}
	for i := 0; i < K; i++ {
		if err := checkRow("LogTrans", K, i, c.LogTrans[i*K:(i+1)*K], ws.a[i*K:(i+1)*K]); err != nil {
			return err
		}
	}
	return nil
}

// checkRow checks that lp is a vector of log probabilities summing to 1
// and writes their exponentials into dst.
func checkRow(what string, K, row int, lp, dst []float64) error {
	s := 0.0
	for j, v := range lp {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return fmt.Errorf("hmm: %s[%d] is %v, want a log probability", what, row*K+j, v)
		}
		if v > 1e-9 {
			return fmt.Errorf("hmm: %s[%d] = %v is a log probability above 0", what, row*K+j, v)
		}
		dst[j] = math.Exp(v)
		s += dst[j]
	}
	if math.Abs(s-1) > rowTol {
		if what == "LogInit" {
			return fmt.Errorf("hmm: the initial probabilities sum to %v, want 1", s)
		}
		return fmt.Errorf("hmm: row %d of the transition probabilities sums to %v, want 1", row, s)
	}
	return nil
}

// emitRow returns row t of logEmit and its maximum, or an error for a
// non-finite entry other than -Inf, or a row that is all -Inf.
func emitRow(logEmit []float64, t, K int) ([]float64, float64, error) {
	row := logEmit[t*K : (t+1)*K]
	m := math.Inf(-1)
	for k, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return nil, 0, fmt.Errorf("hmm: logEmit[%d] (time %d, state %d) is %v", t*K+k, t, k, v)
		}
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, -1) {
		return nil, 0, fmt.Errorf("hmm: at time %d every state has emission log-likelihood -Inf: %w", t, ErrImpossible)
	}
	return row, m, nil
}

// forwardFast runs the scaled forward pass, filling ws.alpha and ws.logc.
// ok is false when a scaling constant fell below tau (the log path must be
// used); err reports bad emissions.
func (c *Chain) forwardFast(logEmit []float64, T int, ws *Workspace) (ll float64, ok bool, err error) {
	K := c.K
	p := ws.p
	for t := 0; t < T; t++ {
		row, m, err := emitRow(logEmit, t, K)
		if err != nil {
			return 0, false, err
		}
		if t == 0 {
			copy(p, ws.pi)
		} else {
			prev := ws.alpha[(t-1)*K : t*K]
			clear(p)
			for i, ai := range prev {
				if ai == 0 {
					continue
				}
				ar := ws.a[i*K : (i+1)*K]
				for j, v := range ar {
					p[j] += ai * v
				}
			}
		}
		cur := ws.alpha[t*K : (t+1)*K]
		s := 0.0
		for k, v := range row {
			x := p[k] * math.Exp(v-m)
			cur[k] = x
			s += x
		}
		if !(s >= tau) {
			return 0, false, nil
		}
		inv := 1 / s
		for k := range cur {
			cur[k] *= inv
		}
		ws.logc[t] = math.Log(s) + m
		ll += ws.logc[t]
	}
	return ll, true, nil
}

// forwardLog runs the forward pass in log space, filling ws.la with the
// normalised log forward messages log p(z_t = k | y_1..t) and ws.logc with
// log p(y_t | y_1..t-1). (Normalising at every step keeps the messages
// near 0, so rounding does not grow with the length of the sequence.)
func (c *Chain) forwardLog(logEmit []float64, T int, ws *Workspace) (float64, error) {
	K := c.K
	if cap(ws.la) < T*K {
		ws.la = make([]float64, T*K)
	}
	ws.la = ws.la[:T*K]
	ws.lb = grow(ws.lb, 2*K)
	tmp := ws.lb[:K]
	ll := 0.0
	for t := 0; t < T; t++ {
		row, _, err := emitRow(logEmit, t, K)
		if err != nil {
			return math.Inf(-1), err
		}
		cur := ws.la[t*K : (t+1)*K]
		if t == 0 {
			for k := range cur {
				cur[k] = c.LogInit[k] + row[k]
			}
		} else {
			prev := ws.la[(t-1)*K : t*K]
			for j := 0; j < K; j++ {
				for i := 0; i < K; i++ {
					tmp[i] = prev[i] + c.LogTrans[i*K+j]
				}
				cur[j] = floats.LogSumExp(tmp) + row[j]
			}
		}
		s := floats.LogSumExp(cur)
		if math.IsInf(s, -1) {
			return math.Inf(-1), fmt.Errorf("hmm: no state path reaches time %d with non-zero probability: %w", t, ErrImpossible)
		}
		for k := range cur {
			cur[k] -= s
		}
		ws.logc[t] = s
		ll += s
	}
	return ll, nil
}

// forward runs the fast forward pass, or the log-space one when the fast
// one cannot be trusted; usedLog tells which filled the workspace.
func (c *Chain) forward(logEmit []float64, T int, ws *Workspace) (ll float64, usedLog bool, err error) {
	if err := c.validate(logEmit, T, ws); err != nil {
		return math.NaN(), false, err
	}
	if !ws.forceLog {
		ll, ok, err := c.forwardFast(logEmit, T, ws)
		if err != nil {
			return math.Inf(-1), false, err
		}
		if ok {
			return ll, false, nil
		}
	}
	ll, err = c.forwardLog(logEmit, T, ws)
	if err != nil {
		return ll, true, err
	}
	return ll, true, nil
}

// LogLik is log p(y_1..T) given per-time emission log-likelihoods
// logEmit[t*K+k] = log p(y_t | z_t = k), by the forward algorithm (scaled;
// log-sum-exp when scaling cannot be trusted). len(logEmit) must be T*K.
// When no path of states has non-zero probability it returns -Inf and an
// error wrapping ErrImpossible.
func (c *Chain) LogLik(logEmit []float64, T int, ws *Workspace) (float64, error) {
	ll, _, err := c.forward(logEmit, T, ws)
	return ll, err
}

// sampleWeights draws an index with probability proportional to w (all
// finite and non-negative, sum s > 0).
func sampleWeights(rng *rand.Rand, w []float64, s float64) int {
	u := rng.Float64() * s
	last := -1
	for k, v := range w {
		if v > 0 {
			last = k
			u -= v
			if u < 0 {
				return k
			}
		}
	}
	return last // rounding: u fell off the end
}

// sampleLog draws an index with probability proportional to exp(lw),
// using scratch (len(lw)) for the weights.
func sampleLog(rng *rand.Rand, lw, scratch []float64) int {
	m := math.Inf(-1)
	for _, v := range lw {
		if v > m {
			m = v
		}
	}
	s := 0.0
	for k, v := range lw {
		scratch[k] = math.Exp(v - m)
		s += scratch[k]
	}
	return sampleWeights(rng, scratch, s)
}

// FFBS draws z_1..T (into z, 0-based states, len(z) = T) from p(z | y) by
// forward filtering, backward sampling, and returns log p(y_1..T). On an
// error z is left unspecified.
func (c *Chain) FFBS(rng *rand.Rand, logEmit []float64, T int, z []int, ws *Workspace) (float64, error) {
	if rng == nil {
		return math.NaN(), errors.New("hmm: FFBS: nil random source")
	}
	if len(z) != T {
		return math.NaN(), fmt.Errorf("hmm: FFBS: z has length %d, want T = %d", len(z), T)
	}
	ll, usedLog, err := c.forward(logEmit, T, ws)
	if err != nil {
		return ll, err
	}
	K := c.K
	t := T - 1
	if !usedLog {
		w := ws.e
		last := ws.alpha[(T-1)*K : T*K]
		s := 0.0
		for _, v := range last {
			s += v
		}
		z[t] = sampleWeights(rng, last, s)
		for t = T - 2; t >= 0; t-- {
			al := ws.alpha[t*K : (t+1)*K]
			j := z[t+1]
			s := 0.0
			for i, ai := range al {
				x := ai * ws.a[i*K+j]
				w[i] = x
				s += x
			}
			if !(s >= tau) || t == ws.switchAt-1 {
				break // continue this step in log space
			}
			z[t] = sampleWeights(rng, w, s)
		}
		if t < 0 {
			return ll, nil
		}
		// Mass may have been lost to underflow at step t: finish in log
		// space from the exact log forward messages. z[t+1..] stand.
		if _, err := c.forwardLog(logEmit, T, ws); err != nil {
			return ll, err
		}
	} else {
		z[t] = sampleLog(rng, ws.la[t*K:(t+1)*K], ws.e)
		t--
	}
	lw := ws.p
	for ; t >= 0; t-- {
		la := ws.la[t*K : (t+1)*K]
		j := z[t+1]
		for i := range lw {
			lw[i] = la[i] + c.LogTrans[i*K+j]
		}
		z[t] = sampleLog(rng, lw, ws.e)
	}
	return ll, nil
}

// Marginals fills post[t*K+k] = p(z_t = k | y_1..T) by forward-backward
// (len(post) = T*K) and returns log p(y_1..T).
func (c *Chain) Marginals(logEmit []float64, T int, post []float64, ws *Workspace) (float64, error) {
	if c != nil && T > 0 && c.K > 0 && T <= math.MaxInt/c.K && len(post) != T*c.K {
		return math.NaN(), fmt.Errorf("hmm: Marginals: post has length %d, want T*K = %d", len(post), T*c.K)
	}
	ll, usedLog, err := c.forward(logEmit, T, ws)
	if err != nil {
		return ll, err
	}
	if !usedLog && !ws.noFastBackward && c.backwardFast(logEmit, T, post, ws) {
		return ll, nil
	}
	if !usedLog {
		if ll, err = c.forwardLog(logEmit, T, ws); err != nil {
			return ll, err
		}
	}
	c.backwardLog(logEmit, T, post, ws)
	return ll, nil
}

// backwardFast runs the scaled backward pass after forwardFast and fills
// post; it reports false when the result cannot be trusted (a backward
// message out of range, or marginals not summing to 1).
func (c *Chain) backwardFast(logEmit []float64, T int, post []float64, ws *Workspace) bool {
	K := c.K
	b, bn := ws.b0, ws.b1 // b: beta_t, bn: beta_{t+1}
	for k := range bn {
		bn[k] = 1
	}
	copy(post[(T-1)*K:], ws.alpha[(T-1)*K:T*K])
	w := ws.e
	for t := T - 2; t >= 0; t-- {
		// w[j] = e_{t+1}(j) beta_{t+1}(j) / c_{t+1}, with the scaling of
		// the forward pass: e scaled by its maximum m, c = exp(logc - m).
		row := logEmit[(t+1)*K : (t+2)*K]
		lc := ws.logc[t+1]
		for j, v := range row {
			w[j] = math.Exp(v-lc) * bn[j]
		}
		s := 0.0
		al := ws.alpha[t*K : (t+1)*K]
		pt := post[t*K : (t+1)*K]
		for i := 0; i < K; i++ {
			ar := ws.a[i*K : (i+1)*K]
			x := 0.0
			for j, v := range ar {
				x += v * w[j]
			}
			if !(x <= 1/tau) {
				return false
			}
			b[i] = x
			pt[i] = al[i] * x
			s += pt[i]
		}
		if !(math.Abs(s-1) <= 1e-9) {
			return false
		}
		// Renormalise (beta_t is needed only up to a constant factor),
		// so rounding does not drift over long sequences.
		inv := 1 / s
		for i := range pt {
			pt[i] *= inv
			b[i] *= inv
		}
		b, bn = bn, b
	}
	return true
}

// backwardLog runs the backward pass in log space after forwardLog and
// fills post. The backward messages are scaled by the forward pass's
// normalisers (and renormalised), as in the fast path.
func (c *Chain) backwardLog(logEmit []float64, T int, post []float64, ws *Workspace) {
	K := c.K
	ws.lb = grow(ws.lb, 2*K)
	lb, lbn := ws.lb[:K], ws.lb[K:2*K]
	clear(lbn)
	tmp := ws.e
	for k := 0; k < K; k++ {
		post[(T-1)*K+k] = math.Exp(ws.la[(T-1)*K+k])
	}
	for t := T - 2; t >= 0; t-- {
		row := logEmit[(t+1)*K : (t+2)*K]
		lc := ws.logc[t+1]
		for i := 0; i < K; i++ {
			for j := 0; j < K; j++ {
				tmp[j] = c.LogTrans[i*K+j] + row[j] - lc + lbn[j]
			}
			lb[i] = floats.LogSumExp(tmp)
		}
		pt := post[t*K : (t+1)*K]
		for i := 0; i < K; i++ {
			tmp[i] = ws.la[t*K+i] + lb[i]
		}
		s := floats.LogSumExp(tmp[:K])
		for i := 0; i < K; i++ {
			pt[i] = math.Exp(tmp[i] - s)
			lb[i] -= s
		}
		lb, lbn = lbn, lb
	}
}

// Counts fills init (length K) with the count of the first state of z (a
// single 1 at z[0], or all zeros for an empty z) and trans (length K*K)
// with the transition counts, trans[i*K+j] = #{t : z[t-1] = i, z[t] = j}:
// the sufficient statistics of Dirichlet Gibbs updates of the initial
// distribution and the transition rows. Both are overwritten. It returns an
// error for bad lengths or a state outside 0..K-1 (leaving init and trans
// unspecified).
func Counts(z []int, K int, init, trans []int) error {
	if K < 1 {
		return fmt.Errorf("hmm: Counts: %d states, want at least 1", K)
	}
	if len(init) != K {
		return fmt.Errorf("hmm: Counts: init has length %d, want K = %d", len(init), K)
	}
	if K > math.MaxInt/K || len(trans) != K*K {
		return fmt.Errorf("hmm: Counts: trans has length %d, want K*K", len(trans))
	}
	clear(init)
	clear(trans)
	for t, s := range z {
		if s < 0 || s >= K {
			return fmt.Errorf("hmm: Counts: z[%d] = %d is not a state in 0..%d", t, s, K-1)
		}
		if t == 0 {
			init[s]++
		} else {
			trans[z[t-1]*K+s]++
		}
	}
	return nil
}
