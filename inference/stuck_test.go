package inference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clampedPrecModel has no ridge move (the variance is clamped), so a chain
// whose tree moves are disabled accepts nothing.
const clampedPrecModel = `
dim N, D
data X : real[N, D]
alpha ~ Gamma(2, 2)
beta ~ Beta(2, 3)
c ~ Gamma(3, 2)
prec ~ Gamma(3, 3)
X ~ PYDT(alpha, beta, c, 1 / prec)
`

// freeze drops the tree update from a chain's schedule: its tree never
// moves, as a chain frozen in a state no move can leave.
func freeze(ch *Chain) {
	sched := &Schedule{}
	for _, st := range ch.sched.Steps {
		if _, ok := st.(treeStep); !ok {
			sched.Steps = append(sched.Steps, st)
		}
	}
	ch.sched = sched
}

// TestStuckChain checks that a chain whose tree accepts no move for
// StuckSweeps sweeps is flagged in the table and summary.json, and that the
// run then fails with ErrStuck unless AllowStuck is set; a chain that moves
// is not flagged.
func TestStuckChain(t *testing.T) {
	x := tinyData(4, 8, 1)
	cases := []struct {
		name       string
		frozen     bool
		allow      bool
		wantErr    bool
		wantStuck  []int
		iters      int
		checkpoint int
	}{
		{"moving", false, false, false, nil, 150, 40},
		{"frozen", true, false, true, []int{1, 2}, 150, 40},
		{"frozen allowed", true, true, false, []int{1, 2}, 150, 40},
		{"frozen briefly", true, false, false, nil, 99, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.frozen {
				chainHook = freeze
				defer func() { chainHook = nil }()
			}
			m := compileData(t, clampedPrecModel, x, map[string]float64{"prec": 1})
			dir := t.TempDir()
			res, err := Run(context.Background(), m, Config{Iters: tc.iters, Chains: 2, Seed: 1, Out: dir,
				CheckpointEvery: tc.checkpoint, AllowStuck: tc.allow})
			if got := errors.Is(err, ErrStuck); got != tc.wantErr {
				t.Fatalf("error %v, want ErrStuck: %v", err, tc.wantErr)
			}
			if tc.wantErr && !strings.Contains(err.Error(), "--allow-stuck") {
				t.Errorf("error %q does not mention --allow-stuck", err)
			}
			if res == nil {
				t.Fatal("no result")
			}
			var sum struct {
				Stuck   []int `json:"stuck_chains"`
				Longest []int `json:"longest_stall_sweeps"`
			}
			b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if len(sum.Stuck) != len(tc.wantStuck) || len(sum.Longest) != 2 {
				t.Fatalf("summary.json: stuck %v, longest %v; want stuck %v", sum.Stuck, sum.Longest, tc.wantStuck)
			}
			for i, k := range tc.wantStuck {
				if sum.Stuck[i] != k {
					t.Errorf("stuck chains %v, want %v", sum.Stuck, tc.wantStuck)
				}
			}
			if tc.frozen && sum.Longest[0] != tc.iters {
				t.Errorf("longest stall %d, want %d", sum.Longest[0], tc.iters)
			}
			var table bytes.Buffer
			if err := res.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(table.String(), "STUCK: chain 1"); got != (len(tc.wantStuck) > 0) {
				t.Errorf("table flags stuck: %v, want %v:\n%s", got, len(tc.wantStuck) > 0, table.String())
			}
		})
	}
}

// TestStuckResume checks that the stall counters survive a checkpoint: a
// frozen run interrupted at sweep 60 and resumed to 150 is stuck exactly
// as an uninterrupted one.
func TestStuckResume(t *testing.T) {
	chainHook = freeze
	defer func() { chainHook = nil }()
	m := compileData(t, clampedPrecModel, tinyData(4, 8, 1), map[string]float64{"prec": 1})
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{Iters: 150, Chains: 1, Seed: 1, Out: dir, CheckpointEvery: 30, AllowStuck: false,
		Progress: func(done, _ int, _ float64) {
			if done == 60 {
				cancel()
			}
		}}
	if _, err := Run(ctx, m, cfg); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	res, err := Resume(context.Background(), m, dir, nil)
	if err == nil {
		t.Fatal("resumed run: no error")
	}
	if !errors.Is(err, ErrStuck) || len(res.Stuck) != 1 || res.LongestStall[0] < 150 {
		t.Fatalf("resumed run: %v, stuck %v, longest %v", err, res.Stuck, res.LongestStall)
	}
}

// TestTableReportsRefusals checks that the table says when proposals were
// refused as not finite, and when conditional updates were skipped (a
// variable kept its value), and stays silent otherwise.
func TestTableReportsRefusals(t *testing.T) {
	for _, n := range []int{0, 7} {
		res := &Result{Chains: 1, Iterations: 10, Completed: 10, Refused: n, Skipped: n, Acceptance: map[string]float64{"time": 1}}
		var b bytes.Buffer
		if err := res.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"refused 7 tree-move evaluations", "skipped 7 conditional updates"} {
			if got := strings.Contains(b.String(), want); got != (n > 0) {
				t.Errorf("refused and skipped %d: %q in table is %v:\n%s", n, want, got, b.String())
			}
		}
	}
}
