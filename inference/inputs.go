package inference

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/internal/bounded"
	"github.com/pydtlang/pydtlang/lang"
)

// File is a file a model was loaded from: its path and the SHA-256 of its
// contents, in hex. Load fills in SHA256, and refuses a file whose SHA256
// is given and differs.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
}

// Inputs name what a model is loaded from, as the command line gives it:
// the model file, a file for each data variable, a file of row names, the
// --set values and the --draw of a file of draws. Load reads them; run.json
// records them (with every file's SHA-256), so that a run's model can be
// loaded again (LoadRun) and Resume can refuse files that have changed.
type Inputs struct {
	// Model is the model source file.
	Model File `json:"model"`
	// Data binds each data variable, by name, to a data file (CSV, TSV or
	// whitespace-separated; see package dataset).
	Data map[string]File `json:"data,omitempty"`
	// Labels, if not nil, is a file of row names, one per line, that names
	// the rows of every data file (which must have no label column).
	Labels *File `json:"labels,omitempty"`
	// Set holds NAME=VALUE items, or comma-separated lists of them, that
	// clamp scalars and bind dimensions (ParseSets).
	Set []string `json:"set,omitempty"`
	// Draw selects draw Draw of a data file of draws (the long format that
	// sample writes; dataset.Matrix.SelectDraw); 0 takes the file's only
	// draw.
	Draw int `json:"draw,omitempty"`
}

// ErrInputs is wrapped by the errors of Inputs that are inconsistent in
// themselves, whatever the files hold (the command line's usage errors):
// a --set item that is not NAME=VALUE, a Draw with no file of draws, row
// names with no data.
var ErrInputs = errors.New("invalid inputs")

// ErrChanged is wrapped by the errors of Load and Resume for a file whose
// SHA-256 is not the one recorded: a run continues only with the files it
// started with.
var ErrChanged = errors.New("file changed")

// SourceError is a model file that does not parse or compile. Err (a
// lang.ErrorList, most often) holds the diagnostics and Src the file's
// contents, so that they can be shown in context (lang.ErrorList.Format).
type SourceError struct {
	Path string
	Src  []byte
	Err  error
}

// Error returns the diagnostics, one a line.
func (e *SourceError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SourceError) Unwrap() error { return e.Err }

// Loaded is a model file parsed and compiled with its inputs bound.
type Loaded struct {
	// Inputs are those loaded, with absolute paths and every file's
	// SHA-256.
	Inputs Inputs
	// Src is the model file's contents and File its syntax tree, from
	// which the model can be compiled again with other data.
	Src  []byte
	File *lang.File
	// Graph is the compiled model.
	Graph *graph.Graph
}

// Load reads, parses and compiles the model with its data bound, and binds
// it for inference (NewModel). The model's Inputs are in, with absolute
// paths and the SHA-256 of every file read, for Run to record.
func (in Inputs) Load() (*Model, error) {
	l, err := in.Compile(false)
	if err != nil {
		return nil, err
	}
	return l.Model()
}

// Model binds the compiled graph for inference (NewModel), with l's Inputs.
// The graph must have been compiled without partial.
func (l *Loaded) Model() (*Model, error) {
	m, err := NewModel(l.Graph)
	if err != nil {
		return nil, err
	}
	in := l.Inputs
	m.Inputs = &in
	return m, nil
}

// Compile reads, parses and compiles the model with its inputs bound. With
// partial, dimensions may stay unbound and data variables unobserved
// (graph.Options.Partial), for checking a model and for sampling from its
// prior. Errors in the model file are a *SourceError; errors of the inputs
// themselves wrap ErrInputs; a file whose SHA-256 is given and differs
// wraps ErrChanged.
func (in Inputs) Compile(partial bool) (*Loaded, error) {
	if in.Draw < 0 {
		return nil, inputsErr("draw %d: draws are numbered from 1", in.Draw)
	}
	sets, err := ParseSets(in.Set)
	if err != nil {
		return nil, err
	}
	src, err := bounded.ReadFile(in.Model.Path, bounded.Options{What: "model file", Max: bounded.MaxModelBytes})
	if err != nil {
		return nil, err
	}
	l := &Loaded{Src: src, Inputs: Inputs{Set: slices.Clone(in.Set), Draw: in.Draw}}
	if l.Inputs.Model, err = record(in.Model, "the model file", src); err != nil {
		return nil, err
	}
	f, err := lang.Parse(in.Model.Path, src)
	if err != nil {
		return nil, &SourceError{Path: in.Model.Path, Src: src, Err: err}
	}
	l.File = f
	opts := graph.Options{Set: sets, Data: map[string]*dataset.Matrix{}, Partial: partial, NeedPYDT: true}
	usedDraw := false
	for _, name := range slices.Sorted(maps.Keys(in.Data)) {
		file := in.Data[name]
		m, sum, err := readData(file.Path)
		if err != nil {
			return nil, err
		}
		rec := File{Path: absPath(file.Path), SHA256: sum}
		if file.SHA256 != "" && file.SHA256 != sum {
			return nil, changed("data "+name, rec.Path)
		}
		if m.IsLong() {
			usedDraw = true
			if m, err = m.SelectDraw(in.Draw); err != nil {
				return nil, err
			}
		}
		opts.Data[name] = m
		if l.Inputs.Data == nil {
			l.Inputs.Data = map[string]File{}
		}
		l.Inputs.Data[name] = rec
	}
	if in.Labels != nil {
		if err := l.bindLabels(*in.Labels, opts.Data); err != nil {
			return nil, err
		}
	}
	if in.Draw > 0 && !usedDraw {
		return nil, inputsErr("--draw %d: no --data file is a file of draws (a header starting draw,row, as sample writes)", in.Draw)
	}
	g, err := graph.Compile(f, opts)
	if err != nil {
		return nil, &SourceError{Path: in.Model.Path, Src: src, Err: err}
	}
	l.Graph = g
	return l, nil
}

// Hash sets the SHA-256 of every file of in (model, data, labels) from
// the files' contents now, and makes their paths absolute: for inputs
// recorded for a model that was built otherwise than by Load (from the same
// files), so that a run of it records them and Resume and LoadRun check
// them.
func (in *Inputs) Hash() error {
	hash := func(f *File, max int64) error {
		r, err := os.Open(f.Path)
		if err != nil {
			return err
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(r, max)); err != nil {
			return fmt.Errorf("reading %s: %w", f.Path, err)
		}
		f.Path, f.SHA256 = absPath(f.Path), hex.EncodeToString(h.Sum(nil))
		return nil
	}
	if err := hash(&in.Model, bounded.MaxModelBytes); err != nil {
		return err
	}
	for name, f := range in.Data {
		if err := hash(&f, dataset.MaxFileBytes); err != nil {
			return err
		}
		in.Data[name] = f
	}
	if in.Labels != nil {
		return hash(in.Labels, dataset.MaxFileBytes)
	}
	return nil
}

// record returns file with its absolute path and the SHA-256 of contents,
// or an error wrapping ErrChanged when file records another SHA-256.
func record(file File, what string, contents []byte) (File, error) {
	rec := File{Path: absPath(file.Path), SHA256: sha256Hex(contents)}
	if file.SHA256 != "" && file.SHA256 != rec.SHA256 {
		return rec, changed(what, rec.Path)
	}
	return rec, nil
}

func changed(what, path string) error {
	return tagged{fmt.Errorf("%s %s has changed since the run started (its SHA-256 differs); a run continues only with the files it started with",
		what, path), ErrChanged}
}

// inputsErr is an error wrapping ErrInputs, whose message is its own.
func inputsErr(format string, args ...any) error {
	return tagged{fmt.Errorf(format, args...), ErrInputs}
}

// tagged is err, which also matches tag (errors.Is) without naming it in
// its message.
type tagged struct {
	err error
	tag error
}

func (t tagged) Error() string { return t.err.Error() }

func (t tagged) Unwrap() []error { return []error{t.err, t.tag} }

// bindLabels names the rows of every data matrix by the lines of file, and
// records it.
func (l *Loaded) bindLabels(file File, data map[string]*dataset.Matrix) error {
	if len(data) == 0 {
		return inputsErr("--labels %s: no --data file to name the rows of", file.Path)
	}
	src, err := bounded.ReadFile(file.Path, bounded.Options{What: "labels file", Max: dataset.MaxFileBytes})
	if err != nil {
		return err
	}
	rec, err := record(file, "the labels file", src)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		m := data[name]
		if m.RowLabels != nil {
			return fmt.Errorf("--labels %s: %s already names its rows in its first column", file.Path, m.Source)
		}
		names, err := dataset.ReadLabels(file.Path, m.Rows)
		if err != nil {
			return fmt.Errorf("--labels: %w", err)
		}
		m.RowLabels = names
	}
	l.Inputs.Labels = &rec
	return nil
}

// ParseSets parses NAME=VALUE items, each possibly a comma-separated list
// of them, as --set takes them. Values have the number syntax of data
// files (dataset.ParseNumber): decimal, finite, without digit separators
// or hexadecimal, and not so small that they underflow to 0. Errors wrap
// ErrInputs.
func ParseSets(items []string) (map[string]float64, error) {
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
				return nil, inputsErr("--set %q: want NAME=VALUE", kv)
			}
			x, err := dataset.ParseNumber(val)
			if err != nil {
				return nil, inputsErr("--set %s=%s: %w", name, strings.TrimSpace(val), err)
			}
			if _, dup := out[name]; dup {
				return nil, inputsErr("--set %s given twice", name)
			}
			out[name] = x
		}
	}
	return out, nil
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

// ReadData reads the data file at path, as Load reads each data file, and
// returns it with the SHA-256 of its bytes in hex.
func ReadData(path string) (*dataset.Matrix, string, error) { return readData(path) }

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

// sameInputs checks that the files of now, a model's inputs, are those
// recorded when a run started (by role: the model file, each data
// variable's file, the labels file), by SHA-256: paths may differ (a run
// directory moved with its inputs), contents may not. A recorded file
// without a SHA-256 is not checked.
func sameInputs(recorded, now *Inputs) error {
	if recorded == nil {
		return nil
	}
	if now == nil {
		if recorded.Model.SHA256 == "" {
			return nil
		}
		return fmt.Errorf("the run was started from %s and records its files' SHA-256, but the model was not loaded from files (Inputs.Load, LoadRun): "+
			"load it with Inputs.Load so that its files can be checked, or set Model.Inputs", recorded.Model.Path)
	}
	check := func(what string, rec, cur File) error {
		if rec.SHA256 != "" && rec.SHA256 != cur.SHA256 {
			return changed(what, cur.Path)
		}
		return nil
	}
	if err := check("the model file", recorded.Model, now.Model); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(recorded.Data)) {
		cur, ok := now.Data[name]
		if !ok {
			return fmt.Errorf("the run bound data %s to %s; the model binds no file to it", name, recorded.Data[name].Path)
		}
		if err := check("data "+name, recorded.Data[name], cur); err != nil {
			return err
		}
	}
	if recorded.Labels != nil {
		if now.Labels == nil {
			return fmt.Errorf("the run named its rows by %s; the model has no labels file", recorded.Labels.Path)
		}
		if err := check("the labels file", *recorded.Labels, *now.Labels); err != nil {
			return err
		}
	}
	return nil
}
