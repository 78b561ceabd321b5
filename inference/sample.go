package inference

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
)

// The files Sample writes, besides one NAME.csv per data variable.
const (
	SampleTreesFile  = "trees.nwk"
	SampleParamsFile = "params.csv"
)

// sampleStream is the second word of the PCG seed of Sample, so that a
// seed names one reproducible stream.
const sampleStream = 0x9e3779b97f4a7c15

// Sample draws draws independent samples from m's prior (SamplePrior),
// with the random stream PCG(seed, fixed), and writes them to the
// directory out, as "pydtlang sample" does:
//
//	trees.nwk   one Newick tree per draw (package pydt's Newick format)
//	            of the model's first PYDT; each further PYDT of variable V
//	            writes its trees to trees-V.nwk (FileOf(SampleTreesFile, V))
//	NAME.csv    each data variable's draws in the long format
//	            (dataset.LongWriter), which Inputs.Draw reads back
//	params.csv  the drawn scalars and the elements of latent arrays:
//	            header draw,NAME,...,NAME[1],... (the names of
//	            Model.Traced), as ReadValues reads them
//
// It holds the directory's lock (LockFile) while it writes, and refuses a
// directory that holds a run (run.json), or a file of one of those names
// that an earlier Sample did not write (told by params.csv starting with
// the header draw,...); rewriting an earlier sample is allowed. The same
// seed gives the same files.
func Sample(m *Model, draws int, seed uint64, out string) (err error) {
	if draws < 1 {
		return fmt.Errorf("sample: draws must be at least 1, got %d", draws)
	}
	if err := m.needTree("sample"); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	lock, err := lockDir(out)
	if err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	defer lock.release()
	if err := checkSampleDir(out, m); err != nil {
		return fmt.Errorf("sample: %w", err)
	}

	var files []*os.File
	var bufs []*bufio.Writer
	defer func() {
		for i, f := range files {
			ferr := bufs[i].Flush()
			if cerr := f.Close(); ferr == nil {
				ferr = cerr
			}
			if ferr != nil && err == nil {
				err = fmt.Errorf("sample: %w", ferr)
			}
		}
	}()
	create := func(name string) (*bufio.Writer, error) {
		f, err := os.Create(filepath.Join(out, name))
		if err != nil {
			return nil, fmt.Errorf("sample: %w", err)
		}
		w := bufio.NewWriter(f)
		files, bufs = append(files, f), append(bufs, w)
		return w, nil
	}
	trees := make([]*bufio.Writer, len(m.Trees))
	for k := range m.Trees {
		if trees[k], err = create(FileOf(SampleTreesFile, m.fileVar(k))); err != nil {
			return err
		}
	}
	var dataVars []*graph.Var
	data := map[*graph.Var]*dataset.LongWriter{}
	for _, v := range m.G.Vars {
		if !v.IsData {
			continue
		}
		w, err := create(v.Name + ".csv")
		if err != nil {
			return err
		}
		if data[v], err = dataset.NewLongWriter(w, v.Name, v.Dims); err != nil {
			return fmt.Errorf("sample: %w", err)
		}
		dataVars = append(dataVars, v)
	}
	// The scalars, then every element of the latent arrays, as trace.csv
	// names them: score --values reads them back (ReadValues).
	cols := m.Traced()
	names := []string{"draw"}
	for _, c := range cols {
		names = append(names, csvField(c.Name))
	}
	params, err := create(SampleParamsFile)
	if err != nil {
		return err
	}
	params.WriteString(strings.Join(names, ",") + "\n")

	rng := rand.New(rand.NewPCG(seed, sampleStream))
	var b []byte
	for k := 1; k <= draws; k++ {
		st, err := m.SamplePrior(rng)
		if err != nil {
			return fmt.Errorf("draw %d: %w", k, err)
		}
		for k, tr := range st.Trees {
			b = append(tr.AppendNewick(b[:0]), '\n')
			trees[k].Write(b)
		}
		for _, v := range dataVars {
			if err := data[v].WriteDraw(k, st.Env.Values[v.ID]); err != nil {
				return fmt.Errorf("sample: %s: %w", v.Name, err)
			}
		}
		params.WriteString(fmt.Sprint(k))
		for _, c := range cols {
			params.WriteString("," + fmtFloat(st.Env.Values[c.Var.ID][c.Off]))
		}
		params.WriteByte('\n')
	}
	for _, v := range dataVars {
		if err := data[v].Flush(); err != nil {
			return fmt.Errorf("sample: %w", err)
		}
	}
	return nil
}

// checkSampleDir refuses an output directory that Sample would spoil: one
// holding a run (run.json), or one holding a file of a name Sample writes
// (trees.nwk, params.csv, NAME.csv) that an earlier Sample did not write,
// which is told by params.csv starting with the header "draw". Rewriting an
// earlier sample's files is allowed.
func checkSampleDir(out string, m *Model) error {
	if _, err := os.Lstat(filepath.Join(out, RunFile)); err == nil {
		return fmt.Errorf("%s holds a run (%s): sample into another directory", out, RunFile)
	}
	names := []string{SampleParamsFile}
	for k := range m.Trees {
		names = append(names, FileOf(SampleTreesFile, m.fileVar(k)))
	}
	for _, v := range m.G.Vars {
		if v.IsData {
			names = append(names, v.Name+".csv")
		}
	}
	if ours, _ := firstLineIs(filepath.Join(out, SampleParamsFile), "draw"); ours {
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
