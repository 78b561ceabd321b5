package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
)

func newRun() *cobra.Command {
	var (
		b       bindings
		cfg     inference.Config
		explain bool
		resume  string
	)
	cmd := &cobra.Command{
		Use:   "run MODEL --data NAME=FILE... [--iters N --burn B --thin T --chains C --seed S] --out DIR",
		Short: "Fit a model by MCMC: posterior trees and hyperparameters",
		Long: `run samples the posterior of a model's tree and latent scalars by MCMC.

The engine chooses an update for each latent variable from the factors around
it (run --explain prints the choice): the paper's subtree move with slice
moves of divergence times and of re-attachment positions for the tree,
conjugate Gibbs updates for c and the precision where their Gamma priors
allow, slice sampling (log or logit scale) for everything else, and data
augmentation for a Probit likelihood. Internal locations are integrated out by
belief propagation; missing data are marginalised.

Chains run in parallel with independent streams; the same --seed gives the
same output. It writes to DIR, as it goes:
  trace.csv        chain,iteration,log_joint,log_lik and every latent scalar,
                   one row per kept iteration per chain
  trees-K.nwk      the kept trees of chain K (Newick, diffusion-time lengths)
  map.nwk          the highest-log-joint tree seen
  summary.json     mean, sd, 5/50/95% quantiles, split R-hat and bulk/tail ESS
                   of every scalar; acceptance rates; wall time
  impute.csv       with --impute: draws of the missing data entries
  checkpoint.json  the state after the last checkpoint (written atomically)

Ctrl-C stops after the current sweep, writes a checkpoint and the summary;
"run --resume DIR" continues exactly as if the run had not stopped.

Load the trace in Python with ArviZ:
  df = pandas.read_csv("DIR/trace.csv")
  idata = arviz.from_dataframe(df, chain="chain", draw="iteration")   # or
  idata = arviz.from_dict({c: df.pivot(index="iteration", columns="chain", values=c).T.values for c in ["alpha"]})
and in R with posterior:
  d <- read.csv("DIR/trace.csv"); names(d)[1:2] <- c(".chain", ".iteration")
  posterior::summarise_draws(posterior::as_draws_df(d))`,
		Example: `  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --iters 500 --seed 1 --out fit
  pydtlang run examples/binary.pydt --data Y=examples/data/animals.csv --chains 2 --out animals
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --explain
  pydtlang run --resume fit`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			if resume != "" {
				return resumeRun(cmd, resume)
			}
			if len(args) != 1 {
				return &exitError{code: 2, err: errors.New("run: give a MODEL file (or --resume DIR)")}
			}
			l, err := load(args[0], &b, false, stderr)
			if err != nil {
				return err
			}
			m, err := inference.NewModel(l.g)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if explain {
				text, err := inference.Explain(m)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schedule of one sweep for %s (likelihood link: %v):\n%s", l.path, m.Link, text)
				return nil
			}
			if cfg.Out == "" {
				return &exitError{code: 2, err: errors.New("run: --out DIR is required")}
			}
			for _, w := range m.Warnings(graph.NewEnv(l.g)) {
				fmt.Fprintf(stderr, "pydtlang: warning: %s\n", w)
			}
			abs, _ := filepath.Abs(args[0])
			data := map[string]string{}
			for _, kv := range b.data {
				name, file, _ := cutEq(kv)
				a, _ := filepath.Abs(file)
				data[name] = a
			}
			cfg.Meta = map[string]any{"model": abs, "data": data, "set": b.set}
			return execute(cmd, func(ctx context.Context, progress func(int, int, float64)) (*inference.Result, error) {
				cfg.Progress = progress
				return inference.Run(ctx, m, cfg)
			}, cfg.Out)
		},
	}
	b.register(cmd, true)
	f := cmd.Flags()
	f.IntVar(&cfg.Iters, "iters", 1000, "sweeps per chain, burn-in included")
	f.IntVar(&cfg.Burn, "burn", 0, "sweeps discarded at the start (default iters/2; -1 for none)")
	f.IntVar(&cfg.Thin, "thin", 1, "keep every T-th sweep after burn-in")
	f.IntVar(&cfg.Chains, "chains", 4, "independent chains, run in parallel")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed; the same seed gives the same output")
	f.StringVar(&cfg.Out, "out", "", "output directory")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 100, "sweeps between checkpoints")
	f.BoolVar(&cfg.Impute, "impute", false, "write posterior draws of missing data entries to impute.csv")
	f.BoolVar(&explain, "explain", false, "print the chosen updates of one sweep and exit")
	f.StringVar(&resume, "resume", "", "continue the stopped run in DIR from its last checkpoint")
	return cmd
}

func cutEq(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// resumeRun rebuilds the model from run.json and continues the run.
func resumeRun(cmd *cobra.Command, dir string) error {
	meta, err := inference.ReadRunMeta(dir)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("resume %s: %w", dir, err)}
	}
	model, _ := meta["model"].(string)
	var b bindings
	if data, ok := meta["data"].(map[string]any); ok {
		for name, file := range data {
			b.data = append(b.data, fmt.Sprintf("%s=%v", name, file))
		}
	}
	if sets, ok := meta["set"].([]any); ok {
		for _, s := range sets {
			b.set = append(b.set, fmt.Sprint(s))
		}
	}
	l, err := load(model, &b, false, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	m, err := inference.NewModel(l.g)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return execute(cmd, func(ctx context.Context, progress func(int, int, float64)) (*inference.Result, error) {
		return inference.Resume(ctx, m, dir, progress)
	}, dir)
}

// execute runs fn with Ctrl-C handling and a progress bar on a terminal,
// then prints the summary table.
func execute(cmd *cobra.Command, fn func(context.Context, func(int, int, float64)) (*inference.Result, error), out string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := cmd.ErrOrStderr()
	var progress func(int, int, float64)
	if isTerminal(stderr) {
		var bar *progressbar.ProgressBar
		progress = func(done, total int, lj float64) {
			if bar == nil {
				bar = progressbar.NewOptions(total,
					progressbar.OptionSetWriter(stderr),
					progressbar.OptionShowIts(),
					progressbar.OptionSetItsString("sweeps"),
					progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionFullWidth(),
					progressbar.OptionClearOnFinish())
			}
			bar.Describe(fmt.Sprintf("log joint %.6g", lj))
			bar.Set(done)
		}
	}
	res, err := fn(ctx, progress)
	if res != nil {
		res.WriteTable(cmd.OutOrStdout())
	}
	if errors.Is(err, inference.ErrInterrupted) {
		done := 0
		if res != nil {
			done = res.Completed
		}
		fmt.Fprintf(stderr, "pydtlang: stopped after iteration %d; everything written in %s is valid. Continue with: pydtlang run --resume %s\n", done, out, out)
		return &exitError{code: 130, err: err, quiet: true}
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
