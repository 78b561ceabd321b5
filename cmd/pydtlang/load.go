package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/internal/bounded"
	"github.com/pydtlang/pydtlang/lang"
)

// bindings are the --data, --draw and --set flags shared by the
// subcommands.
type bindings struct {
	data []string
	set  []string
	// draw is --draw K: the draw of a long-format data file to use; 0 when
	// not given.
	draw int
	// labels is --labels FILE: row names, one per line, for the data.
	labels string
	cmd    *cobra.Command
}

func (b *bindings) register(cmd *cobra.Command, withData bool) {
	b.cmd = cmd
	if withData {
		cmd.Flags().StringArrayVar(&b.data, "data", nil, "bind a data variable to a file: NAME=FILE (CSV, TSV or whitespace-separated, at most 256 MiB; how headers and row labels are read: spec.md section 8; repeatable)")
		cmd.Flags().StringVar(&b.labels, "labels", "", "row names kept in a file of their own, one per line (as animal_names.txt, cell_names.txt): they name the rows of every --data file, which must have no label column")
		cmd.Flags().IntVar(&b.draw, "draw", 0, "use draw K of a data file of draws (header draw,row,..., as sample writes)")
	}
	cmd.Flags().StringArrayVar(&b.set, "set", nil, "clamp a scalar or bind a dimension: NAME=VALUE[,NAME=VALUE...] with decimal VALUEs such as 2, 0.5, 1e-3 (repeatable)")
}

// parseSets parses repeated, comma-separated NAME=VALUE lists. Values have
// the number syntax of data files (dataset.ParseNumber): decimal, finite,
// without digit separators or hexadecimal, and not so small that they
// underflow to 0.
func parseSets(items []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, item := range items {
		for _, kv := range strings.Split(item, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			name, val, ok := strings.Cut(kv, "=")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				return nil, fmt.Errorf("--set %q: want NAME=VALUE", kv)
			}
			x, err := dataset.ParseNumber(val)
			if err != nil {
				return nil, fmt.Errorf("--set %s=%s: %w", name, strings.TrimSpace(val), err)
			}
			if _, dup := out[name]; dup {
				return nil, fmt.Errorf("--set %s given twice", name)
			}
			out[name] = x
		}
	}
	return out, nil
}

// readModel reads a model file, refusing one larger than
// bounded.MaxModelBytes or one that is not text.
func readModel(path string) ([]byte, error) {
	return bounded.ReadFile(path, bounded.Options{What: "model file", Max: bounded.MaxModelBytes})
}

// readData reads a data file and returns it with the SHA-256 of its bytes,
// in hex. The file is read once, as dataset.Read consumes it, so its size is
// bounded by dataset.MaxFileBytes rather than read whole first.
func readData(path string) (*dataset.Matrix, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading data: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	m, err := dataset.Read(path, io.TeeReader(f, h))
	if err != nil {
		return nil, "", err
	}
	// Hash what Read left unread (nothing but what follows the last
	// record, such as a final newline); it stops at MaxFileBytes.
	if _, err := io.Copy(h, io.LimitReader(f, dataset.MaxFileBytes)); err != nil {
		return nil, "", fmt.Errorf("reading data: %w", err)
	}
	return m, hex.EncodeToString(h.Sum(nil)), nil
}

// loaded is a parsed, compiled model with its source.
type loaded struct {
	path string
	src  []byte
	file *lang.File
	g    *graph.Graph
	// data maps each data variable to the absolute path of its file.
	data map[string]string
	// sums maps the absolute path of the model and of every data file to
	// the SHA-256 of its contents, in hex.
	sums map[string]string
	// labels is the absolute path of the --labels file, if any.
	labels string
}

// load parses and compiles the model at path with the bindings. On
// diagnostics it prints them to stderr and returns failed.
func load(path string, b *bindings, partial bool, stderr io.Writer) (*loaded, error) {
	if b.cmd != nil && b.cmd.Flags().Changed("draw") && b.draw < 1 {
		return nil, &exitError{code: 2, err: fmt.Errorf("--draw must be at least 1, got %d", b.draw)}
	}
	src, err := readModel(path)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	l := &loaded{path: path, src: src, data: map[string]string{}, sums: map[string]string{absPath(path): sha256Hex(src)}}
	f, err := lang.Parse(path, src)
	if err != nil {
		printDiagnostics(stderr, err, src)
		return nil, failed
	}
	l.file = f
	sets, err := parseSets(b.set)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	opts := graph.Options{Set: sets, Data: map[string]*dataset.Matrix{}, Partial: partial, NeedPYDT: true}
	usedDraw := false
	for _, kv := range b.data {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || name == "" || file == "" {
			return nil, &exitError{code: 2, err: fmt.Errorf("--data %q: want NAME=FILE", kv)}
		}
		if _, dup := opts.Data[name]; dup {
			return nil, &exitError{code: 2, err: fmt.Errorf("--data %s given twice", name)}
		}
		m, sum, err := readData(file)
		if err != nil {
			return nil, &exitError{code: 1, err: err}
		}
		if m.IsLong() {
			usedDraw = true
			if m, err = selectDraw(m, b.draw); err != nil {
				return nil, &exitError{code: 1, err: err}
			}
		}
		opts.Data[name] = m
		l.data[name] = absPath(file)
		l.sums[absPath(file)] = sum
	}
	if b.labels != "" {
		if err := l.bindLabels(b.labels, opts.Data); err != nil {
			return nil, err
		}
	}
	if b.draw > 0 && !usedDraw {
		return nil, &exitError{code: 2, err: fmt.Errorf("--draw %d: no --data file is a file of draws (a header starting draw,row, as sample writes)", b.draw)}
	}
	g, err := graph.Compile(f, opts)
	if err != nil {
		printDiagnostics(stderr, err, src)
		return nil, failed
	}
	l.g = g
	return l, nil
}

// bindLabels names the rows of every data matrix by the lines of the file
// at path, and records the file and its SHA-256.
func (l *loaded) bindLabels(path string, data map[string]*dataset.Matrix) error {
	if len(data) == 0 {
		return &exitError{code: 2, err: fmt.Errorf("--labels %s: no --data file to name the rows of", path)}
	}
	src, err := bounded.ReadFile(path, bounded.Options{What: "labels file", Max: dataset.MaxFileBytes})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		m := data[name]
		if m.RowLabels != nil {
			return &exitError{code: 1, err: fmt.Errorf("--labels %s: %s already names its rows in its first column", path, m.Source)}
		}
		names, err := dataset.ReadLabels(path, m.Rows)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("--labels: %w", err)}
		}
		m.RowLabels = names
	}
	l.labels = absPath(path)
	l.sums[l.labels] = sha256Hex(src)
	return nil
}

// loadModel loads the model at path with its data bound (not partial) and
// builds the inference model.
func loadModel(path string, b *bindings, stderr io.Writer) (*loaded, *inference.Model, error) {
	l, err := load(path, b, false, stderr)
	if err != nil {
		return nil, nil, err
	}
	m, err := inference.NewModel(l.g)
	if err != nil {
		return nil, nil, &exitError{code: 1, err: err}
	}
	return l, m, nil
}

// selectDraw returns draw k of a long-format matrix; with k = 0, its only
// draw, or an error asking for --draw when it holds several.
func selectDraw(m *dataset.Matrix, k int) (*dataset.Matrix, error) {
	if k == 0 {
		draws, err := m.Draws()
		if err != nil {
			return nil, err
		}
		if len(draws) > 1 {
			return nil, fmt.Errorf("%s holds %d draws (the format that sample writes: header draw,row,...); choose one with --draw K, e.g. --draw %d",
				m.Source, len(draws), draws[0])
		}
		k = draws[0]
	}
	return m.Draw(k)
}

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func printDiagnostics(w io.Writer, err error, src []byte) {
	if list, ok := err.(lang.ErrorList); ok {
		list.Format(w, src)
		return
	}
	fmt.Fprintln(w, err)
}
