package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/inference"
)

func newSummary() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "summary RUNDIR... [--out DIR]",
		Short: "Summarise the chains of several runs together (runs spread over machines)",
		Long: `summary makes the summary of all the chains of the finished runs RUNDIR...
together, as one run holding all of them would: the table (mean, sd,
quantiles, split R-hat and bulk/tail ESS of every scalar over all chains,
acceptance rates, stuck chains), the tree summaries (summary.nwk with
coclust.csv when the runs wrote them, mea.nwk, consensus.nwk, with their
clades' credibilities over all chains' kept trees), the ASDSF across all
chains, and the best state (map.nwk).

It is the second half of spreading chains over machines: run each chain as
its own job with "pydtlang run ... --chains 1 --chain-offset K" (K = 0, 1,
..., C-1, the same model, data, --seed and settings), then summarise them.
The summary of runs with offsets 0..C-1 is, number for number and file for
file, that of one run with --chains C (but the wall time, here the longest
run's, and the list of runs in summary.json). docs/cluster-runs.md has a
Slurm array script and a Kubernetes indexed Job.

The runs must be of one design: summary refuses, naming the runs and the
difference, runs whose run.json records another model file, data file or
labels file (by SHA-256), other --set or --draw, other standardization,
or other --iters, --burn, --thin, --tree-thin, --seed or --impute; runs that
hold the same chain; and runs that have not finished (continue them with
run --resume). Chains missing from the design (a job that failed) are
allowed: the table counts the chains given, and summary.json lists their
numbers (chain_numbers). The model is loaded from the first run's inputs,
which must still be at the paths its run.json names and unchanged.

The runs' tree files are read again (not the runs' own summaries): the
summary trees are built from the clade frequencies of all chains together.

With --out DIR, summary.json (the table's numbers and "runs", the runs
summarised), the tree summaries, coclust.csv and map.nwk are written to DIR,
which must not be one of the runs.`,
		Example: `  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --seed 7 --chains 1 --chain-offset 0 --out c1
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --seed 7 --chains 1 --chain-offset 1 --out c2
  pydtlang summary c1 c2 --out merged`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitError{code: 2, err: errors.New("summary: give the run directories to summarise")}
			}
			res, err := inference.Summarize(args, out)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			w := cmd.OutOrStdout()
			for _, r := range res.Runs {
				last := r.FirstChain + r.Chains - 1
				if r.Chains == 1 {
					fmt.Fprintf(w, "%s: chain %d\n", r.Dir, r.FirstChain)
				} else {
					fmt.Fprintf(w, "%s: chains %d to %d\n", r.Dir, r.FirstChain, last)
				}
			}
			fmt.Fprintln(w)
			if err := res.WriteTable(w); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: wrote %s and the summary trees to %s\n", inference.SummaryFile, out)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write summary.json, the summary trees, coclust.csv and map.nwk to DIR")
	return cmd
}
