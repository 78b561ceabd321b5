package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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

// inputs returns the inputs named by the model path and the flags.
func (b *bindings) inputs(path string) (inference.Inputs, error) {
	if b.cmd != nil && b.cmd.Flags().Changed("draw") && b.draw < 1 {
		return inference.Inputs{}, &exitError{code: 2, err: fmt.Errorf("--draw must be at least 1, got %d", b.draw)}
	}
	in := inference.Inputs{Model: inference.File{Path: path}, Set: b.set, Draw: b.draw}
	for _, kv := range b.data {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || name == "" || file == "" {
			return in, &exitError{code: 2, err: fmt.Errorf("--data %q: want NAME=FILE, NAME a data variable of the model (declared by a line \"data NAME : ...\"), e.g. --data %s=%s", kv, dataNameHint(path), dataFileHint(kv))}
		}
		if _, dup := in.Data[name]; dup {
			return in, &exitError{code: 2, err: fmt.Errorf("--data %s given twice", name)}
		}
		if in.Data == nil {
			in.Data = map[string]inference.File{}
		}
		in.Data[name] = inference.File{Path: file}
	}
	if b.labels != "" {
		in.Labels = &inference.File{Path: b.labels}
	}
	return in, nil
}

// load parses and compiles the model at path with the bindings. On
// diagnostics it prints them to stderr and returns failed.
func load(path string, b *bindings, partial bool, stderr io.Writer) (*inference.Loaded, error) {
	in, err := b.inputs(path)
	if err != nil {
		return nil, err
	}
	l, err := in.Compile(partial)
	if err != nil {
		return nil, loadError(err, stderr)
	}
	return l, nil
}

// loadError prints the diagnostics of a model that does not compile and
// returns failed, or returns the exit error of another error of loading a
// model: status 2 for inputs inconsistent in themselves, 1 otherwise.
func loadError(err error, stderr io.Writer) error {
	var se *inference.SourceError
	switch {
	case errors.As(err, &se):
		printDiagnostics(stderr, se.Err, se.Src)
		return failed
	case errors.Is(err, inference.ErrInputs):
		return &exitError{code: 2, err: err}
	}
	return &exitError{code: 1, err: err}
}

// loadModel loads the model at path with its data bound (not partial) and
// builds the inference model.
func loadModel(path string, b *bindings, stderr io.Writer) (*inference.Loaded, *inference.Model, error) {
	l, err := load(path, b, false, stderr)
	if err != nil {
		return nil, nil, err
	}
	m, err := l.Model()
	if err != nil {
		return nil, nil, &exitError{code: 1, err: err}
	}
	return l, m, nil
}

func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

func printDiagnostics(w io.Writer, err error, src []byte) {
	if list, ok := err.(lang.ErrorList); ok {
		list.Format(w, src)
		return
	}
	fmt.Fprintln(w, err)
}

// readModel reads a model file, refusing one larger than
// bounded.MaxModelBytes or one that is not text.
func readModel(path string) ([]byte, error) {
	return bounded.ReadFile(path, bounded.Options{What: "model file", Max: bounded.MaxModelBytes})
}

// dataFileHint is the file of a --data value without a name, for the
// example in its error message ("FILE" when there is none).
func dataFileHint(kv string) string {
	if _, file, _ := strings.Cut(kv, "="); file != "" {
		return file
	}
	if kv != "" && !strings.Contains(kv, "=") {
		return kv
	}
	return "FILE"
}

// dataNameHint is the first data variable the model file at path declares,
// for the example in the error message of a --data value without a name
// ("NAME" when the file cannot be read or parsed, or declares none).
func dataNameHint(path string) string {
	src, err := readModel(path)
	if err != nil {
		return "NAME"
	}
	f, err := lang.Parse(path, src)
	if err != nil {
		return "NAME"
	}
	for _, st := range f.Stmts {
		if d, ok := st.(*lang.DataDecl); ok && d.Name != nil {
			return d.Name.Name
		}
	}
	return "NAME"
}
