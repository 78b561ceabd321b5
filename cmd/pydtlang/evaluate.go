package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/predict"
)

func newEvaluate() *cobra.Command {
	var (
		b      bindings
		cfg    predict.EvalConfig
		burn   int
		asJSON bool
		out    string
	)
	cmd := &cobra.Command{
		Use:   "evaluate MODEL --data [NAME=]FILE --test-fraction F --seed S [--iters N] [--chains C] [--out DIR] [--json]",
		Short: "Held-out density experiment: PYDT vs DDT vs kernel density vs Gaussian (or, for binary data, vs kernel and Bernoulli)",
		Long: `evaluate runs the paper's density experiment in one command. It splits the rows
of the data at random (--test-fraction of them held out, chosen by --seed),
fits MODEL to the training rows by MCMC (as run does, into DIR/pydt), fits
Neal's Dirichlet diffusion tree (the same model with the PYDT's alpha and beta
clamped to 0, into DIR/ddt; --no-ddt skips it), and reports the mean log
predictive density of the held-out rows, with its standard error, and each
model's paired difference from the reference baseline, the KDE (mean over
held-out rows of the difference, with its standard error), under:

  PYDT      the posterior predictive of the fit (as predict computes it)
  DDT       the same with alpha = beta = 0
  KDE       a Gaussian kernel density estimate of the training rows with a
            diagonal bandwidth H × (column sd), H chosen from 60 values
            between 0.01 and 3 (log-spaced) by leave-one-out log likelihood
            on the training rows
  Gaussian  one multivariate normal with the maximum-likelihood mean and
            covariance of the training rows

Densities are in the data's units (also with --standardize, which fits the
trees to standardized data). The KDE and the Gaussian use the training rows
without missing entries; missing test entries are marginalised by all four.
For a Probit model the rows are binary (0/1, NA missing) and the scores are
held-out log probabilities of each row's observed entries: the PYDT and DDT
through predict's probit predictive (per kept tree a short Gibbs refresh of
the auxiliary variables, seeded by --seed), and as baselines

  Kernel     the Aitchison-Aitken kernel estimate of the complete training
             rows: each entry of a training row flipped with probability
             λ, λ chosen from 50 values between 0.001 and 0.5 (log-spaced)
             by leave-one-out log likelihood; the reference baseline
  Bernoulli  independent columns, each Bernoulli with a Beta(1, 1) prior:
             P(1) = (ones + 1)/(observed + 2) in the training rows

(--standardize does not apply to binary data.)
DIR defaults to a temporary directory that is removed afterwards; with --out
it keeps both runs, the split as DIR/train.csv and DIR/test.csv, and
evaluate.json; each run's run.json names train.csv, so that
"pydtlang predict DIR/pydt --test DIR/test.csv" repeats the PYDT's number (and
plot, cut and the rest read the runs as any other).
evaluate.json (the same as --json prints) holds data, rows, test_fraction,
seed, iterations, chains, standardize, binary, reference (the baseline of the
paired differences: KDE, or Kernel for binary data), test_rows (the held-out
rows' labels or numbers) and models, one per row of the table: model,
mean_log_density, se, minus_reference and minus_reference_se (the paired
difference from the reference and its standard error), note (the table's
note; absent when empty), stuck_chains (absent when none) and log_density
(each held-out row's score, in the order of test_rows); a value JSON cannot
hold (NaN, ±Inf) is null.
The MCMC settings (--iters, --burn, --chains, --thin) apply to both fits, and
--seed seeds both the split and the chains. A stuck chain does not stop the
evaluation; it is noted in the table.`,
		Example: `  pydtlang evaluate examples/gaussian.pydt --data examples/data/synthetic.csv --test-fraction 0.1 --seed 1 --iters 500
  pydtlang evaluate examples/binary.pydt --data Y=examples/data/animals.csv --test-fraction 0.2 --seed 1 --iters 400
  pydtlang evaluate examples/gaussian.pydt --data X=ccle.txt --test-fraction 0.1 --seed 1 \
      --iters 1000 --chains 2 --standardize --out ccle-eval --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			if len(b.data) != 1 {
				return &exitError{code: 2, err: errors.New("evaluate: give the data once: --data [NAME=]FILE")}
			}
			if err := runFlags(cmd, &cfg.Run, burn); err != nil {
				return err
			}
			if cfg.Trees < 0 || cfg.Nodes < 0 {
				return &exitError{code: 2, err: errors.New("evaluate: --trees and --nodes must not be negative")}
			}
			if cfg.Trees == 0 && cmd.Flags().Changed("trees") {
				cfg.Trees = -1
			}
			// The model without data, to name the data variable.
			l, err := load(args[0], &bindings{set: b.set}, true, stderr)
			if err != nil {
				return err
			}
			name, file, ok := strings.Cut(b.data[0], "=")
			if !ok {
				file = b.data[0]
				if name, err = onlyDataVar(l.Graph); err != nil {
					return &exitError{code: 2, err: err}
				}
			}
			data, _, err := inference.ReadData(file)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if data.IsLong() {
				return &exitError{code: 1, err: fmt.Errorf("evaluate: %s is a file of draws; give plain rows", file)}
			}
			sets, err := inference.ParseSets(b.set)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			// Compiled once; each fit binds it to the training rows.
			prog, err := graph.CompileProgram(l.File, graph.Options{NeedPYDT: true})
			if err != nil {
				printDiagnostics(stderr, err, l.Src)
				return failed
			}
			build := func(train *dataset.Matrix, clamp map[string]float64) (*inference.Model, error) {
				s := map[string]float64{}
				for k, v := range sets {
					s[k] = v
				}
				for k, v := range clamp {
					s[k] = v
				}
				g, err := prog.Bind(graph.Bindings{Set: s, Data: map[string]*dataset.Matrix{name: train}})
				if err != nil {
					printDiagnostics(stderr, err, l.Src)
					return nil, errors.New("the model does not compile with the training data")
				}
				return inference.NewModel(g)
			}
			cfg.Dir = out
			if out == "" {
				if cfg.Dir, err = os.MkdirTemp("", "pydtlang-evaluate-"); err != nil {
					return &exitError{code: 1, err: err}
				}
				defer os.RemoveAll(cfg.Dir)
			} else {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return &exitError{code: 1, err: err}
				}
				cfg.WriteSplit = true
				cfg.Inputs = func(trainFile string, clamp map[string]float64) *inference.Inputs {
					all := maps.Clone(sets)
					maps.Copy(all, clamp)
					var set []string
					for _, k := range slices.Sorted(maps.Keys(all)) {
						set = append(set, k+"="+strconv.FormatFloat(all[k], 'g', -1, 64))
					}
					return &inference.Inputs{Model: inference.File{Path: absPath(args[0])},
						Data: map[string]inference.File{name: {Path: absPath(trainFile)}}, Set: set}
				}
			}
			cfg.Seed = cfg.Run.Seed
			cfg.Run.Force = true
			cfg.Progress = func(model string) {
				fmt.Fprintf(stderr, "pydtlang: fitting the %s: %d chains × %d iterations\n", model, cfg.Run.Chains, cfg.Run.Iters)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := predict.Evaluate(ctx, data, build, cfg)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("evaluate: %w", err)}
			}
			report := evalReport{Data: absPath(file), Rows: data.Rows, TestFraction: cfg.Fraction, Seed: cfg.Seed,
				Iterations: cfg.Run.Iters, Chains: cfg.Run.Chains, Standardize: cfg.Standardize,
				Binary: res.Binary, Reference: res.Reference, Models: res.Models}
			for _, i := range res.Test {
				report.TestRows = append(report.TestRows, rowName(data, i))
			}
			if out != "" {
				f, err := os.Create(filepath.Join(out, "evaluate.json"))
				if err == nil {
					err = writeEvalJSON(f, report)
					if cerr := f.Close(); err == nil {
						err = cerr
					}
				}
				if err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			if asJSON {
				return writeEvalJSON(cmd.OutOrStdout(), report)
			}
			return writeEvalTable(cmd.OutOrStdout(), report, len(res.Train))
		},
	}
	b.register(cmd, true)
	f := cmd.Flags()
	f.Float64Var(&cfg.Fraction, "test-fraction", 0.1, "fraction of the rows held out")
	f.IntVar(&cfg.Run.Iters, "iters", 1000, "sweeps per chain, burn-in included")
	f.IntVar(&burn, "burn", 0, "sweeps discarded at the start; 0 for none (default: half of --iters)")
	f.IntVar(&cfg.Run.Thin, "thin", 1, "keep every T-th sweep after burn-in")
	f.IntVar(&cfg.Run.Chains, "chains", 2, "independent chains per fit")
	f.IntVar(&cfg.Run.CheckpointEvery, "checkpoint-every", 100, "sweeps between checkpoints")
	f.Uint64Var(&cfg.Run.Seed, "seed", 1, "seed of the split and of the chains")
	f.StringVar(&out, "out", "", "directory for the two runs and evaluate.json (default: a temporary directory, removed)")
	f.BoolVar(&cfg.Standardize, "standardize", false, "fit the trees to standardized columns (densities are still reported in the data's units)")
	f.BoolVar(&cfg.NoDDT, "no-ddt", false, "skip the DDT fit")
	f.IntVar(&cfg.Trees, "trees", predict.DefaultTrees, "kept trees to average the predictive over, evenly spaced; 0 for all")
	f.IntVar(&cfg.Nodes, "nodes", predict.DefaultNodes, "Gauss-Legendre nodes per edge for the divergence time")
	f.BoolVar(&asJSON, "json", false, "print JSON (also written to DIR/evaluate.json with --out)")
	return cmd
}

// onlyDataVar returns the name of the model's only data variable.
func onlyDataVar(g *graph.Graph) (string, error) {
	var names []string
	for _, v := range g.Vars {
		if v.IsData {
			names = append(names, v.Name)
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("evaluate: the model has data variables %v; name the one to split with --data NAME=FILE", names)
	}
	return names[0], nil
}

type evalReport struct {
	Data         string              `json:"data"`
	Rows         int                 `json:"rows"`
	TestFraction float64             `json:"test_fraction"`
	Seed         uint64              `json:"seed"`
	Iterations   int                 `json:"iterations"`
	Chains       int                 `json:"chains"`
	Standardize  bool                `json:"standardize"`
	Binary       bool                `json:"binary"`
	Reference    string              `json:"reference"`
	Models       []predict.EvalModel `json:"models"`
	TestRows     []string            `json:"test_rows"`
}

func writeEvalJSON(w io.Writer, r evalReport) error {
	type model struct {
		Name  string    `json:"model"`
		Mean  jsonNum   `json:"mean_log_density"`
		SE    jsonNum   `json:"se"`
		VsRef jsonNum   `json:"minus_reference"`
		VsSE  jsonNum   `json:"minus_reference_se"`
		Note  string    `json:"note,omitempty"`
		Stuck []int     `json:"stuck_chains,omitempty"`
		Rows  []jsonNum `json:"log_density"`
	}
	out := struct {
		evalReport
		Models []model `json:"models"`
	}{evalReport: r}
	for _, m := range r.Models {
		mm := model{Name: m.Name, Mean: jsonNum(m.Mean), SE: jsonNum(m.SE), VsRef: jsonNum(m.VsRef), VsSE: jsonNum(m.VsRefSE), Note: m.Note, Stuck: m.Stuck}
		for _, v := range m.LogDensity {
			mm.Rows = append(mm.Rows, jsonNum(v))
		}
		out.Models = append(out.Models, mm)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeEvalTable(w io.Writer, r evalReport, nTrain int) error {
	fmt.Fprintf(w, "%d training rows, %d held out (fraction %g, seed %d); MCMC %d chains × %d iterations\n\n",
		nTrain, len(r.TestRows), r.TestFraction, r.Seed, r.Chains, r.Iterations)
	score := "mean log density"
	if r.Binary {
		score = "mean log prob"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s\tse\tminus %s (paired)\tse\tnote\n", score, r.Reference)
	for _, m := range r.Models {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%.4f\t%s\n", m.Name, m.Mean, m.SE, m.VsRef, m.VsRefSE, m.Note)
	}
	return tw.Flush()
}
