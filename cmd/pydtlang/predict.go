package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/predict"
)

func newPredict() *cobra.Command {
	var (
		testPath, truthPath string
		opt                 predict.RunOptions
		asJSON              bool
	)
	cmd := &cobra.Command{
		Use:   "predict RUNDIR --test FILE [--truth FILE] [--trees K] [--json]",
		Short: "Held-out log predictive density (and imputation) from a finished run",
		Long: `predict computes the posterior predictive density of each row of a test file
under the run in RUNDIR (paper, Section 6.3): for each of --trees kept trees
(evenly spaced over all chains' kept iterations; default 100, 0 for all) with
the hyperparameters of its iteration in trace.csv, the density of a new point
is a mixture of Gaussians that follows the generative process (diverging from
each edge, divergence time integrated by Gauss-Legendre quadrature with
--nodes nodes per edge, or at each branch point), and the tree densities are
averaged.

It prints each row's log predictive density and their mean with its standard
error (sample sd over √n, as Neal's dft-pred reports), in the data's units
(a run fitted with --standardize included). The model and training data are
those recorded in RUNDIR/run.json; they must not have changed since the run.
For a run of --method em the trees are the K best (kbest.nwk; the first
--trees of them when --trees is less), each with its own hyperparameters
(summary.json's kbest_estimates: c and the precision at their variational
posterior means, alpha and beta at their point estimates), averaged with
weights exp(bound) normalised to sum to 1 (summary.json's kbest_weights).
The weights are an approximation of the trees' posterior probabilities:
they take each tree's bound for its log evidence (with the Laplace
correction for the times where the run ranked by it: summary.json's
times_integrated) and ignore the bound's gap, the spread of the
hyperparameters (and of the times without the correction) and every tree
outside the list; bounds tens of nats apart give the best tree all the
weight.
An EM run written before kbest_estimates existed gives its best tree,
map.nwk, alone.

Rows with missing entries (empty, NA, NaN): the density is that of the
observed entries (the missing ones are marginalised exactly), and each missing
entry is predicted by its posterior predictive conditional mean given the
row's observed entries. --truth FILE, a file of the same shape holding the
true values, reports the root mean squared error of those predictions over
the entries missing in --test and present in --truth.

For a model with several PYDTs, predict scores rows of the first PYDT's data
under its trees, and a note on stderr says so.

Models with a Probit likelihood (binary data): test entries are 0 or 1 (or
missing), and each row's number is the log posterior predictive probability of
its observed entries. A run keeps no auxiliary variables, so for each tree
predict runs a short Gibbs sampler with the tree and hyperparameters fixed,
alternating the latent locations given the auxiliaries (belief propagation)
and the auxiliaries given the locations (truncated normals), as the run's
sampler does: --probit-burn sweeps (default 20) are discarded, and each of the
next --probit-draws (default 5) gives a Gaussian mixture for the new row's
latent locations, through which P(y = 1) = Φ(μ/√(1+v)) per component. The
probabilities are averaged over sweeps and trees; --seed fixes the random
stream. A missing entry is predicted by its probability of being 1 given the
row's observed entries, and --truth reports the accuracy (probability on the
true value's side of 1/2) instead of the RMSE.`,
		Example: `  pydtlang run examples/gaussian.pydt --data X=train.csv --out fit
  pydtlang predict fit --test test.csv
  pydtlang predict fit --test test-with-gaps.csv --truth test.csv --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if testPath == "" {
				return &exitError{code: 2, err: errors.New("predict: --test FILE is required")}
			}
			if opt.Trees < 0 || opt.Nodes < 0 {
				return &exitError{code: 2, err: errors.New("predict: --trees and --nodes must not be negative")}
			}
			if opt.ProbitBurn < 0 || opt.ProbitDraws < 1 {
				return &exitError{code: 2, err: errors.New("predict: --probit-burn must not be negative and --probit-draws must be at least 1")}
			}
			if opt.ProbitBurn == 0 {
				opt.ProbitBurn = -1 // none; RunOptions reads 0 as the default
			}
			if opt.Trees == 0 && cmd.Flags().Changed("trees") {
				opt.Trees = -1 // all
			}
			dir := args[0]
			m, err := loadRun(cmd, dir)
			if err != nil {
				return err
			}
			if m.Several() {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: the model has several PYDTs; predict scores rows of %s, the data of the first, %s, under its trees\n",
					m.Data.Name, m.Leaves.Name)
			}
			test, err := readRows(testPath, m.D)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("predict: %w", err)}
			}
			var truth *dataset.Matrix
			if truthPath != "" {
				if truth, err = readRows(truthPath, m.D); err != nil {
					return &exitError{code: 1, err: fmt.Errorf("predict: --truth: %w", err)}
				}
				if truth.Rows != test.Rows {
					return &exitError{code: 1, err: fmt.Errorf("predict: --truth %s has %d rows, --test %s has %d", truthPath, truth.Rows, testPath, test.Rows)}
				}
			}
			res, err := predict.PredictRun(m, dir, rowsOf(test), opt)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			var truthRows [][]float64
			if truth != nil {
				truthRows = rowsOf(truth)
			}
			return writePrediction(cmd.OutOrStdout(), test, res, truthRows, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&testPath, "test", "", "test rows: a data file with the training data's columns (missing entries allowed)")
	f.StringVar(&truthPath, "truth", "", "true values of the test rows' missing entries: a file of the same shape; reports the imputation RMSE (accuracy for a Probit model)")
	f.IntVar(&opt.Trees, "trees", predict.DefaultTrees, "kept trees to average over, evenly spaced; 0 for all")
	f.IntVar(&opt.Nodes, "nodes", predict.DefaultNodes, "Gauss-Legendre nodes per edge for the divergence time")
	f.IntVar(&opt.ProbitBurn, "probit-burn", predict.DefaultProbitBurn, "Probit models: discarded refresh sweeps of the auxiliary variables per tree")
	f.IntVar(&opt.ProbitDraws, "probit-draws", predict.DefaultProbitDraws, "Probit models: kept refresh sweeps per tree, each giving a predictive mixture")
	f.Uint64Var(&opt.Seed, "seed", 1, "Probit models: seed of the refresh sweeps")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// loadRun rebuilds the model of the run in dir from its run.json, as
// --resume does, checks that the model and data files have not changed,
// and standardizes the data when the run did.
func loadRun(cmd *cobra.Command, dir string) (*inference.Model, error) {
	wrap := func(err error) error { return &exitError{code: 1, err: fmt.Errorf("%s: %w", dir, err)} }
	m, err := modelOfRun(dir, cmd.ErrOrStderr(), wrap)
	if err != nil {
		return nil, err
	}
	if err := inference.StandardizeLikeRun(m, dir); err != nil {
		return nil, wrap(err)
	}
	return m, nil
}

// readRows reads a data file of d columns.
func readRows(path string, d int) (*dataset.Matrix, error) {
	x, _, err := inference.ReadData(path)
	if err != nil {
		return nil, err
	}
	if x.IsLong() {
		return nil, fmt.Errorf("%s is a file of draws; give plain rows", path)
	}
	if x.Cols != d {
		return nil, fmt.Errorf("%s has %d columns, the training data %d", path, x.Cols, d)
	}
	return x, nil
}

func rowsOf(x *dataset.Matrix) [][]float64 {
	out := make([][]float64, x.Rows)
	for i := range out {
		out[i] = x.Data[i*x.Cols : (i+1)*x.Cols]
	}
	return out
}

func rowName(x *dataset.Matrix, i int) string {
	if i < len(x.RowLabels) {
		return x.RowLabels[i]
	}
	return strconv.Itoa(i + 1)
}

// jsonNum is a float that encodes NaN and ±Inf as null.
type jsonNum float64

func (v jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

func writePrediction(w io.Writer, test *dataset.Matrix, res *predict.RunResult, truth [][]float64, asJSON bool) error {
	s := predict.Summarize(res.LogDensity)
	rmse, nImp := math.NaN(), 0
	if truth != nil {
		if res.Binary {
			rmse, nImp = predict.Accuracy(rowsOf(test), res.Imputed, truth)
		} else {
			rmse, nImp = predict.RMSE(rowsOf(test), res.Imputed, truth)
		}
	}
	type imputed struct {
		Column int     `json:"column"`
		Value  jsonNum `json:"value"`
	}
	type row struct {
		Row        string    `json:"row"`
		LogDensity jsonNum   `json:"log_density"`
		Imputed    []imputed `json:"imputed,omitempty"`
	}
	rows := make([]row, test.Rows)
	for i := range rows {
		rows[i] = row{Row: rowName(test, i), LogDensity: jsonNum(res.LogDensity[i])}
		for k := range test.Cols {
			if math.IsNaN(test.At(i, k)) {
				rows[i].Imputed = append(rows[i].Imputed, imputed{Column: k + 1, Value: jsonNum(res.Imputed[i][k])})
			}
		}
	}
	if asJSON {
		out := struct {
			Rows        []row    `json:"rows"`
			Mean        jsonNum  `json:"mean_log_density"`
			SE          jsonNum  `json:"se"`
			N           int      `json:"n"`
			Trees       int      `json:"trees"`
			Binary      bool     `json:"binary,omitempty"`
			RMSE        *jsonNum `json:"imputation_rmse,omitempty"`
			RMSEEntries int      `json:"imputation_rmse_entries,omitempty"`
			Acc         *jsonNum `json:"imputation_accuracy,omitempty"`
			AccEntries  int      `json:"imputation_accuracy_entries,omitempty"`
		}{Rows: rows, Mean: jsonNum(s.Mean), SE: jsonNum(s.SE), N: s.N, Trees: res.Trees, Binary: res.Binary}
		if truth != nil {
			r := jsonNum(rmse)
			if res.Binary {
				out.Acc, out.AccEntries = &r, nImp
			} else {
				out.RMSE, out.RMSEEntries = &r, nImp
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if res.Binary {
		fmt.Fprintln(tw, "row\tlog_prob\tP(missing = 1) (column=probability)")
	} else {
		fmt.Fprintln(tw, "row\tlog_density\timputed (column=value)")
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.6g\t", r.Row, float64(r.LogDensity))
		for j, im := range r.Imputed {
			if j > 0 {
				fmt.Fprint(tw, " ")
			}
			fmt.Fprintf(tw, "%d=%.6g", im.Column, float64(im.Value))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	what := "density"
	if res.Binary {
		what = "probability"
	}
	fmt.Fprintf(w, "\nmean log predictive %s %.6g ± %.3g (standard error) over %d rows; %d trees\n", what, s.Mean, s.SE, s.N, res.Trees)
	switch {
	case truth != nil && res.Binary:
		fmt.Fprintf(w, "imputation accuracy %.6g over %d entries missing in the test file\n", rmse, nImp)
	case truth != nil:
		fmt.Fprintf(w, "imputation RMSE %.6g over %d entries missing in the test file\n", rmse, nImp)
	}
	return nil
}
