package cputime

import (
	"testing"
	"time"
)

// TestProcess checks that Process grows by about the CPU time a busy loop
// takes: at least a tenth of the loop's wall time (the machine may be
// shared) and, when CPU time is measured, at most its wall time plus the
// other goroutines' share (bounded loosely by twice the wall time, with a
// clock tick of slack).
func TestProcess(t *testing.T) {
	c0, w0 := Process(), time.Now()
	x := 0.0
	for time.Since(w0) < 50*time.Millisecond {
		for i := range 1000 {
			x += float64(i)
		}
	}
	wall, cpu := time.Since(w0), Process()-c0
	if x == 0 {
		t.Fatal("the loop did nothing")
	}
	if cpu < wall/10 {
		t.Errorf("a busy loop of %v wall time: %v CPU time", wall, cpu)
	}
	if Measured() && cpu > 2*wall+20*time.Millisecond {
		t.Errorf("a busy loop of %v wall time: %v CPU time", wall, cpu)
	}
}
