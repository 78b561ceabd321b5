// Package lang is the front end of pydtlang, the modelling language for
// Bayesian hierarchical clustering with the Pitman-Yor diffusion tree.
//
// It turns source text into an abstract syntax tree, reports syntax errors
// with positions and caret diagnostics, and prints trees back in a
// canonical layout.
//
// # Syntax
//
// A file is a sequence of statements, separated by newlines or ";":
//
//	dim N, D                      # dimension names
//	const K = 10                  # compile-time constant
//	data X : real[N, D]           # observed variable
//	param Z : categorical(K)[N]   # latent variable with a shape
//	alpha ~ Gamma(2, 0.5)         # stochastic assignment
//	mu = alpha / 2                # deterministic assignment
//	for i in 1:N, d in 1:D {      # loops over inclusive, 1-based ranges
//	  X[i, d] ~ Normal(mu, 1)
//	}
//
// Types have a kind (real, binary, count, categorical, int, pos or unit),
// an optional kind argument and optional dimensions. Expressions have
// numbers, names, calls with positional and named arguments
// (PYDT(alpha = a, beta = b, divergence = c, variance = v)), indexing and
// the operators below, loosest first:
//
//	a + b, a - b    left associative
//	a * b, a / b    left associative
//	a^b             right associative
//	-a              prefix; binds tighter than ^, so -x^2 is (-x)^2
//
// Comments run from "#" or "//" to the end of the line. The reserved words
// are dim, const, data, param, for and in.
//
// # Parsing and diagnostics
//
// Parse returns a *File and, on failure, an ErrorList holding every syntax
// error in the file, not just the first: the parser resynchronises at the
// next statement and carries on. ErrorList.Format prints each error with
// its source line and a caret. Suggest provides "did you mean" hints for
// later stages, such as the compiler's checks of names.
//
// Parse bounds what any later stage must handle, so that no file can
// exhaust the stack or take time quadratic in its size: a statement has at
// most MaxStatementTokens tokens (so no expression tree, not even a long
// chain a + b + c + ..., nests deeper), brackets and prefix operators nest
// at most 200 deep, and at most MaxLoopIndices loop indices are in scope.
// Walk, Format and the compiler recurse over trees from Parse safely; a
// tree built by hand should respect the same bounds. A byte order mark at
// the start of the source is skipped, and a lone "\r" ends a line.
//
// The grammar itself is written for participle (see grammar.go) and parses
// one statement at a time; parser.go supplies block structure, recovery
// and comment placement around it.
//
// # Formatting
//
// Format prints a tree canonically and FormatSource does the same for
// source text. Comments are attached to statements (Trivia) so that they
// survive formatting, and the output is a fixed point of the formatter.
package lang
