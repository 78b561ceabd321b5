package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/plot"
)

func newPlot() *cobra.Command {
	var (
		out, format, labelsFile, tree, variable, names, axis string
		dpi                                                  int
		prior                                                []string
	)
	cmd := &cobra.Command{
		Use:   "plot RUNDIR | plot --prior DIR",
		Short: "Draw a run's tree, traces and co-clustering, or draws from the prior, as SVG or PNG",
		Long: `plot draws the pictures of the run in RUNDIR, one file each in --out
(default RUNDIR/plots), in --format svg (default) or png:

  dendrogram   the summary tree (--tree: summary, mea, consensus or map),
               divergence time across from t = 0 to the leaves at t = 1, one
               row per leaf; a multifurcation is one vertical bar spanning
               all its children. Branch points are discs shaded by their
               clade's credibility (the tree file's branch-point labels), white
               for 0 to black for 1. The picture is as tall as N needs for
               every label to be readable (6-point labels from N = 150: about
               a metre at N = 500, best read as SVG). --axis sets the time
               axis: t (linear), s (s = -log(1 - t), which spreads the
               times near 1: 0.9, 0.99, 0.999, ... equally apart, ticks
               labelled by t, the leaves at the axis's right end), or auto
               (the default): s when the median branch point has t > 0.9
               (more than half of them in the last tenth of the t axis;
               with an even count, the middle two's mean 1 - t below 0.1),
               t otherwise
  tree-data    for data with two columns, the data with the tree drawn over
               them (the paper's Figure 1): runs do not record the branch
               points' locations, so they are their posterior mean locations
               given the tree, with every latent scalar at its posterior mean
               (belief propagation); with a Normal noise model the leaves
               too are at their posterior mean latent locations, each joined
               to its data point by a dotted line. Needs the model and data
               files named in RUNDIR/run.json, unchanged
  trace        log_joint, log_lik and every latent scalar of trace.csv
               against iteration, one colour per chain
  coclust      coclust.csv (posterior mean LCA time of every pair of rows) as
               a heat map, rows and columns in the dendrogram's leaf order
               (above 2000 rows, each pixel the mean of a block of cells)

For a run of a model with several PYDTs the pictures are of the first PYDT's
tree and data, and a note says so.

For a run of --method em: dendrogram (map.nwk, the best tree by its bound),
tree-data (at the EM estimates of the hyperparameters) and bound (the best
bound after each search round).

--labels-file F colours the leaves (and the data points, and a strip along
the heat map) by class: F is CSV with rows label,class, labels as in the
data's first column; leaves not in F are grey.

--names FILE names the rows of a run made without row names (the leaves,
the data points, the heat map's rows), one name a line in the order of the
data, as run --labels takes them (animal_names.txt for animals_33x102.txt);
FILE must have one name per row.

plot --prior DIR draws the output of "pydtlang sample" for 2-D data (the
paper's Figure 4): one panel per draw, titled with its parameter values,
points coloured by the subtree below the root they belong to. --prior may
be repeated, to set draws made with different --set values side by side;
the picture goes to --out (default: the first DIR's plots). --var names the
data variable when a DIR holds several.

Examples:
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --iters 2000 --out fit
  pydtlang plot fit                              # fit/plots/dendrogram.svg, ...
  pydtlang plot fit --format png --out pics --labels-file classes.csv
  pydtlang plot fit --tree mea
  pydtlang plot fit --axis s                     # the times near t = 1 spread out
  pydtlang plot animals --names ../shared/data/animals/animal_names.txt
  pydtlang sample examples/gaussian.pydt --set N=500,D=2,alpha=1,beta=0,c=1,prec=1 --draws 4 --seed 1 --out draws
  pydtlang plot --prior draws --format png
  pydtlang sample examples/gaussian.pydt --set N=1000,D=2,alpha=0,beta=0,c=1,prec=1 --draws 1 --out ddt
  pydtlang sample examples/gaussian.pydt --set N=1000,D=2,alpha=1.5,beta=0,c=3,prec=1 --draws 1 --out pydt
  pydtlang plot --prior ddt --prior pydt --out fig4`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(prior) > 0 {
				if len(args) > 0 {
					return &exitError{code: 2, err: errors.New("plot --prior DIR takes no RUNDIR")}
				}
				return nil
			}
			if len(args) != 1 {
				return &exitError{code: 2, err: errors.New("plot: give a run directory (or --prior DIR)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "svg" && format != "png" {
				return &exitError{code: 2, err: fmt.Errorf("--format %q: want svg or png", format)}
			}
			if dpi < 10 || dpi > 1200 {
				return &exitError{code: 2, err: fmt.Errorf("--dpi %d: want 10 to 1200", dpi)}
			}
			ax, err := plot.ParseAxis(axis)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--axis: %w", err)}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			var figs []plot.Named
			var notes []string
			if len(prior) > 0 {
				if labelsFile != "" || names != "" || cmd.Flags().Changed("tree") || cmd.Flags().Changed("axis") {
					return &exitError{code: 2, err: errors.New("plot --prior takes neither --labels-file nor --tree (nor --names, nor --axis)")}
				}
				var draws []plot.PriorDraw
				for _, dir := range prior {
					d, err := plot.ReadPrior(dir, variable)
					if err != nil {
						return &exitError{code: 1, err: err}
					}
					if len(prior) > 1 {
						for i := range d {
							d[i].Title = filepath.Base(filepath.Clean(dir)) + ", " + d[i].Title
						}
					}
					draws = append(draws, d...)
				}
				f, err := plot.PriorScatter(draws, plot.PriorOptions{Title: "Draws from the prior"})
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				figs = []plot.Named{{Name: "prior", Figure: f}}
				if out == "" {
					out = filepath.Join(prior[0], "plots")
				}
			} else {
				if variable != "" {
					return &exitError{code: 2, err: errors.New("--var is for plot --prior")}
				}
				dir := args[0]
				if _, err := os.Stat(filepath.Join(dir, inference.RunFile)); err != nil {
					return &exitError{code: 1, err: fmt.Errorf("%s is not a run directory: %w", dir, err)}
				}
				opt := plot.RunOptions{Tree: tree, Axis: ax}
				if labelsFile != "" {
					cl, err := plot.ReadClassesFile(labelsFile)
					if err != nil {
						return &exitError{code: 1, err: err}
					}
					opt.Classes = cl
				}
				if names != "" {
					var err error
					if opt.RowNames, err = dataset.ReadLabels(names, -1); err != nil {
						return &exitError{code: 1, err: fmt.Errorf("plot: --names: %w", err)}
					}
				}
				m, err := runModel(dir)
				if err != nil {
					notes = append(notes, fmt.Sprintf("no tree-over-data picture: %v", err))
				}
				opt.Model = m
				var more []string
				figs, more, err = plot.RunFigures(dir, opt)
				if err != nil && names != "" {
					err = fmt.Errorf("%w (--names %s)", err, names)
				}
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				notes = append(notes, more...)
				if out == "" {
					out = filepath.Join(dir, "plots")
				}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return &exitError{code: 1, err: err}
			}
			for _, n := range figs {
				n.Figure.DPI = dpi
				path := filepath.Join(out, n.Name+"."+format)
				if err := n.Figure.Save(path); err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintln(stdout, path)
			}
			for _, n := range notes {
				fmt.Fprintf(stderr, "pydtlang: note: %s\n", n)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "directory for the pictures (default RUNDIR/plots, or DIR/plots with --prior)")
	f.StringVar(&format, "format", "svg", "picture format: svg or png")
	f.IntVar(&dpi, "dpi", plot.PNGDPI, "resolution of PNG pictures, in dots per inch")
	f.StringVar(&labelsFile, "labels-file", "", "CSV of label,class rows: colour the leaves by class")
	f.StringVar(&names, "names", "", "name the rows of a run made without row names: one name a line, in the data's order (as run --labels)")
	f.StringVar(&tree, "tree", "", "the tree to draw: summary (default; mea when the run has no summary.nwk), mea, consensus or map")
	f.StringVar(&axis, "axis", "auto", "the dendrogram's time axis: t (linear), s (-log(1-t), spreads the times near 1) or auto (s when the median branch point has t > 0.9)")
	f.StringArrayVar(&prior, "prior", nil, "draw the 2-D draws in DIR, written by pydtlang sample, instead of a run (repeatable: the draws of every DIR, one panel each)")
	f.StringVar(&variable, "var", "", "with --prior: the data variable to draw, when DIR holds several")
	return cmd
}

// runModel rebuilds the model of the run in dir, with its data bound as
// the run had them (--set, --draw, --standardize), from run.json, and
// checks that the model and data files have not changed since.
func runModel(dir string) (*inference.Model, error) {
	wrap := func(err error) error { return fmt.Errorf("%s: %w", dir, err) }
	m, err := modelOfRun(dir, io.Discard, wrap)
	if err != nil {
		if errors.Is(err, failed) {
			return nil, fmt.Errorf("the model named in %s does not compile with its data", filepath.Join(dir, inference.RunFile))
		}
		return nil, err
	}
	if err := inference.StandardizeLikeRun(m, dir); err != nil {
		return nil, wrap(err)
	}
	return m, nil
}
