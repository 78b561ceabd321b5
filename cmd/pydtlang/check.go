package main

import (
	"github.com/spf13/cobra"
)

func newCheck() *cobra.Command {
	var b bindings
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
status 1.`,
		Example: `  pydtlang check examples/gaussian.pydt
  pydtlang check examples/binary.pydt --data Y=examples/data/animals.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := load(args[0], &b, len(b.data) == 0, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return l.g.Summary(cmd.OutOrStdout())
		},
	}
	b.register(cmd, true)
	return cmd
}
