package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/lang"
)

// bindings are the --data and --set flags shared by the subcommands.
type bindings struct {
	data []string
	set  []string
}

func (b *bindings) register(cmd *cobra.Command, withData bool) {
	if withData {
		cmd.Flags().StringArrayVar(&b.data, "data", nil, "bind a data variable to a file: NAME=FILE (CSV, TSV or whitespace-separated; repeatable)")
	}
	cmd.Flags().StringArrayVar(&b.set, "set", nil, "clamp a scalar or bind a dimension: NAME=VALUE[,NAME=VALUE...] (repeatable)")
}

// parseSets parses repeated, comma-separated NAME=VALUE lists.
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
			x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil {
				return nil, fmt.Errorf("--set %s=%s: %q is not a number", name, val, val)
			}
			if _, dup := out[name]; dup {
				return nil, fmt.Errorf("--set %s given twice", name)
			}
			out[name] = x
		}
	}
	return out, nil
}

// loaded is a parsed, compiled model with its source.
type loaded struct {
	path string
	src  []byte
	file *lang.File
	g    *graph.Graph
}

// load parses and compiles the model at path with the bindings. On
// diagnostics it prints them to stderr and returns failed.
func load(path string, b *bindings, partial bool, stderr io.Writer) (*loaded, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	l := &loaded{path: path, src: src}
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
	opts := graph.Options{Set: sets, Data: map[string]*dataset.Matrix{}, Partial: partial}
	for _, kv := range b.data {
		name, file, ok := strings.Cut(kv, "=")
		if !ok || name == "" || file == "" {
			return nil, &exitError{code: 2, err: fmt.Errorf("--data %q: want NAME=FILE", kv)}
		}
		if _, dup := opts.Data[name]; dup {
			return nil, &exitError{code: 2, err: fmt.Errorf("--data %s given twice", name)}
		}
		m, err := dataset.ReadFile(file)
		if err != nil {
			return nil, &exitError{code: 1, err: err}
		}
		opts.Data[name] = m
	}
	g, err := graph.Compile(f, opts)
	if err != nil {
		printDiagnostics(stderr, err, src)
		return nil, failed
	}
	l.g = g
	return l, nil
}

func printDiagnostics(w io.Writer, err error, src []byte) {
	if list, ok := err.(lang.ErrorList); ok {
		list.Format(w, src)
		return
	}
	fmt.Fprintln(w, err)
}

// scalarNames lists names for messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
