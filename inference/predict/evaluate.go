package predict

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
)

// Builder compiles the model to fit with the training data bound and the
// extra scalars clamped (on top of the user's own --set values): typically
// a graph.Program, compiled once, bound to the rows (Program.Bind).
type Builder func(train *dataset.Matrix, clamp map[string]float64) (*inference.Model, error)

// EvalConfig controls Evaluate.
type EvalConfig struct {
	// Fraction of rows held out, and the seed of the split (Split).
	Fraction float64
	Seed     uint64
	// Run configures each MCMC fit; Out is replaced by Dir/pydt and
	// Dir/ddt.
	Run inference.Config
	// Dir holds the runs.
	Dir string
	// Standardize fits the PYDT and DDT to standardized data (reported in
	// the data's units all the same).
	Standardize bool
	// NoDDT skips the DDT fit.
	NoDDT bool
	// Trees and Nodes are passed to PredictRun.
	Trees, Nodes int
	// WriteSplit writes the training and test rows to Dir/train.csv and
	// Dir/test.csv (WriteMatrix), and Inputs, if not nil, gives the inputs
	// recorded in each run's run.json (Model.Inputs, with the files'
	// SHA-256 from Inputs.Hash) from the training file's path and the
	// fit's clamps, so that inference.LoadRun can rebuild the run's model
	// later and refuses it when a file has changed.
	WriteSplit bool
	Inputs     func(trainFile string, clamp map[string]float64) *inference.Inputs
	// Progress, if not nil, is told when each fit starts.
	Progress func(name string)
}

// EvalModel is one model's held-out score.
type EvalModel struct {
	Name       string    `json:"model"`
	Summary    Summary   `json:"-"`
	Mean       float64   `json:"mean_log_density"`
	SE         float64   `json:"se"`
	Note       string    `json:"note,omitempty"`
	LogDensity []float64 `json:"-"`
	// VsRef is the mean over test rows of this model's log density minus
	// the reference baseline's (EvalResult.Reference), and VsRefSE its
	// standard error: the paired comparison, much tighter than the
	// difference of the two means' errors.
	VsRef   float64 `json:"minus_reference"`
	VsRefSE float64 `json:"minus_reference_se"`
	// Stuck lists the chains of a fit that were flagged stuck.
	Stuck []int `json:"stuck_chains,omitempty"`
}

// EvalResult is the outcome of Evaluate.
type EvalResult struct {
	Train, Test []int
	Models      []EvalModel
	// KDEBandwidth is the KDE's chosen relative bandwidth H (KDE); zero
	// for binary data.
	KDEBandwidth float64
	// Binary is true for a model whose leaves are a stdlib.ThresholdLeaf
	// (Probit): the rows are binary and the scores are log probabilities.
	Binary bool
	// Reference names the baseline the paired differences are taken
	// against: "KDE", or for binary data "Kernel" (BinaryKernel).
	Reference string
}

// Evaluate is the paper's density experiment: it splits the rows of data
// (Split), fits the model to the training rows by MCMC (inference.Run
// into cfg.Dir/pydt) and, unless NoDDT, Neal's Dirichlet diffusion tree
// (the same model with the PYDT's alpha and beta clamped to 0, into
// cfg.Dir/ddt), and reports the mean held-out log predictive density of
// each (PredictRun), of a Gaussian KDE with its bandwidth chosen by
// leave-one-out likelihood on the training rows (NewKDE), and of a single
// Gaussian fitted by maximum likelihood (NewGaussian).
//
// For a model whose leaves are a stdlib.ThresholdLeaf (Probit) the rows
// are binary, the scores are held-out log probabilities (PredictRun's
// probit predictive, its auxiliary refresh seeded by cfg.Seed), and the
// baselines are those for binary data: the Aitchison–Aitken kernel
// estimate with its flip probability chosen by leave-one-out likelihood
// (NewBinaryKernel, the reference of the paired differences) and
// independent Bernoulli columns with a Beta(1, 1) prior (NewBernoulli).
func Evaluate(ctx context.Context, data *dataset.Matrix, build Builder, cfg EvalConfig) (*EvalResult, error) {
	train, test, err := Split(data.Rows, cfg.Fraction, cfg.Seed)
	if err != nil {
		return nil, err
	}
	res := &EvalResult{Train: train, Test: test}
	trainM := subset(data, train)
	testRows := rowsOfMatrix(subset(data, test))
	trainRows := rowsOfMatrix(trainM)
	trainFile := ""
	if cfg.WriteSplit {
		trainFile = filepath.Join(cfg.Dir, "train.csv")
		if err := WriteMatrix(trainFile, trainM); err != nil {
			return nil, err
		}
		if err := WriteMatrix(filepath.Join(cfg.Dir, "test.csv"), subset(data, test)); err != nil {
			return nil, err
		}
	}

	fit := func(name, dir string, clamp map[string]float64) (*inference.Model, error) {
		m, err := build(copyMatrix(trainM), clamp)
		if err != nil {
			return nil, err
		}
		if err := m.Trees[0].ClosedForm(); err != nil && m.Trees[0].Threshold() == nil {
			return nil, fmt.Errorf("%w; %w", err, ErrAugmented)
		}
		if m.Trees[0].Threshold() != nil {
			res.Binary = true
		}
		if cfg.Standardize {
			if _, err := m.Standardize(); err != nil {
				return nil, err
			}
		}
		if cfg.Progress != nil {
			cfg.Progress(name)
		}
		rc := cfg.Run
		rc.Out = filepath.Join(cfg.Dir, dir)
		rc.AllowStuck = true
		if cfg.Inputs != nil && trainFile != "" {
			m.Inputs = cfg.Inputs(trainFile, clamp)
			if err := m.Inputs.Hash(); err != nil {
				return nil, err
			}
		}
		r, err := inference.Run(ctx, m, rc)
		if err != nil {
			return nil, fmt.Errorf("fitting the %s: %w", name, err)
		}
		pr, err := PredictRun(m, rc.Out, testRows, RunOptions{Trees: cfg.Trees, Nodes: cfg.Nodes, Seed: cfg.Seed})
		if err != nil {
			return nil, fmt.Errorf("predicting with the %s: %w", name, err)
		}
		em := scored(name, pr.LogDensity)
		em.Stuck = r.Stuck
		if len(r.Stuck) > 0 {
			em.Note = fmt.Sprintf("chains %v stuck", r.Stuck)
		}
		res.Models = append(res.Models, em)
		return m, nil
	}
	m, err := fit("PYDT", "pydt", nil)
	if err != nil {
		return nil, err
	}
	if !cfg.NoDDT {
		clamp, err := DDTClamps(m)
		if err != nil {
			return nil, err
		}
		if _, err := fit("DDT", "ddt", clamp); err != nil {
			return nil, err
		}
	}
	if res.Binary {
		err = binaryBaselines(res, trainRows, testRows)
	} else {
		err = realBaselines(res, trainRows, testRows)
	}
	if err != nil {
		return nil, err
	}
	var ref []float64
	for _, m := range res.Models {
		if m.Name == res.Reference {
			ref = m.LogDensity
		}
	}
	for i := range res.Models {
		d := make([]float64, len(ref))
		for j := range d {
			d[j] = res.Models[i].LogDensity[j] - ref[j]
		}
		s := Summarize(d)
		res.Models[i].VsRef, res.Models[i].VsRefSE = s.Mean, s.SE
	}
	return res, nil
}

// realBaselines adds the KDE and the single Gaussian to res.
func realBaselines(res *EvalResult, trainRows, testRows [][]float64) error {
	kde, _, err := NewKDE(trainRows, nil)
	if err != nil {
		return err
	}
	res.KDEBandwidth = kde.H
	res.Reference = "KDE"
	if err := addScored(res, "KDE", fmt.Sprintf("bandwidth %.3g × column sd (leave-one-out)", kde.H), testRows, kde.LogDensity); err != nil {
		return err
	}
	g, err := NewGaussian(trainRows)
	if err != nil {
		return err
	}
	return addScored(res, "Gaussian", "maximum likelihood mean and covariance", testRows, g.LogDensity)
}

// binaryBaselines adds the Aitchison–Aitken kernel and the independent
// Bernoulli columns to res.
func binaryBaselines(res *EvalResult, trainRows, testRows [][]float64) error {
	bk, _, err := NewBinaryKernel(trainRows, nil)
	if err != nil {
		return err
	}
	res.Reference = "Kernel"
	if err := addScored(res, "Kernel", fmt.Sprintf("Aitchison-Aitken, flip probability %.3g (leave-one-out)", bk.Lambda), testRows, bk.LogProb); err != nil {
		return err
	}
	b, err := NewBernoulli(trainRows)
	if err != nil {
		return err
	}
	return addScored(res, "Bernoulli", "independent columns, Beta(1, 1) prior", testRows, b.LogProb)
}

// addScored scores every test row with logp and appends the result to
// res.Models under name, with note; an error names the test row.
func addScored(res *EvalResult, name, note string, testRows [][]float64, logp func([]float64) (float64, error)) error {
	l := make([]float64, len(testRows))
	for i, x := range testRows {
		v, err := logp(x)
		if err != nil {
			return fmt.Errorf("scoring test row %d with the %s baseline: %w", i+1, name, err)
		}
		l[i] = v
	}
	em := scored(name, l)
	em.Note = note
	res.Models = append(res.Models, em)
	return nil
}

func scored(name string, l []float64) EvalModel {
	s := Summarize(l)
	return EvalModel{Name: name, Summary: s, Mean: s.Mean, SE: s.SE, LogDensity: append([]float64(nil), l...)}
}

// DDTClamps returns the clamps that turn m's PYDT into Neal's Dirichlet
// diffusion tree: its alpha and beta arguments, which must be scalar
// variables (or already the constant 0), set to 0.
func DDTClamps(m *inference.Model) (map[string]float64, error) {
	out := map[string]float64{}
	for i, what := range []string{"alpha", "beta"} {
		switch a := m.Tree.Args[i].(type) {
		case graph.Ref:
			out[a.V.Name] = 0
		case graph.Num:
			if a.V != 0 {
				return nil, fmt.Errorf("the PYDT's %s is the constant %v: the DDT needs it to be 0", what, a.V)
			}
		default:
			return nil, errors.New("the PYDT's " + what + " is an expression, not a variable that can be clamped to 0 for the DDT")
		}
	}
	return out, nil
}

func subset(x *dataset.Matrix, rows []int) *dataset.Matrix {
	out := &dataset.Matrix{Rows: len(rows), Cols: x.Cols, ColNames: x.ColNames, Source: x.Source}
	for _, i := range rows {
		out.Data = append(out.Data, x.Data[i*x.Cols:(i+1)*x.Cols]...)
		if x.RowLabels != nil {
			out.RowLabels = append(out.RowLabels, x.RowLabels[i])
		}
	}
	return out
}

func copyMatrix(x *dataset.Matrix) *dataset.Matrix {
	c := *x
	c.Data = append([]float64(nil), x.Data...)
	return &c
}

func rowsOfMatrix(x *dataset.Matrix) [][]float64 {
	out := make([][]float64, x.Rows)
	for i := range out {
		out[i] = x.Data[i*x.Cols : (i+1)*x.Cols]
	}
	return out
}

// WriteMatrix writes x as CSV: a header row when x has column names (with
// "row" over a label column), a label column when x has row labels, values
// in the shortest form that reads back exactly, NA for missing. It then
// reads the file back with dataset.ReadFile and returns an error if that
// does not give x again, so a file it accepts is a faithful copy.
func WriteMatrix(path string, x *dataset.Matrix) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if x.ColNames != nil {
		var head []string
		if x.RowLabels != nil {
			head = append(head, "row")
		}
		w.Write(append(head, x.ColNames...))
	}
	rec := make([]string, 0, x.Cols+1)
	for i := range x.Rows {
		rec = rec[:0]
		if x.RowLabels != nil {
			rec = append(rec, x.RowLabels[i])
		}
		for k := range x.Cols {
			v := x.At(i, k)
			if math.IsNaN(v) {
				rec = append(rec, "NA")
			} else {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	back, err := dataset.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s does not read back: %w", path, err)
	}
	same := back.Rows == x.Rows && back.Cols == x.Cols && slices.Equal(back.RowLabels, x.RowLabels) && len(back.Data) == len(x.Data)
	for i := 0; same && i < len(x.Data); i++ {
		a, b := x.Data[i], back.Data[i]
		same = a == b || math.IsNaN(a) && math.IsNaN(b)
	}
	if !same {
		return fmt.Errorf("%s does not read back as the rows written", path)
	}
	return nil
}
