// Package stdlib is pydtlang's standard library of node types: the
// distributions a model file can use after "~" (Gamma, Beta, Normal, Probit,
// PYDT, ...), the deterministic functions it can call (log, exp, ...), and
// the divergence functions a PYDT node takes (DivInv, DivInvSq, DivNeal).
//
// Every node type is a Go type of its own, in a file of its own (Normal in
// normal.go, ...), implementing NodeType and, for an elementwise scalar
// distribution, Scalar; further capabilities (GammaPrior, ...) are small
// interfaces found by type assertion. A Library holds the node types,
// functions and divergence constructors by name; Default returns the
// standard one, and a program may register its own node types in a copy.
// The compiler (package graph) resolves names against the Library it is
// given; the inference engine uses the types' densities, samplers,
// supports and capabilities. See docs/architecture.md.
package stdlib
