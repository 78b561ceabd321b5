package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/inference"
)

func newSample() *cobra.Command {
	var (
		b     bindings
		draws int
		seed  uint64
		out   string
	)
	cmd := &cobra.Command{
		Use:   "sample MODEL --set NAME=VALUE... --draws K --seed S --out DIR",
		Short: "Draw trees and data from the prior by forward simulation",
		Long: `sample draws K independent samples from the model's prior: every scalar from
its distribution, the tree and its locations by the PYDT's generative process
(point by point, as in Knowles & Ghahramani 2011, Section 2), and every data
variable from its likelihood. Dimensions that no data fixes come from --set,
e.g. --set N=3,D=1; --set also clamps scalars, e.g. --set alpha=1,beta=0.2.

It writes to DIR:
  trees.nwk     one Newick tree per draw, branch lengths in diffusion time
                (leaves at cumulative length 1), leaves named by row number;
                in a model with several PYDTs, of the first, and trees-V.nwk
                of the PYDT of each further variable V
  NAME.csv      each data variable: header draw,row,NAME.1,...,NAME.D; score,
                check and run read draw K of it with --draw K
  params.csv    the drawn scalars and every element of the latent arrays:
                header draw,NAME,...,NAME[1],...; score --values reads it

The same --seed gives the same files. Sampling again into a DIR of an earlier
sample rewrites its files; a DIR holding a run (run.json), or a file of one of
the names above that sample did not write, is refused. Like run, sample holds
a lock on DIR/.lock while it writes, and a second writer is refused.`,
		Example: `  pydtlang sample examples/gaussian.pydt --set N=3,D=1 --draws 1000 --seed 7 --out prior
  pydtlang sample examples/gaussian.pydt --set N=50,D=2,alpha=1,beta=0.2,c=1,prec=2 --out one`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: 2, err: fmt.Errorf("sample: --out DIR is required")}
			}
			if draws < 1 {
				return &exitError{code: 2, err: fmt.Errorf("sample: --draws must be at least 1, got %d", draws)}
			}
			l, err := load(args[0], &b, true, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			for _, d := range l.Graph.Dims {
				if d.Value == nil {
					return &exitError{code: 1, err: fmt.Errorf("sample: dimension %s is not bound: --set %s=VALUE", d.Name, d.Name)}
				}
			}
			m, err := inference.NewModel(l.Graph)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if err := inference.Sample(m, draws, seed, out); err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	b.register(cmd, false)
	cmd.Flags().IntVar(&draws, "draws", 1, "number of independent draws K")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed; the same seed gives the same draws")
	cmd.Flags().StringVar(&out, "out", "", "output directory (created if needed)")
	return cmd
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
