package inference

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// recorder is a reporter that keeps check's failures.
type recorder struct{ errs []string }

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// frozenStep is a step whose update returns at once: the frozen update
// that the Geweke tests' comparison of means alone could not see.
type frozenStep struct{ Updater }

func (frozenStep) update(*Chain) error { return nil }

// TestStepWatchFails checks that the Geweke tests' watch can fail: with
// the step of c replaced by one that never moves, stepWatch.check reports
// both that step and c itself, and with the schedule intact (the control)
// it reports nothing. lag1 is 1 for a chain that never changes and near 0
// for independent draws.
func TestStepWatchFails(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		t.Run(fmt.Sprintf("frozen=%v", frozen), func(t *testing.T) {
			m := compileModel(t, gaussianModel, 5, 2, nil)
			sched, err := NewSchedule(m)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			for i, st := range sched.Steps {
				if strings.HasSuffix(st.Name(), "(c)") {
					name = st.Name()
					if frozen {
						sched.Steps[i] = frozenStep{st}
					}
				}
			}
			if name == "" {
				t.Fatal("no step of c in the schedule")
			}
			w := watchSchedule(m, sched)
			ch, err := NewChain(m, sched, 3, 0)
			if err != nil {
				t.Fatal(err)
			}
			for range 200 {
				if err := ch.Sweep(); err != nil {
					t.Fatal(err)
				}
			}
			var r recorder
			w.check(&r)
			if !frozen {
				if len(r.errs) > 0 {
					t.Errorf("the working schedule fails the watch: %q", r.errs)
				}
				return
			}
			t.Logf("reports: %q", r.errs)
			var step, part bool
			for _, e := range r.errs {
				step = step || strings.Contains(e, name) && strings.Contains(e, "does not move")
				part = part || strings.HasPrefix(e, "c changed in 0 of 200 sweeps")
			}
			if !step || !part {
				t.Errorf("the frozen %s was not reported as a step and as c: %q", name, r.errs)
			}
		})
	}
	still := [][]float64{{1, 1, 1}, {2, 2, 2}}
	if r := lag1(still); r != 1 {
		t.Errorf("lag1 of chains that never change = %v, want 1", r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	iid := make([][]float64, 4)
	for k := range iid {
		for range 2500 {
			iid[k] = append(iid[k], rng.NormFloat64())
		}
	}
	// 1 − r is a mean of 9996 squared differences over 2 var: sd about
	// 0.015 for independent draws.
	if r := lag1(iid); !(math.Abs(r) < 0.06) {
		t.Errorf("lag1 of independent draws = %v, want near 0", r)
	}
}
