package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
)

func newScore() *cobra.Command {
	var (
		b        bindings
		treePath string
		treesOf  []string
		values   string
		asJSON   bool
		stdz     bool
	)
	cmd := &cobra.Command{
		Use:   "score MODEL --data NAME=FILE --tree FILE.nwk [--tree-of V=FILE.nwk]... [--draw K] (--set NAME=VALUE... | --values FILE.csv)",
		Short: "Print the log density of a tree and values given data (like CmdStan's log_prob)",
		Long: `score evaluates the model's log joint density at a given tree and given values
of the scalars, and its parts:

  log_tree   log density of the tree structure and divergence times under the PYDT
  log_lik    log density of the data with every internal location integrated out
             (belief propagation; missing values are marginalised)
  log_hyper  log prior density of the stochastic scalars at their --set values
             (a value outside its distribution's support, such as alpha=0
             for Neal's DDT, is allowed when the factors that read it accept
             it; its prior is then left out, a note on stderr says which
             terms log_hyper sums, and --json lists the left-out terms as
             "omitted")
  log_joint  the sum of the three

Every stochastic scalar needs a value, from --set or --values, and every
element of a latent array (such as prec in a model with prec : pos[D] and
X ~ PYDT(alpha, beta, c, 1 / prec)) one from --values. --values FILE reads a
CSV file whose header names the values, NAME for a scalar and NAME[i] or
"NAME[i,j]" for an element of an array, and whose line holds them, e.g.

  alpha,beta,c,prec[1],prec[2]
  1,0.2,1,2,0.5

This is the params.csv that sample writes, one line per draw after a first
column draw; --draw K takes the line of draw K. A file without a draw column
holds a single line. An element outside the array's shape, a missing
element, a value outside its support, or a scalar given by both --set and
--values is an error. The tree's leaves must match
the data's rows: by row label when the data file has a label column, else by
1-based row number.

A hidden Markov model whose state means are the leaves (examples/hmm-gaussian.pydt:
y[t, d] ~ Normal(mu[z[t], d], sd)) is scored at the given states z[t] (from
--values, as sample's params.csv holds them): the tree's leaves are the K
states, log_lik is the density of the data given the tree and the states
with the state means integrated out, and log_hyper includes the states'
Categorical factors and the Dirichlet rows, as run's log_joint. A state
outside 1..K is an error. A file of several trees (one per line) gives one line of
scores per tree; it may be at most 1 GiB, and each tree at most 16 MiB. --json prints JSON instead of "name value" lines; JSON has
no infinities, so a log density of -Inf (a tree of zero probability, such as
a multifurcation when alpha = -2 beta) is written there as the string "-Inf".

The output of sample scores directly: its NAME.csv holds every draw (header
draw,row,...), its params.csv the drawn values, and --draw K takes draw K of
them and the K-th tree (line) of the --tree file, e.g. trees.nwk. A file of
draws that holds a single draw needs no --draw.

A model with several PYDTs needs a tree of each: --tree FILE gives the first
PYDT's and --tree-of V=FILE (repeatable) each further PYDT V's, e.g. the
trees.nwk and trees-Z.nwk that sample writes, or a run's summary.nwk and
summary-Z.nwk. The n-th trees of the files are scored together (the files
must hold as many trees), and log_tree and log_lik sum over the trees.

--standardize scores the data with each column shifted and scaled to mean 0
and sd 1, as run --standardize fits them: use it to score the trees and
values of such a run.

Models with a Probit likelihood have no closed-form marginal likelihood given
the tree: for them log_lik is an approximation, expectation propagation's
estimate (Minka 2001; docs/em.md), a note on stderr says so, and --json
marks it "log_lik_method": "EP". On small trees it is within about 0.01 of
the exact value.`,
		Example: `  pydtlang score examples/gaussian.pydt --data X=examples/data/synthetic.csv \
      --tree examples/data/synthetic-tree.nwk --set alpha=1,beta=0.2,c=1,prec=2
  pydtlang sample examples/gaussian.pydt --set N=20,D=2 --draws 3 --seed 1 --out draws
  pydtlang score examples/gaussian.pydt --data X=draws/X.csv --tree draws/trees.nwk --draw 2 \
      --set alpha=1,beta=0.2,c=1,prec=2
  pydtlang sample examples/gaussian-perdim.pydt --set N=20,D=3 --draws 3 --seed 1 --out perdim
  pydtlang score examples/gaussian-perdim.pydt --data X=perdim/X.csv --tree perdim/trees.nwk --draw 2 \
      --values perdim/params.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if treePath == "" {
				return &exitError{code: 2, err: fmt.Errorf("score: --tree FILE is required")}
			}
			var vals *inference.Values
			if values != "" {
				var err error
				if vals, err = inference.ReadValues(values, b.draw); err == nil {
					b.set, err = vals.Sets(b.set)
				}
				if err != nil {
					return loadError(err, cmd.ErrOrStderr())
				}
			}
			_, m, err := loadModel(args[0], &b, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			paths, err := scoreTreePaths(m, treePath, treesOf)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			var epTypes []string
			for _, tb := range m.Trees {
				if err := tb.Scorable(); err != nil {
					if tb.Tilted() == nil {
						return &exitError{code: 1, err: fmt.Errorf("score does not support %s: %w (fit it with run)", args[0], err)}
					}
					epTypes = append(epTypes, tb.Leaf.TypeName())
				}
			}
			if stdz {
				if _, err := m.Standardize(); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			var missing []string
			for _, v := range m.Scalars() {
				if v.Value == nil {
					missing = append(missing, v.Name)
				}
			}
			if len(missing) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("score needs a value for every stochastic scalar: --set %s=VALUE (or a --values file naming them)", strings.Join(missing, "=VALUE,"))}
			}
			var env *graph.Env
			if vs := m.LatentArrays(); len(vs) > 0 {
				if vals == nil {
					return &exitError{code: 1, err: fmt.Errorf("score needs a value for every element of the latent array %s (shape %s): give them with --values FILE.csv, a header naming %s[1], ... and a line of values (as sample writes params.csv)",
						vs[0].Name, vs[0].Shape(), vs[0].Name)}
				}
				env = m.NewState().Env
				if err := m.SetArrays(env, vals); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			results, err := m.ScoreTreeFilesIn(paths, b.draw, env)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if len(epTypes) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: note: log_lik is an approximation: the %s likelihood has no closed-form marginal likelihood given the tree, "+
					"and log_lik (so log_joint) is expectation propagation's estimate of it (not a bound)\n", strings.Join(epTypes, " and "))
			}
			if note := m.OmittedNote(); note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: note: %s; log_hyper sums %s\n", note, strings.Join(results[0].HyperTerms, "; "))
			}
			w := cmd.OutOrStdout()
			switch {
			case asJSON && len(results) == 1:
				return writeJSON(w, results[0])
			case asJSON:
				return writeJSON(w, results)
			case len(results) == 1:
				s := results[0]
				fmt.Fprintf(w, "log_tree %s\nlog_lik %s\nlog_hyper %s\nlog_joint %s\n",
					formatFloat(s.LogTree), formatFloat(s.LogLik), formatFloat(s.LogHyper), formatFloat(s.LogJoint))
			default:
				fmt.Fprintln(w, "tree log_tree log_lik log_hyper log_joint")
				for k, s := range results {
					fmt.Fprintf(w, "%d %s %s %s %s\n", k+1, formatFloat(s.LogTree), formatFloat(s.LogLik), formatFloat(s.LogHyper), formatFloat(s.LogJoint))
				}
			}
			return nil
		},
	}
	b.register(cmd, true)
	cmd.Flags().Lookup("draw").Usage = "use draw K of a data file of draws (header draw,row,..., as sample writes) and the K-th tree of --tree"
	cmd.Flags().StringVar(&treePath, "tree", "", "Newick file with one tree per line (diffusion-time branch lengths)")
	cmd.Flags().StringArrayVar(&treesOf, "tree-of", nil, "V=FILE: in a model with several PYDTs, the Newick file of the trees of the PYDT of variable V (one for each PYDT after the first; repeatable)")
	cmd.Flags().StringVar(&values, "values", "", "CSV file of values: a header naming scalars and array elements (alpha, prec[1], ...) and a line of values; sample's params.csv, whose line of draw K --draw K takes")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&stdz, "standardize", false, "score the data with every column shifted and scaled to mean 0 and sd 1, as run --standardize fits them")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// scoreTreePaths returns the tree file of each PYDT of m, in the order of
// m.Trees: first, the --tree file, then the --tree-of V=FILE of each
// further PYDT V.
func scoreTreePaths(m *inference.Model, first string, of []string) ([]string, error) {
	byVar := map[string]string{}
	for _, a := range of {
		v, file, ok := strings.Cut(a, "=")
		if !ok || v == "" || file == "" {
			return nil, fmt.Errorf("score: --tree-of %q: want V=FILE", a)
		}
		if _, dup := byVar[v]; dup {
			return nil, fmt.Errorf("score: --tree-of %s is given twice", v)
		}
		byVar[v] = file
	}
	paths := []string{first}
	var names []string
	for _, b := range m.Trees {
		names = append(names, b.Leaves.Name)
	}
	for v := range byVar {
		if !slices.Contains(names, v) {
			return nil, fmt.Errorf("score: --tree-of %s: %s is not a PYDT of the model (its PYDTs: %s)", v, v, strings.Join(names, ", "))
		}
	}
	for k, b := range m.Trees {
		if k == 0 {
			if _, ok := byVar[b.Leaves.Name]; ok {
				return nil, fmt.Errorf("score: %s is the first PYDT: its trees are --tree's", b.Leaves.Name)
			}
			continue
		}
		file, ok := byVar[b.Leaves.Name]
		if !ok {
			return nil, fmt.Errorf("score: the model has the PYDTs %s: give the trees of %s with --tree-of %s=FILE", strings.Join(names, ", "), b.Leaves.Name, b.Leaves.Name)
		}
		paths = append(paths, file)
	}
	return paths, nil
}
