package graph

import (
	"errors"

	"github.com/pydtlang/pydtlang/dataset"
	"github.com/pydtlang/pydtlang/lang"
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
	g, err := Compile(f, unbound)
	if err != nil {
		return nil, err
	}
	return &Program{File: f, Unbound: g, opts: opts}, nil
}

// Bind binds the program to data and --set values and returns the
// complete graph. The error, if not nil, is a lang.ErrorList holding every
// problem of the binding: unbound dimensions, shapes that disagree,
// invalid data values, clamped values outside supports, indices outside
// the bound dimensions.
//
// Bind compiles the syntax tree again with the bindings (the compiler's
// checks are interleaved with the binding of shapes and values); it does
// not parse, and the diagnostics that need no data, checked by
// CompileProgram, cannot recur.
func (p *Program) Bind(b Bindings) (*Graph, error) {
	opts := p.opts
	opts.Data, opts.Set, opts.Partial = b.Data, b.Set, b.Partial
	return Compile(p.File, opts)
}
