package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/cluster"
	"github.com/pydtlang/pydtlang/inference/predict"
)

func fmtProb(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func newCut() *cobra.Command {
	var (
		opt       inference.CutOptions
		loss, out string
		testPath  string
		names     string
		place     predict.RunOptions
	)
	cmd := &cobra.Command{
		Use:   "cut RUNDIR (--k K | --time T) [--tree FILE] [--tree-of V] [--posterior [--loss binder|ari]] [--names FILE] [--out FILE]",
		Short: "Flat cluster labels from a finished run's trees",
		Long: `cut writes flat cluster labels, a CSV of "row,cluster" (clusters numbered 1, 2,
... in order of their first row), made from the run in RUNDIR.

By default it cuts the summary tree, RUNDIR/summary.nwk (--tree mea.nwk,
consensus.nwk or map.nwk cuts another), or for a run of --method em its best
tree, RUNDIR/map.nwk: --time T cuts it at time T in [0, 1]
(a branch point at or before T is split), and --k K cuts it at the time of
the earliest branch point that gives at least K clusters. Where a
multifurcation, or branch points at equal times, make exactly K impossible,
the cut is the one with the fewest clusters above K, and a note on stderr
says so.

--posterior makes the partition from the posterior as a whole: every kept
tree of every chain is cut the same way (at K, or at T), and among those
cuts and the summary tree's, the partition chosen is the one that minimises
the posterior expected Binder loss (the expected fraction of pairs of rows
on which it and a sampled cut disagree, together in one and apart in the
other; equivalently it maximises the expected Rand index), or with
--loss ari the one that maximises the posterior expected adjusted Rand index
against the sampled cuts. It reports both scores, and those of the summary
tree's cut, on stderr. Binder's loss costs O(N²) per candidate, the ARI O(N)
per pair of a candidate and a distinct sampled cut.

Rows are in the order of the data (read from RUNDIR/coclust.csv), or in the
tree file's order when the run wrote no coclust.csv.

--names FILE names the rows of a run made without row names, one name a line
in the order of the data (as run --labels takes them: animal_names.txt for
animals_33x102.txt); FILE must have one name per row. A run made with
--labels, or on a data file with a label column, already names its rows.

In a run of a model with several PYDTs, cut cuts the first PYDT's trees
(and says so on stderr); --tree-of V cuts those of the PYDT of variable V,
whose files carry V before the extension (summary-V.nwk, coclust-V.csv,
trees-V-K.nwk; --tree mea.nwk then reads mea-V.nwk). --test places rows of
the first PYDT's data only.

--test FILE places held-out rows (a data file with the training data's
columns; missing entries allowed; 0/1 for a Probit model) in the clusters of
the tree's cut, by their posterior predictive probability (paper, Section
6.3) averaged over up to --trees kept trees of all chains, each with its own
iteration's hyperparameters, the trees weighted by the row's predictive
density under each. In a kept tree a new point follows the generative
process: if it joins the tree at or before the cut time it is a new cluster
of its own (cluster 0); otherwise its cluster mates are the training rows of
the piece of that tree, cut at the same time, that it joins, and each of the
cut's clusters gets the fraction of those mates it holds (on the summary
tree itself, exactly one cluster). For a Probit model each kept tree's
auxiliary variables are refreshed by a short Gibbs run seeded by --seed, as
predict does. It then writes, for the test rows only,
"row,cluster,probability,p_new,p_1,...,p_K": the most probable cluster, its
probability, and every cluster's. The model and data files recorded in
run.json must be unchanged; not with --posterior.`,
		Example: `  pydtlang run examples/binary.pydt --data Y=examples/data/animals.csv --out fit
  pydtlang cut fit --k 5
  pydtlang cut fit --k 5 --posterior --out clusters.csv
  pydtlang cut fit --time 0.5 --tree consensus.nwk
  pydtlang cut fit --k 4 --test held-out.csv
  pydtlang cut animals --k 5 --names ../shared/data/animals/animal_names.txt
  pydtlang cut two --k 3 --tree-of Z   # a run of examples/two-trees.pydt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kSet, tSet := cmd.Flags().Changed("k"), cmd.Flags().Changed("time")
			if kSet == tSet {
				return &exitError{code: 2, err: errors.New("cut: give exactly one of --k K and --time T")}
			}
			if kSet && opt.K < 1 {
				return &exitError{code: 2, err: fmt.Errorf("cut: --k %d: need at least one cluster", opt.K)}
			}
			if tSet && !(opt.Time >= 0 && opt.Time <= 1) {
				return &exitError{code: 2, err: fmt.Errorf("cut: --time %v is not in [0, 1]", opt.Time)}
			}
			var err error
			if opt.Loss, err = cluster.ParseLoss(loss); err != nil {
				return &exitError{code: 2, err: fmt.Errorf("cut: --loss: %w", err)}
			}
			var m *inference.Model
			if testPath != "" {
				if opt.Posterior {
					return &exitError{code: 2, err: errors.New("cut: --test places rows in the summary tree's cut, not with --posterior")}
				}
				if opt.Of != "" {
					return &exitError{code: 2, err: errors.New("cut: --test places rows of the first PYDT's data only, not with --tree-of")}
				}
				if m, err = loadRun(cmd, args[0]); err != nil {
					return err
				}
				opt.Labels = m.Labels
				if opt.Labels == nil {
					opt.Labels = make([]string, m.N)
					for i := range opt.Labels {
						opt.Labels[i] = strconv.Itoa(i + 1)
					}
				}
			}
			if names != "" {
				if opt.RowNames, err = dataset.ReadLabels(names, -1); err != nil {
					return &exitError{code: 1, err: fmt.Errorf("cut: --names: %w", err)}
				}
			}
			res, err := inference.CutRun(args[0], opt)
			if err != nil && names != "" {
				err = fmt.Errorf("%w (--names %s)", err, names)
			}
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			stderr := cmd.ErrOrStderr()
			if len(res.PYDTs) > 1 && opt.Of == "" {
				fmt.Fprintf(stderr, "note: the run has the PYDTs %s; this cuts %s's trees (--tree-of V cuts another's)\n", strings.Join(res.PYDTs, ", "), res.Of)
			}
			part := res.Partition
			if !res.Exact {
				fmt.Fprintf(stderr, "note: %s has no cut with exactly %d clusters (a multifurcation or branch points at one time); this cut, at t = %.6g, has %d\n",
					res.Tree, opt.K, res.CutTime, part.NumClusters())
			}
			if res.Posterior != nil {
				p := res.Posterior
				fmt.Fprintf(stderr, "posterior: %d clusters chosen among %d candidate partitions (the cuts of %d kept trees and of %s) by %s loss: expected Binder loss %.4g per pair, expected ARI %.4g; the %s cut (%d clusters): %.4g, %.4g\n",
					p.Partition.NumClusters(), p.Candidates, res.Trees, res.Tree, opt.Loss, p.ExpectedBinder, p.ExpectedARI,
					res.Tree, part.NumClusters(), res.SummaryBinder, res.SummaryARI)
				part = p.Partition
			}
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			if m != nil {
				test, err := readRows(testPath, m.D)
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("cut: --test: %w", err)}
				}
				probs, err := predict.PlaceRows(m, args[0], part, res.At, rowsOf(test), place)
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("cut: %w", err)}
				}
				head := []string{"row", "cluster", "probability", "p_new"}
				for c := 1; c <= part.NumClusters(); c++ {
					head = append(head, "p_"+strconv.Itoa(c))
				}
				_ = w.Write(head)
				for i, p := range probs {
					best := 0
					for c := range p {
						if p[c] > p[best] {
							best = c
						}
					}
					rec := []string{rowName(test, i), strconv.Itoa(best), fmtProb(p[best])}
					for _, x := range p {
						rec = append(rec, fmtProb(x))
					}
					_ = w.Write(rec)
				}
			} else {
				_ = w.Write([]string{"row", "cluster"})
				for i, name := range res.Rows {
					_ = w.Write([]string{name, strconv.Itoa(part[i])})
				}
			}
			w.Flush()
			if err := w.Error(); err != nil {
				return err
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(b.Bytes())
				return err
			}
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("cut: %w", err)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opt.K, "k", 0, "number of clusters (the fewest at least K where exactly K is impossible)")
	f.Float64Var(&opt.Time, "time", 0, "cut at this time in [0, 1]")
	f.StringVar(&opt.Tree, "tree", "", "the tree file in RUNDIR to cut (default: summary.nwk; map.nwk, the best tree, for an EM run)")
	f.StringVar(&opt.Of, "tree-of", "", "in a run with several PYDTs, cut the trees of the PYDT of this variable (default: the first)")
	f.BoolVar(&opt.Posterior, "posterior", false, "choose the partition from the cuts of all kept trees (Bayes decision under --loss)")
	f.StringVar(&loss, "loss", "binder", "posterior criterion: binder (least expected Binder loss) or ari (greatest expected adjusted Rand index)")
	f.StringVar(&testPath, "test", "", "place the held-out rows of this data file in the cut's clusters by predictive probability")
	f.IntVar(&place.Trees, "trees", predict.DefaultTrees, "with --test: kept trees to average over, evenly spaced (-1: all)")
	f.Uint64Var(&place.Seed, "seed", 1, "with --test on a Probit model: seed of the auxiliary refresh")
	f.StringVar(&out, "out", "", "write the CSV to this file instead of stdout")
	f.StringVar(&names, "names", "", "name the rows of a run made without row names: one name a line, in the data's order (as run --labels)")
	return cmd
}
