package stdlib

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Library is a set of named node types, deterministic functions and PYDT
// divergence constructors: everything a model file can call. The compiler
// (package graph) resolves names against the Library it is given and
// nothing else, as starlark-go resolves against its predeclared names.
//
// Default returns the standard library; a program extends a copy of it
// with its own node types through Register. A Library is not safe for
// concurrent modification, but once built it may be read concurrently.
type Library struct {
	types map[string]NodeType
	funcs map[string]*Func
	divs  map[string]*DivergenceType
	vfs   map[string]*VectorFunc
}

// NewLibrary returns an empty library.
func NewLibrary() *Library {
	return &Library{types: map[string]NodeType{}, funcs: map[string]*Func{}, divs: map[string]*DivergenceType{}, vfs: map[string]*VectorFunc{}}
}

// builtins are the standard node types, in the order their files' init
// functions add them with builtin.
var builtins []NodeType

// builtin adds a node type to the standard library. Each standard node
// type's file calls it from init, so that a new type is one file.
func builtin(t NodeType) { builtins = append(builtins, t) }

// std is the standard library, built once on first use (after every init
// has run); Default hands out copies.
var std = sync.OnceValue(func() *Library {
	l := NewLibrary()
	for _, t := range builtins {
		must(l.Register(t))
	}
	for _, f := range stdFuncs() {
		must(l.RegisterFunc(f))
	}
	for _, d := range stdDivergences() {
		must(l.RegisterDivergence(d))
	}
	must(l.RegisterVectorFunc(Softmax))
	return l
})

func must(err error) {
	if err != nil {
		panic("stdlib: " + err.Error())
	}
}

// Default returns a new copy of the standard library: the node types
// (Beta, Gamma, Normal, Probit, PYDT, ...), the deterministic functions (exp, log,
// ...) and the divergence functions DivInv, DivInvSq and DivNeal. The
// caller may extend the copy without affecting other users.
func Default() *Library { return std().Clone() }

// Clone returns a copy of l that can be extended independently.
func (l *Library) Clone() *Library {
	return &Library{types: maps.Clone(l.types), funcs: maps.Clone(l.funcs), divs: maps.Clone(l.divs), vfs: maps.Clone(l.vfs)}
}

// taken reports whether name names anything in l.
func (l *Library) taken(name string) bool {
	_, t := l.types[name]
	_, f := l.funcs[name]
	_, d := l.divs[name]
	_, v := l.vfs[name]
	return t || f || d || v
}

// Register adds a node type. It fails if the name is empty or already
// names a node type, function or divergence constructor of l.
func (l *Library) Register(t NodeType) error {
	if t == nil || t.Name() == "" {
		return fmt.Errorf("a node type needs a name")
	}
	if l.taken(t.Name()) {
		return fmt.Errorf("%s is already defined in the library", t.Name())
	}
	l.types[t.Name()] = t
	return nil
}

// RegisterFunc adds a deterministic function. It fails if the name is
// empty or taken, or the function has no Eval or an arity other than 1 or 2.
func (l *Library) RegisterFunc(f *Func) error {
	switch {
	case f == nil || f.Name == "":
		return fmt.Errorf("a function needs a name")
	case l.taken(f.Name):
		return fmt.Errorf("%s is already defined in the library", f.Name)
	case f.Eval == nil || f.Arity < 1 || f.Arity > 2:
		return fmt.Errorf("function %s: need an Eval taking 1 or 2 arguments", f.Name)
	}
	l.funcs[f.Name] = f
	return nil
}

// RegisterDivergence adds a PYDT divergence-function constructor. It fails
// if the name is empty or taken, or it has no New.
func (l *Library) RegisterDivergence(d *DivergenceType) error {
	switch {
	case d == nil || d.Name == "":
		return fmt.Errorf("a divergence constructor needs a name")
	case l.taken(d.Name):
		return fmt.Errorf("%s is already defined in the library", d.Name)
	case d.New == nil:
		return fmt.Errorf("divergence constructor %s: need New", d.Name)
	}
	l.divs[d.Name] = d
	return nil
}

// RegisterVectorFunc adds a vector function (Softmax). It fails if the
// name is empty or taken. The function is kept as given, not copied: the
// node types that accept it (Fuser) know it by its pointer.
func (l *Library) RegisterVectorFunc(f *VectorFunc) error {
	switch {
	case f == nil || f.Name == "":
		return fmt.Errorf("a vector function needs a name")
	case l.taken(f.Name):
		return fmt.Errorf("%s is already defined in the library", f.Name)
	}
	l.vfs[f.Name] = f
	return nil
}

// VectorFunc returns the vector function called name.
func (l *Library) VectorFunc(name string) (*VectorFunc, bool) {
	f, ok := l.vfs[name]
	return f, ok
}

// VectorFuncNames lists the vector functions, sorted.
func (l *Library) VectorFuncNames() []string { return slices.Sorted(maps.Keys(l.vfs)) }

// NodeType returns the node type called name.
func (l *Library) NodeType(name string) (NodeType, bool) {
	t, ok := l.types[name]
	return t, ok
}

// Scalar returns the scalar node type called name.
func (l *Library) Scalar(name string) (Scalar, bool) {
	s, ok := l.types[name].(Scalar)
	return s, ok
}

// Func returns the deterministic function called name.
func (l *Library) Func(name string) (*Func, bool) {
	f, ok := l.funcs[name]
	return f, ok
}

// Divergence returns the divergence-function constructor called name.
func (l *Library) Divergence(name string) (*DivergenceType, bool) {
	d, ok := l.divs[name]
	return d, ok
}

// NodeTypeNames lists every name that may follow "~", sorted.
func (l *Library) NodeTypeNames() []string { return slices.Sorted(maps.Keys(l.types)) }

// ScalarNames lists the scalar node types, sorted.
func (l *Library) ScalarNames() []string {
	var names []string
	for name, t := range l.types {
		if _, ok := t.(Scalar); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// FuncNames lists the deterministic functions, sorted.
func (l *Library) FuncNames() []string { return slices.Sorted(maps.Keys(l.funcs)) }

// DivergenceNames lists the divergence-function constructors, sorted.
func (l *Library) DivergenceNames() []string { return slices.Sorted(maps.Keys(l.divs)) }

// Lookup returns the standard library's scalar node type called name.
func Lookup(name string) (Scalar, bool) { return std().Scalar(name) }

// DistNames lists the standard library's scalar node types, sorted.
func DistNames() []string { return std().ScalarNames() }

// NodeTypeNames lists every name of the standard library that may follow
// "~", sorted.
func NodeTypeNames() []string { return std().NodeTypeNames() }

// LookupFunc returns the standard library's deterministic function called
// name.
func LookupFunc(name string) (*Func, bool) { return std().Func(name) }

// FuncNames lists the standard library's deterministic functions, sorted.
func FuncNames() []string { return std().FuncNames() }

// LookupDivergence returns the standard library's divergence-function
// constructor called name.
func LookupDivergence(name string) (*DivergenceType, bool) { return std().Divergence(name) }
