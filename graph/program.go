package graph

import (
	"errors"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
	"github.com/pydtlang/pydtlang/stdlib"
)

// Bindings are the values a Program is bound to: what the command line's
// --data and --set give.
type Bindings struct {
	// Data binds data variables to tables read from files; their shapes
	// bind the dimensions named in the declarations.
	Data map[string]*dataset.Matrix
	// Set clamps scalars and binds dimensions, as with --set NAME=VALUE.
	Set map[string]float64
	// Partial lets dimensions stay unbound and data variables unobserved,
	// as Options.Partial.
	Partial bool
}

// Program is a model compiled without data: its names resolved, node
// types and functions found in the library, kinds, supports and the
// shapes and indices that do not depend on data checked, so that every
// diagnostic that needs no data has been reported. Bind binds it to data
// and --set values, as many times as needed (the training data of each
// fold of an evaluation, held-out data), without parsing or checking the
// model again. A Program is not modified by Bind and may be bound from
// several goroutines at once.
type Program struct {
	// File is the parsed model.
	File *lang.File
	// Unbound is the model's graph without bindings (as compiled with
	// Options.Partial): its variables with their kinds and roles before
	// binding, dimensions unbound (shape -1), and its factors. It serves
	// to inspect the model, e.g. to list its data variables; it is not
	// meant to be evaluated.
	Unbound *Graph

	opts Options
	lib  *stdlib.Library
	rec  *progRec
}

// CompileProgram compiles a parsed file without binding it. opts gives the
// Library and NeedPYDT; its Data, Set and Partial must be unset, since
// they are the Bindings given to Bind. The error, if not nil, is a
// lang.ErrorList holding every diagnostic that does not depend on data.
func CompileProgram(f *lang.File, opts Options) (*Program, error) {
	if opts.Data != nil || opts.Set != nil || opts.Partial {
		return nil, errors.New("graph: CompileProgram takes no bindings (Options.Data, Set, Partial): give them to Program.Bind")
	}
	unbound := opts
	unbound.Partial = true
	g, rec, err := compileOnce(f, unbound, true)
	if err != nil {
		return nil, err
	}
	lib := opts.Library
	if lib == nil {
		lib = stdlib.Default()
	}
	return &Program{File: f, Unbound: g, opts: opts, lib: lib, rec: rec}, nil
}
