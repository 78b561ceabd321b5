package main

import "math"

// batchMeansESS returns the effective sample size of x by batch means:
// n·var(x) / (b·var of the means of b-long batches), with the record cut
// into k batches of equal length (a tail shorter than a batch is dropped).
// With batches several autocorrelation times long it estimates the same
// quantity as Geyer's estimator by a different route, so their agreement
// bounds the error of either; with k batches the variance of the batch means
// has a relative standard error of about sqrt(2/(k-1)).
func batchMeansESS(x []float64, k int) float64 {
	b := len(x) / k
	if k < 2 || b < 1 {
		return math.NaN()
	}
	x = x[:k*b]
	m := mean(x)
	v := 0.0
	for _, y := range x {
		v += (y - m) * (y - m)
	}
	v /= float64(len(x) - 1)
	vb := 0.0
	for i := range k {
		d := mean(x[i*b:(i+1)*b]) - m
		vb += d * d
	}
	vb /= float64(k - 1)
	return float64(len(x)) * v / (float64(b) * vb)
}
