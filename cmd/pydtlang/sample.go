package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
)

// seedStream is the second word of every PCG seed, so that --seed S names
// one reproducible stream.
const seedStream = 0x9e3779b97f4a7c15

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
                (leaves at cumulative length 1), leaves named by row number
  NAME.csv      each data variable: header draw,row,NAME.1,...,NAME.D; score,
                check and run read draw K of it with --draw K
  params.csv    the drawn scalars: header draw,NAME,...

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
			return writeSamples(m, draws, seed, out)
		},
	}
	b.register(cmd, false)
	cmd.Flags().IntVar(&draws, "draws", 1, "number of independent draws K")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed; the same seed gives the same draws")
	cmd.Flags().StringVar(&out, "out", "", "output directory (created if needed)")
	return cmd
}

// csvFile is a buffered output file.
type csvFile struct {
	f *os.File
	w *bufio.Writer
}

func createCSV(path, header string) (*csvFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	c := &csvFile{f: f, w: bufio.NewWriter(f)}
	c.w.WriteString(header + "\n")
	return c, nil
}

func (c *csvFile) close() error {
	if err := c.w.Flush(); err != nil {
		c.f.Close()
		return err
	}
	return c.f.Close()
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func writeSamples(m *inference.Model, draws int, seed uint64, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return &exitError{code: 1, err: err}
	}
	release, err := inference.LockDir(out)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("sample: %w", err)}
	}
	defer release()
	if err := checkSampleDir(out, m); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("sample: %w", err)}
	}
	rng := rand.New(rand.NewPCG(seed, seedStream))
	trees, err := os.Create(filepath.Join(out, "trees.nwk"))
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	defer trees.Close()
	tw := bufio.NewWriter(trees)

	var dataVars []*graph.Var
	files := map[*graph.Var]*csvFile{}
	for _, v := range m.G.Vars {
		if !v.IsData {
			continue
		}
		dataVars = append(dataVars, v)
		header := "draw," + v.Name
		switch len(v.Dims) {
		case 1:
			header = "draw,row," + v.Name
		case 2:
			cols := make([]string, v.Dims[1])
			for j := range cols {
				cols[j] = fmt.Sprintf("%s.%d", v.Name, j+1)
			}
			header = "draw,row," + strings.Join(cols, ",")
		}
		f, err := createCSV(filepath.Join(out, v.Name+".csv"), header)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		files[v] = f
	}
	scalars := m.Scalars()
	names := make([]string, len(scalars))
	for i, v := range scalars {
		names[i] = v.Name
	}
	params, err := createCSV(filepath.Join(out, "params.csv"), strings.Join(append([]string{"draw"}, names...), ","))
	if err != nil {
		return &exitError{code: 1, err: err}
	}

	var buf []byte
	for k := 1; k <= draws; k++ {
		st, err := m.SamplePrior(rng)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("draw %d: %w", k, err)}
		}
		buf = st.Tree.AppendNewick(buf[:0])
		tw.Write(buf)
		tw.WriteByte('\n')
		for _, v := range dataVars {
			w := files[v].w
			x := st.Env.Values[v.ID]
			switch len(v.Dims) {
			case 0:
				fmt.Fprintf(w, "%d,%s\n", k, formatFloat(x[0]))
			case 1:
				for i, xi := range x {
					fmt.Fprintf(w, "%d,%d,%s\n", k, i+1, formatFloat(xi))
				}
			case 2:
				cols := v.Dims[1]
				for i := 0; i < v.Dims[0]; i++ {
					fmt.Fprintf(w, "%d,%d", k, i+1)
					for _, xij := range x[i*cols : (i+1)*cols] {
						w.WriteByte(',')
						w.WriteString(formatFloat(xij))
					}
					w.WriteByte('\n')
				}
			}
		}
		fmt.Fprintf(params.w, "%d", k)
		for _, v := range scalars {
			params.w.WriteString("," + formatFloat(st.Env.Values[v.ID][0]))
		}
		params.w.WriteByte('\n')
	}
	if err := tw.Flush(); err != nil {
		return &exitError{code: 1, err: err}
	}
	for _, v := range dataVars {
		if err := files[v].close(); err != nil {
			return &exitError{code: 1, err: err}
		}
	}
	if err := params.close(); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// checkSampleDir refuses an output directory that sample would spoil: one
// holding a run (run.json), or one holding a file of a name sample writes
// (trees.nwk, params.csv, NAME.csv) that an earlier sample did not write,
// which is told by params.csv starting with sample's "draw" header.
// Rewriting an earlier sample's files is allowed.
func checkSampleDir(out string, m *inference.Model) error {
	if _, err := os.Lstat(filepath.Join(out, inference.RunFile)); err == nil {
		return fmt.Errorf("%s holds a run (%s): sample into another directory", out, inference.RunFile)
	}
	names := []string{"trees.nwk", "params.csv"}
	for _, v := range m.G.Vars {
		if v.IsData {
			names = append(names, v.Name+".csv")
		}
	}
	if ours, _ := firstLineIs(filepath.Join(out, "params.csv"), "draw"); ours {
		return nil
	}
	for _, name := range names {
		if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
			return fmt.Errorf("%s already holds %s, which sample did not write (its params.csv does not start with the header draw,...): "+
				"sample into another directory, or remove the file", out, name)
		}
	}
	return nil
}

// firstLineIs reports whether the file at path starts with a line whose
// first comma-separated field is field.
func firstLineIs(path, field string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadString('\n')
	if err != nil && line == "" {
		return false, err
	}
	first, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ",")
	return first == field, nil
}
