package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func newScore() *cobra.Command {
	var (
		b        bindings
		treePath string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "score MODEL --data NAME=FILE --tree FILE.nwk --set NAME=VALUE...",
		Short: "Print the log density of a tree and values given data (like CmdStan's log_prob)",
		Long: `score evaluates the model's log joint density at a given tree and given values
of the scalars, and its parts:

  log_tree   log density of the tree structure and divergence times under the PYDT
  log_lik    log density of the data with every internal location integrated out
             (belief propagation; missing values are marginalised)
  log_hyper  log prior density of the stochastic scalars at their --set values
  log_joint  the sum of the three

Every stochastic scalar needs a value from --set. The tree's leaves must match
the data's rows: by row label when the data file has a label column, else by
1-based row number. A file of several trees (one per line) gives one line of
scores per tree. --json prints JSON instead of "name value" lines.`,
		Example: `  pydtlang score examples/gaussian.pydt --data X=examples/data/synthetic.csv \
      --tree examples/data/synthetic-tree.nwk --set alpha=1,beta=0.2,c=1,prec=2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if treePath == "" {
				return &exitError{code: 2, err: fmt.Errorf("score: --tree FILE is required")}
			}
			l, err := load(args[0], &b, false, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			m, err := inference.NewModel(l.g)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			var missing []string
			for _, v := range m.Scalars() {
				if v.Value == nil {
					missing = append(missing, v.Name)
				}
			}
			if len(missing) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("score needs a value for every stochastic scalar: --set %s=VALUE", strings.Join(missing, "=VALUE,"))}
			}
			f, err := os.Open(treePath)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer f.Close()
			trees, err := pydt.ReadNewickTrees(f, m.Labels)
			if err != nil {
				return &exitError{code: 1, err: fmt.Errorf("%s: %w", treePath, err)}
			}
			if len(trees) == 0 {
				return &exitError{code: 1, err: fmt.Errorf("%s: no trees", treePath)}
			}
			var results []inference.Scores
			for k, tr := range trees {
				if err := matchLeaves(tr, m, treePath, k); err != nil {
					return &exitError{code: 1, err: err}
				}
				st := m.NewState()
				st.Tree = tr
				s, err := m.Score(st)
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("%s tree %d: %w", treePath, k+1, err)}
				}
				results = append(results, s)
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
	cmd.Flags().StringVar(&treePath, "tree", "", "Newick file with one tree per line (diffusion-time branch lengths)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// matchLeaves checks that a tree's leaves are the data's rows.
func matchLeaves(tr *pydt.Tree, m *inference.Model, path string, k int) error {
	if tr.NumLeaves() != m.N {
		return fmt.Errorf("%s tree %d has %d leaves but the data %s has %d rows", path, k+1, tr.NumLeaves(), m.Leaves.Name, m.N)
	}
	if m.Labels == nil && tr.Labels != nil {
		return fmt.Errorf("%s tree %d names its leaves (e.g. %q) but the data has no row labels; name the leaves 1..%d by row number", path, k+1, tr.Labels[0], m.N)
	}
	return nil
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
