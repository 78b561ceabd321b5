package cputime

import (
	"testing"
	"time"
)

// TestProcess checks that Process grows by the CPU time a busy loop takes.
// The loop runs until Process has grown by target, so that the test does
// not depend on the machine's load (a bound of a tenth of the loop's wall
// time failed at a load above about 20 on two cores); it fails when
// Process has not grown by target after limit of wall time spent busy, a
// share of the CPU under 1/1000, which no working clock gives. When CPU
// time is measured, it must be at most the loop's wall time plus the other
// goroutines' share (bounded loosely by twice the wall time, with a clock
// tick of slack).
func TestProcess(t *testing.T) {
	const target, limit = 30 * time.Millisecond, 30 * time.Second
	c0, w0 := Process(), time.Now()
	x := 0.0
	for Process()-c0 < target && time.Since(w0) < limit {
		for i := range 10000 {
			x += float64(i)
		}
	}
	wall, cpu := time.Since(w0), Process()-c0
	if x == 0 {
		t.Fatal("the loop did nothing")
	}
	if cpu < target {
		t.Errorf("a busy loop of %v wall time: %v CPU time, want at least %v", wall, cpu, target)
	}
	if Measured() && cpu > 2*wall+20*time.Millisecond {
		t.Errorf("a busy loop of %v wall time: %v CPU time", wall, cpu)
	}
}
