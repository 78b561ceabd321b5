// Command pydtlang compiles, simulates, scores and fits Pitman-Yor
// diffusion tree models written in the pydtlang modelling language.
//
// Run "pydtlang help" for the subcommands and "pydtlang CMD --help" for the
// flags of each.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pydtlang/pydtlang/lang"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries a process exit status through cobra.
type exitError struct {
	code int
	err  error
	// quiet is set when the command has already told the user.
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failed is the error for a command that has already printed its
// diagnostics: the process exits with status 1 and prints nothing more.
var failed = &exitError{code: 1, err: errors.New("failed"), quiet: true}

// run executes the command line and returns the process exit status. It is
// the entry point of the end-to-end tests.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.quiet {
			fmt.Fprintf(stderr, "pydtlang: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "pydtlang: %v\n", err)
	return 2
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "pydtlang",
		Short: "Bayesian hierarchical clustering with the Pitman-Yor diffusion tree",
		Long: `pydtlang compiles models written in the pydtlang language (see spec.md), draws
from their prior, scores trees against data, and fits them by MCMC or by
EM (run --method em).

A first session, from the root of the source tree: check a model, draw three
data sets and their trees from its prior, score the second tree against the
second data set, then fit the model to a real data set.
  pydtlang check examples/gaussian.pydt
  pydtlang sample examples/gaussian.pydt --set N=20,D=2 --draws 3 --seed 1 --out draws
  pydtlang score examples/gaussian.pydt --data X=draws/X.csv --tree draws/trees.nwk --draw 2 \
      --set alpha=1,beta=0.2,c=1,prec=2
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --iters 400 --out fit`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newCheck(), newFmt(), newSample(), newScore(), newRun(), newPredict(), newEvaluate(), newCut(), newSummary())
	root.AddCommand(newPlot())
	return root
}

// flagError is every command's error for flags it cannot parse: for an
// unknown flag close to one of the command's own (--iter, --seeed) it
// names that flag, and it points at the command's --help.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if s := lang.Suggest(name, names); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return fmt.Errorf("%s; see %s --help", msg, cmd.CommandPath())
}
