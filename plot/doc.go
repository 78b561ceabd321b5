// Package plot draws the pictures of a pydtlang run with gonum.org/v1/plot:
// the dendrogram of a summary tree, a 2-D data set with a tree drawn over
// it, trace plots, the co-clustering matrix as a heat map, and 2-D draws
// from the prior.
//
// Every picture is a *Figure, written as SVG or PNG (Figure.Save chooses by
// the file's extension). The figure functions take values (a tree, a trace,
// a matrix); Read* functions read the files a run writes, and RunFigures
// makes every picture of a run directory at once.
//
// Layout computes the coordinates of a dendrogram: divergence time across,
// one row per leaf, a branch point midway between its first and last child,
// so that a multifurcation is drawn as one vertical bar spanning all of its
// children.
package plot
