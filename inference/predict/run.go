package predict

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// DefaultTrees is the number of kept trees PredictRun averages over when
// RunOptions.Trees is zero: the kept (chain, iteration) pairs of the run,
// thinned evenly.
const DefaultTrees = 100

// RunOptions tune PredictRun.
type RunOptions struct {
	// Trees is the number of kept trees to average over, chosen evenly
	// spaced among all kept trees of all chains; zero means DefaultTrees.
	// A negative value means all of them.
	Trees int
	// Nodes is the number of quadrature nodes per edge (Options.Nodes).
	Nodes int
	// ProbitBurn and ProbitDraws are, for a Probit model, the discarded
	// and the kept refresh sweeps of the auxiliary variables per tree
	// (ProbitGibbs); zero means DefaultProbitBurn and DefaultProbitDraws,
	// and a negative ProbitBurn means none.
	ProbitBurn, ProbitDraws int
	// Seed seeds the random stream of those sweeps (each tree has its own
	// stream, so the result does not depend on which other trees are
	// used); unused for other models.
	Seed uint64
}

// RunResult is the posterior predictive of a run at test rows.
type RunResult struct {
	// LogDensity holds, per test row, the log posterior predictive density
	// of its observed entries, in the data's units (a standardized run's
	// Jacobian included); for a Probit model (Binary), the log posterior
	// predictive probability of its observed binary entries.
	LogDensity []float64
	// Imputed holds each test row with its missing entries replaced by
	// their posterior predictive conditional mean given the observed
	// entries (for a Probit model, the probability that the entry is 1);
	// rows without missing entries are copied.
	Imputed [][]float64
	// Binary is true for a Probit model: the rows are binary and Imputed
	// holds probabilities.
	Binary bool
	// Trees is the number of trees averaged over.
	Trees int
}

// ErrAugmented is wrapped by the errors of PlaceRows and Evaluate for a
// model with an augmented likelihood (stdlib.AugmentedLeaf, e.g. Probit;
// PredictRun handles a stdlib.ThresholdLeaf through ProbitGibbs): a run
// directory does not keep the auxiliary variables, so the posterior of the
// latent locations given a tree is not Gaussian.
var ErrAugmented = errors.New("the run does not keep the auxiliary variables that would make the locations' posterior Gaussian")

// gaussianOnly returns nil when the leaves of m's tree get Gaussian evidence
// from the data alone, and otherwise an error wrapping ErrAugmented (and
// inference.ErrUnsupported) that names the likelihood.
func gaussianOnly(m *inference.Model) error {
	b := m.Trees[0]
	if m.Data == nil {
		return errors.New("the model observes no data at the PYDT's leaves")
	}
	if err := b.ClosedForm(); err != nil {
		if b.Indexed() != nil { // the data reach the leaves through latent states
			return err
		}
		return fmt.Errorf("%w; %w", err, ErrAugmented)
	}
	return nil
}

// PredictRun computes the posterior predictive density at every test row
// (NaN entries missing) from the run in dir, fitted with m: m must be bound
// to the run's training data (and standardized when the run was, see
// inference.StandardizeLikeRun). Test rows are in the data's units. It averages the
// predictive mixtures of up to opt.Trees kept trees, each with the
// hyperparameters of its own iteration in trace.csv.
//
// For a Probit model the test rows are binary (0, 1, NaN missing). A run
// keeps no auxiliary variables, so for each tree ProbitGibbs refreshes
// them with the tree and hyperparameters fixed (opt.ProbitBurn discarded
// sweeps, then opt.ProbitDraws kept ones, seeded by opt.Seed) and each
// kept sweep's Gaussian mixture gives the row's probability through the
// probit (Mixture.LogProbBinary); the probabilities are averaged over
// sweeps and trees.
func PredictRun(m *inference.Model, dir string, test [][]float64, opt RunOptions) (*RunResult, error) {
	binary, err := checkTest(m, test, &opt)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	draws, pick, err := keptTrees(m, dir, opt.Trees)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	sc := m.Scaling
	if binary {
		sc = nil
	}
	scaled := scaleRows(m, test, binary)
	jac := make([]float64, len(test))
	for i, row := range test {
		for k, x := range row {
			if sc != nil && !math.IsNaN(x) {
				jac[i] -= math.Log(sc.SD[k])
			}
		}
	}
	// Per row, per tree: log density and conditional means.
	ld := make([][]float64, len(test))
	cm := make([][][]float64, len(test))
	dst := make([]float64, m.D)
	var side func(float64) float64
	if binary {
		side = m.Trees[0].Threshold().Side
	}
	for _, j := range pick {
		rng := rand.New(rand.NewPCG(opt.Seed, uint64(j)))
		mx, err := treeMixture(m, draws[j], Options{Nodes: opt.Nodes}, rng, opt.ProbitBurn, opt.ProbitDraws)
		if err != nil {
			return nil, fmt.Errorf("predict: chain %d, iteration %d: %w", draws[j].chain, draws[j].iter, err)
		}
		for i, x := range scaled {
			if binary {
				ld[i] = append(ld[i], mx.logProbBinary(x, side, dst))
			} else {
				ld[i] = append(ld[i], mx.Conditional(x, dst))
			}
			cm[i] = append(cm[i], append([]float64(nil), dst...))
		}
		draws[j].tree = nil
	}
	res := &RunResult{Trees: len(pick), Binary: binary, LogDensity: make([]float64, len(test)), Imputed: make([][]float64, len(test))}
	weighted := false
	for _, j := range pick {
		weighted = weighted || draws[j].logw != 0
	}
	for i, x := range scaled {
		out := make([]float64, m.D)
		if weighted {
			// An EM run's K best trees: Σ_j w_j p_j(x), w_j = exp(logw_j).
			l := slices.Clone(ld[i])
			for n, j := range pick {
				l[n] += draws[j].logw
			}
			res.LogDensity[i] = fillMissing(l, cm[i], x, out) + jac[i]
		} else {
			res.LogDensity[i] = combine(ld[i], cm[i], x, out) + jac[i]
		}
		for k := range out {
			if sc != nil && math.IsNaN(x[k]) {
				out[k] = sc.Unscale(k, out[k])
			}
			if !math.IsNaN(test[i][k]) {
				out[k] = test[i][k]
			}
		}
		res.Imputed[i] = out
	}
	return res, nil
}

// checkTest checks the test rows against m (their number of columns, and
// for a model whose leaves are a stdlib.ThresholdLeaf, the likelihood's
// data support) and fills in opt's defaults for the probit refresh
// sweeps. It reports whether the rows are binary: the model's leaf
// evidence is not closed-form Gaussian but a ThresholdLeaf, handled by
// ProbitGibbs. Any other likelihood without closed-form Gaussian evidence
// is an error wrapping ErrAugmented.
func checkTest(m *inference.Model, test [][]float64, opt *RunOptions) (bool, error) {
	b := m.Trees[0]
	binary := false
	if err := gaussianOnly(m); err != nil {
		if m.Data == nil || b.Threshold() == nil {
			return false, err
		}
		binary = true // a stdlib.ThresholdLeaf: through ProbitGibbs
	}
	if opt.ProbitDraws < 0 {
		return false, fmt.Errorf("%d probit refresh draws: must not be negative", opt.ProbitDraws)
	}
	switch {
	case opt.ProbitBurn == 0:
		opt.ProbitBurn = DefaultProbitBurn
	case opt.ProbitBurn < 0:
		opt.ProbitBurn = 0
	}
	if opt.ProbitDraws == 0 {
		opt.ProbitDraws = DefaultProbitDraws
	}
	for i, row := range test {
		if len(row) != m.D {
			return false, fmt.Errorf("test row %d has %d columns, the model's data %d", i+1, len(row), m.D)
		}
		if !binary {
			continue
		}
		for k, x := range row {
			if s := b.DataSupport(); !math.IsNaN(x) && !s.Contains(x) {
				return false, fmt.Errorf("test row %d, column %d is %v: %s's data (a %s likelihood) must be %s", i+1, k+1, x, m.Data.Name, b.Leaf.TypeName(), s.Phrase())
			}
		}
	}
	return binary, nil
}

// keptTrees reads the run's trace and returns its draws that have a tree
// in the tree files, with the trees of up to k of them (choose) read in,
// and the indices of those.
func keptTrees(m *inference.Model, dir string, k int) ([]*draw, []int, error) {
	if ri, err := inference.ReadRun(dir); err == nil && ri.IsEM() {
		return emTrees(m, dir, k)
	}
	draws, err := readTrace(m, dir)
	if err != nil {
		return nil, nil, err
	}
	treeThin, err := inference.RunTreeThin(dir)
	if err != nil {
		return nil, nil, err
	}
	draws = withTrees(draws, treeThin)
	if len(draws) == 0 {
		return nil, nil, fmt.Errorf("%s has no kept tree", dir)
	}
	pick := choose(len(draws), k)
	if err := readTrees(m, dir, draws, pick); err != nil {
		return nil, nil, err
	}
	return draws, pick, nil
}

// emTrees returns the "draws" of an EM run: the trees of its K-best list
// (kbest.nwk; the first k when 0 < k < K), each with every latent scalar
// at that tree's EM estimate (summary.json's kbest_estimates) and every
// clamped one at its bound value, weighted by exp(bound) normalised
// (inference.KBestWeights). A run whose summary.json has no
// kbest_estimates (written before they existed) gives its best tree,
// map.nwk, alone, at summary.json's estimates.
func emTrees(m *inference.Model, dir string, k int) ([]*draw, []int, error) {
	res, err := inference.ReadEMResult(dir)
	if err != nil {
		return nil, nil, err
	}
	env := m.NewState().Env
	sum := filepath.Join(dir, inference.SummaryFile)
	newDraw := func(n int, value func(string) (float64, bool)) (*draw, error) {
		d := &draw{chain: 1, iter: n, vals: map[string]float64{}}
		for _, c := range m.Traced() {
			v, ok := value(c.Name)
			if !ok {
				if c.Var.Role != graph.Clamped {
					return nil, fmt.Errorf("%s has no EM estimate of %s for tree %d", sum, c.Name, n)
				}
				v = env.Values[c.Var.ID][c.Off]
			}
			d.vals[c.Name] = v
		}
		return d, nil
	}
	if len(res.KBestEstimates) == 0 {
		d, err := newDraw(1, res.Value)
		if err != nil {
			return nil, nil, err
		}
		// ReadTree also checks that the tree's leaves are the data's rows: a
		// tree that misses some would give a predictive of the wrong data.
		if d.tree, err = m.ReadTree(filepath.Join(dir, inference.MapFile), ""); err != nil {
			return nil, nil, err
		}
		return []*draw{d}, []int{0}, nil
	}
	est := res.KBestEstimates
	if k > 0 && k < len(est) {
		est = est[:k]
	}
	// A tree without the Laplace correction, in a list ranked with it,
	// weighs 0 (inference.EMKBestWeights) and is left out.
	w, err := inference.EMKBestWeights(est)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", sum, err)
	}
	var draws []*draw
	var pick []int
	for i := range est {
		d, err := newDraw(i+1, est[i].Value)
		if err != nil {
			return nil, nil, err
		}
		d.logw = math.Log(w[i])
		draws = append(draws, d)
		if w[i] > 0 || !est[i].LaplaceUnavailable {
			pick = append(pick, i)
		}
	}
	path := filepath.Join(dir, inference.KBestFile)
	err = m.ForEachTree(path, "", func(n int, tr *pydt.Tree) error {
		if n <= len(draws) {
			draws[n-1].tree = tr
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for i, d := range draws {
		if d.tree == nil {
			return nil, nil, fmt.Errorf("%s has %d trees, fewer than the %d of %s's kbest_estimates", path, i, len(res.KBestEstimates), sum)
		}
	}
	return draws, pick, nil
}

// scaleRows returns copies of the test rows in the units of m's fit: scaled
// like the training data when the run was standardized, unless binary.
func scaleRows(m *inference.Model, test [][]float64, binary bool) [][]float64 {
	out := make([][]float64, len(test))
	for i, row := range test {
		out[i] = make([]float64, len(row))
		for k, x := range row {
			if m.Scaling != nil && !binary && !math.IsNaN(x) {
				x = m.Scaling.Scale(k, x)
			}
			out[i][k] = x
		}
	}
	return out
}

// draw is one kept state of a run.
type draw struct {
	chain, iter int
	index       int // within the chain's tree file
	vals        map[string]float64
	// logw is the log weight of an EM run's tree in the average
	// (emTrees); 0 for a run's posterior draws, which weigh equally.
	logw float64
	tree *pydt.Tree
}

// withTrees keeps the draws whose tree is in the tree files of a run with
// tree thinning k (kept sweeps k, 2k, ... of each chain) and renumbers
// their index within the tree file.
func withTrees(draws []*draw, k int) []*draw {
	if k <= 1 {
		return draws
	}
	var out []*draw
	for _, d := range draws {
		if (d.index+1)%k == 0 {
			d.index = (d.index+1)/k - 1
			out = append(out, d)
		}
	}
	return out
}

// readTrace reads trace.csv: one draw per row, in file order.
func readTrace(m *inference.Model, dir string) ([]*draw, error) {
	path := filepath.Join(dir, inference.TraceFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("predict: %s: %w", path, err)
	}
	if len(head) < 4 || head[0] != "chain" || head[1] != "iteration" {
		return nil, fmt.Errorf("predict: %s: not a run's trace (header %q)", path, head)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	traced := m.Traced()
	for _, c := range traced {
		if _, ok := col[c.Name]; !ok {
			return nil, fmt.Errorf("predict: %s has no column %s: the model is not the run's", path, c.Name)
		}
	}
	var out []*draw
	perChain := map[int]int{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("predict: %s: %w", path, err)
		}
		d := &draw{vals: map[string]float64{}}
		if d.chain, err = strconv.Atoi(rec[0]); err == nil {
			d.iter, err = strconv.Atoi(rec[1])
		}
		if err != nil || d.chain < 1 {
			return nil, fmt.Errorf("predict: %s, line %d: bad chain or iteration", path, line)
		}
		for _, c := range traced {
			x, err := strconv.ParseFloat(rec[col[c.Name]], 64)
			if err != nil {
				return nil, fmt.Errorf("predict: %s, line %d, column %s: %w", path, line, c.Name, err)
			}
			d.vals[c.Name] = x
		}
		d.index = perChain[d.chain]
		perChain[d.chain]++
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("predict: %s holds no kept iterations", path)
	}
	return out, nil
}

// choose returns up to k indices in [0, n) evenly spaced (all for k < 0 or
// k >= n; DefaultTrees for k = 0).
func choose(n, k int) []int {
	if k == 0 {
		k = DefaultTrees
	}
	if k < 0 || k > n {
		k = n
	}
	out := make([]int, k)
	for i := range k {
		out[i] = int((float64(i) + 0.5) * float64(n) / float64(k))
	}
	return out
}

// readTrees reads the trees of the picked draws from the chains' tree
// files, keeping only those.
func readTrees(m *inference.Model, dir string, draws []*draw, pick []int) error {
	want := map[int]map[int]*draw{}
	for _, j := range pick {
		d := draws[j]
		if want[d.chain] == nil {
			want[d.chain] = map[int]*draw{}
		}
		want[d.chain][d.index] = d
	}
	for chain, byIndex := range want {
		path := filepath.Join(dir, inference.TreesFile(chain))
		// ForEachTree bounds the file and checks that each tree's leaves
		// are the data's rows: a tree of other data would give a
		// predictive of the wrong rows.
		i := 0
		err := m.ForEachTree(path, "", func(n int, tr *pydt.Tree) error {
			if d, ok := byIndex[n-1]; ok {
				d.tree = tr
			}
			i = n
			return nil
		})
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		// The largest kept iteration without its tree: the number of
		// trees the file should have held (map order is arbitrary).
		last := -1
		for idx, d := range byIndex {
			if d.tree == nil && idx > last {
				last = idx
			}
		}
		if last >= 0 {
			return fmt.Errorf("predict: %s has %d trees, fewer than the %d kept iterations of chain %d in %s", path, i, last+1, chain, inference.TraceFile)
		}
	}
	return nil
}

// treeMixture binds a draw's values in the model and returns its tree's
// predictive mixture; for a Probit model, the average of the mixtures of
// ProbitGibbs's kept sweeps (burn, draws) with the random stream rng.
func treeMixture(m *inference.Model, d *draw, opt Options, rng *rand.Rand, burn, draws int) (*Mixture, error) {
	st := m.NewState()
	env := st.Env
	for _, c := range m.Traced() {
		env.Values[c.Var.ID][c.Off] = d.vals[c.Name]
	}
	if err := m.Refresh(env); err != nil {
		return nil, err
	}
	tp, err := m.TreeParams(env)
	if err != nil {
		return nil, err
	}
	if d.tree.NumLeaves() != m.N {
		return nil, fmt.Errorf("the tree has %d leaves, the data %d rows", d.tree.NumLeaves(), m.N)
	}
	lik := bp.New(d.tree, m.D)
	p := Params{Alpha: tp.Alpha, Beta: tp.Beta, Div: tp.Div, Variance: tp.Variance, Variances: tp.Variances}
	b := m.Trees[0]
	if th := b.Threshold(); th != nil {
		return probitMixture(rng, lik, p, env.Values[m.Data.ID], th.Side, burn, draws, opt)
	}
	var first error
	err = m.Evidence(env, func(i, k int, mean, prec float64) {
		if e := lik.SetEvidence(pydt.NodeID(i), k, mean, prec); e != nil && first == nil {
			first = e
		}
	})
	if err == nil {
		err = first
	}
	if err != nil {
		return nil, err
	}
	if b.Gaussian() {
		if p.Noise, err = noiseVariances(m, env); err != nil {
			return nil, err
		}
	}
	return Tree(lik, p, opt)
}

// noiseVariances returns the Normal link's sd² per dimension, evaluated
// through the compiled model with every data entry made present; it is an
// error for the sd to differ between rows, as a new row then has none.
func noiseVariances(m *inference.Model, env *graph.Env) ([]float64, error) {
	y := env.Values[m.Data.ID]
	saved := append([]float64(nil), y...)
	for i := range y {
		y[i] = 0
	}
	defer copy(y, saved)
	out := make([]float64, m.D)
	for k := range out {
		out[k] = math.NaN()
	}
	var bad error
	err := m.Evidence(env, func(i, k int, _, prec float64) {
		v := 1 / prec
		switch {
		case math.IsNaN(out[k]):
			out[k] = v
		case out[k] != v && bad == nil:
			bad = fmt.Errorf("the noise sd of column %d differs between rows (%g and %g); a new row has no sd of its own", k+1, math.Sqrt(out[k]), math.Sqrt(v))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, bad
}

// Summary is the mean of per-row log predictive densities with its
// standard error (the sample standard deviation over √n), as Neal's
// dft-pred reports them.
type Summary struct {
	Mean, SE float64
	N        int
}

// Summarize returns the mean and standard error of the finite-or-not
// values l (an infinite value makes the mean infinite).
func Summarize(l []float64) Summary {
	n := len(l)
	if n == 0 {
		return Summary{Mean: math.NaN(), SE: math.NaN()}
	}
	var s float64
	for _, v := range l {
		s += v
	}
	mean := s / float64(n)
	if n < 2 {
		return Summary{Mean: mean, SE: math.NaN(), N: n}
	}
	var ss float64
	for _, v := range l {
		ss += (v - mean) * (v - mean)
	}
	return Summary{Mean: mean, SE: math.Sqrt(ss / float64(n-1) / float64(n)), N: n}
}

// Accuracy returns the fraction of the binary entries missing in test and
// present in truth whose predicted probability of 1 (prob, as
// RunResult.Imputed holds for a Probit model) is on the side of 1/2 of
// their true value (a probability of exactly 1/2 counts as wrong), and
// their number.
func Accuracy(test, prob, truth [][]float64) (float64, int) {
	right, n := 0, 0
	for i := range test {
		for k, x := range test[i] {
			if !math.IsNaN(x) || i >= len(truth) || k >= len(truth[i]) || math.IsNaN(truth[i][k]) {
				continue
			}
			if (truth[i][k] == 1 && prob[i][k] > 0.5) || (truth[i][k] == 0 && prob[i][k] < 0.5) {
				right++
			}
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return float64(right) / float64(n), n
}

// RMSE returns the root mean squared error of the imputed entries against
// the truth over the entries missing in test and present in truth, and
// their number.
func RMSE(test, imputed, truth [][]float64) (float64, int) {
	var ss float64
	n := 0
	for i := range test {
		for k, x := range test[i] {
			if !math.IsNaN(x) || i >= len(truth) || k >= len(truth[i]) || math.IsNaN(truth[i][k]) {
				continue
			}
			d := imputed[i][k] - truth[i][k]
			ss += d * d
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return math.Sqrt(ss / float64(n)), n
}
