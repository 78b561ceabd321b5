package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pydtlang/pydtlang/inference"
)

// lineProgress reports a run's progress as plain lines, one every
// interval at most, for a stderr that is not a terminal (a log file, a
// batch job), as CmdStan prints "Iteration: 100 / 2000":
//
//	Iteration: 1200 / 4000 [ 30%]  41.2 sweeps/s  ETA 1m8s  log joint -1234.56 (chain 1)
//
// The rate is over the sweeps of this process (a resumed run starts
// counting where it resumed).
type lineProgress struct {
	w        io.Writer
	interval time.Duration
	now      func() time.Time

	start, last time.Time
	first       int // sweeps done when the first report came
	started     bool
	// chain is the number of the run's first chain, whose log joint is
	// reported (1, or --chain-offset + 1), read from dir's run.json (when
	// dir is set) at the first report.
	chain int
	dir   string
}

func newLineProgress(w io.Writer, interval time.Duration) *lineProgress {
	return &lineProgress{w: w, interval: interval, now: time.Now, chain: 1}
}

// report is the Config.Progress callback.
func (p *lineProgress) report(done, total int, logJoint float64) {
	t := p.now()
	if !p.started {
		// The first report comes after the first sweep: time is measured
		// from it, and nothing is printed.
		p.start, p.last, p.first, p.started = t, t, done, true
		if p.dir != "" {
			if ri, err := inference.ReadRun(p.dir); err == nil {
				p.chain = ri.ChainOffset + 1
			}
		}
		return
	}
	if t.Sub(p.last) < p.interval && done < total {
		return
	}
	if done >= total && p.last == p.start {
		return // a run shorter than one interval prints nothing
	}
	p.last = t
	pct := 100 * float64(done) / float64(max(total, 1))
	line := fmt.Sprintf("Iteration: %d / %d [%3.0f%%]", done, total, pct)
	if el := t.Sub(p.start).Seconds(); el > 0 && done > p.first {
		rate := float64(done-p.first) / el
		eta := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf("  %.3g sweeps/s  ETA %v", rate, eta)
	}
	fmt.Fprintf(p.w, "%s  log joint %.6g (chain %d)\n", line, logJoint, p.chain)
}
