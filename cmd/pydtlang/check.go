package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
)

func newCheck() *cobra.Command {
	var (
		b           bindings
		standardize bool
	)
	cmd := &cobra.Command{
		Use:   "check MODEL [--data NAME=FILE]... [--draw K] [--set NAME=VALUE]...",
		Short: "Compile a model and print its factor graph",
		Long: `check parses and compiles a model and prints a summary of its factor graph:
dimensions, every variable with its role (constant, observed, clamped, latent,
deterministic), shape and support, and every factor.

Without --data, dimensions may stay unbound and data unobserved; with data,
the values are checked against each node's support, naming the file, row and
column of any offending value. On error it prints every diagnostic as
file:line:col: message, with the source line and a caret, and exits with
status 1.

With data, it also says when run could not fit the model (a latent
variable no update serves, for one), and prints the warnings that run
would print, among them
real-valued columns far from unit scale (the default priors assume columns
of roughly mean 0 and sd 1). --standardize prints the mean and standard
deviation of each column that run --standardize would divide out.`,
		Example: `  pydtlang check examples/gaussian.pydt
  pydtlang check examples/binary.pydt --data Y=examples/data/animals.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := load(args[0], &b, len(b.data) == 0, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := l.Graph.Summary(cmd.OutOrStdout()); err != nil {
				return err
			}
			if len(b.data) == 0 {
				if standardize {
					return &exitError{code: 2, err: fmt.Errorf("check: --standardize needs the data (--data NAME=FILE)")}
				}
				return nil
			}
			m, err := inference.NewModel(l.Graph)
			if err != nil {
				if standardize {
					return &exitError{code: 1, err: err}
				}
				// A model that run cannot fit has no run warnings,
				// but the user should hear it from check, not run.
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: warning: run cannot fit this model: %v\n", err)
				return nil
			}
			if _, err := inference.NewSchedule(m); err != nil {
				// run (MCMC) refuses it before its first sweep.
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: warning: run (MCMC) would stop before its first sweep: %v\n", err)
			}
			if standardize {
				sc, err := m.Standardize()
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "\n--standardize divides out, per column of %s:\n  column\tmean\tsd\n", sc.Var)
				for j := range sc.Mean {
					fmt.Fprintf(w, "  %d\t%.6g\t%.6g\n", j+1, sc.Mean[j], sc.SD[j])
				}
			}
			for _, w := range m.Warnings(graph.NewEnv(l.Graph)) {
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: warning: %s\n", w)
			}
			return nil
		},
	}
	b.register(cmd, true)
	cmd.Flags().BoolVar(&standardize, "standardize", false, "print the column means and standard deviations that run --standardize divides out")
	return cmd
}
