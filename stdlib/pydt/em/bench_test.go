package em

import (
	"testing"
)

// benchEM runs EM iterations (all hyperparameters learned) on the tree
// SequentialTree builds for PYDT data (not timed). Measured on this
// machine (one core): one iteration 0.06 s at N = 10³, 0.48 s at N = 10⁴
// (D = 10); 20 iterations at N = 10³, D = 2: 0.56 s.
func benchEM(b *testing.B, n, d, iters int) {
	x := pydtData(1, n, d)
	init := InitOptions{C: 0.5, Variance: 1, Alpha: 0.5, Beta: 0.1}
	b.StopTimer()
	for range b.N {
		_, m, err := SequentialTree(x, n, d, init)
		if err != nil {
			b.Fatal(err)
		}
		opt := learnAll()
		opt.Alpha, opt.Beta = 0.5, 0.1
		e, err := New(m, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for range iters {
			if _, err := e.Step(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(e.Bound(), "bound")
	}
}

func BenchmarkEMStep1e3D10(b *testing.B)   { benchEM(b, 1000, 10, 1) }
func BenchmarkEMStep1e4D10(b *testing.B)   { benchEM(b, 10000, 10, 1) }
func BenchmarkEM20Steps1e3D2(b *testing.B) { benchEM(b, 1000, 2, 20) }
