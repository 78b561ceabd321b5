// Package stdlib is pydtlang's standard library of node types: the
// distributions a model file can use after "~" (Gamma, Beta, Normal, Probit,
// PYDT, ...), the deterministic functions it can call (log, exp, ...), and
// the divergence functions a PYDT node takes (DivInv, DivInvSq, DivNeal).
//
// Every node type lives in a file of its own and registers itself, so a new
// distribution adds one file. The compiler (package graph) looks node types
// up by name with Lookup, and the inference engine uses their densities,
// samplers and supports.
package stdlib
