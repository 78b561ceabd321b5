// Package logsumexp computes log Σ exp(x_i) stably, for the packages that
// normalise log weights (stdlib/pydt's divergence sums, inference/predict's
// mixtures, stdlib/softmaxleaf).
package logsumexp

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// Of returns log Σ exp(x_i), computed stably by gonum's floats.LogSumExp
// (the largest term taken out): -Inf for no terms (where floats.LogSumExp
// panics), +Inf when a term is +Inf, NaN when any term is NaN.
func Of(x []float64) float64 {
	if len(x) == 0 {
		return math.Inf(-1)
	}
	return floats.LogSumExp(x)
}
