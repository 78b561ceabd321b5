package inference

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/inference/treemove"
)

// TestLocalMovesSetting checks Config.LocalMoves end to end: the schedule's
// tree sweeps make the local moves asked for (none when off), run.json
// records the number, the acceptance table and summary.json list their
// rate, run --explain names them, and a run stopped and resumed goes on with
// the number it was started with, byte for byte as the uninterrupted run
// (a run.json without the field, written before local moves were a
// setting, resumes without them, as such runs were made).
func TestLocalMovesSetting(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	outputs := []string{TraceFile, TreesFile(1), TreesFile(2)}
	cases := []struct {
		name    string
		local   float64 // Config.LocalMoves
		want    float64 // local moves per leaf in run.json
		explain string  // in the tree step's explanation ("" for none)
		strip   bool    // remove the field from run.json before resuming
	}{
		{"default", 0, 1, "local moves (1 per leaf", false},
		{"off", -1, 0, "", false},
		{"2.5", 2.5, 2.5, "local moves (2.5 per leaf", false},
		{"off, run.json without the field", -1, 0, "", true},
	}
	traces := map[float64]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Iters: 20, Burn: 5, Chains: 2, Seed: 3, CheckpointEvery: 4, LocalMoves: tc.local, Out: t.TempDir()}
			res, err := Run(context.Background(), m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			whole := readAll(t, cfg.Out, outputs...)
			traces[tc.want] = whole
			var ri struct {
				Local *float64 `json:"local_moves_per_leaf"`
			}
			b, err := os.ReadFile(filepath.Join(cfg.Out, RunFile))
			if err != nil || json.Unmarshal(b, &ri) != nil || ri.Local == nil || *ri.Local != tc.want {
				t.Fatalf("run.json local_moves_per_leaf %v (%v), want %v", ri.Local, err, tc.want)
			}
			rate, ok := res.Acceptance["local"]
			if ok != (tc.want > 0) || (ok && !(rate > 0 && rate <= 1)) {
				t.Errorf("acceptance of the local moves %v (listed %v), want a rate in (0, 1] iff they are on: %v", rate, ok, res.Acceptance)
			}
			var sum Result
			if err := readJSONFile(filepath.Join(cfg.Out, SummaryFile), &sum); err != nil || sum.Acceptance["local"] != res.Acceptance["local"] {
				t.Errorf("summary.json acceptance %v (%v), result %v", sum.Acceptance, err, res.Acceptance)
			}
			var table bytes.Buffer
			if err := res.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(table.String(), " local ") != (tc.want > 0) {
				t.Errorf("the acceptance table lists the local moves %v, want %v:\n%s", !(tc.want > 0), tc.want > 0, table.String())
			}
			text, err := ExplainRun(m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text, "local moves ("); got != (tc.explain != "") || !strings.Contains(text, tc.explain) {
				t.Errorf("explain does not say %q:\n%s", tc.explain, text)
			}

			// Stop at 10 sweeps, resume to 20.
			cfg.Out, cfg.Iters = t.TempDir(), 10
			if _, err := Run(context.Background(), m, cfg); err != nil {
				t.Fatal(err)
			}
			if tc.strip {
				b, err := os.ReadFile(filepath.Join(cfg.Out, RunFile))
				if err != nil {
					t.Fatal(err)
				}
				var raw map[string]any
				if err := json.Unmarshal(b, &raw); err != nil {
					t.Fatal(err)
				}
				delete(raw, "local_moves_per_leaf")
				b, _ = json.Marshal(raw)
				if err := os.WriteFile(filepath.Join(cfg.Out, RunFile), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ResumeTo(context.Background(), m, cfg.Out, 20, nil); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, cfg.Out, outputs...); got != whole {
				t.Errorf("resumed run differs from the uninterrupted one")
			}
		})
	}
	if traces[0] == traces[1] || traces[1] == traces[2.5] {
		t.Error("runs with 0, 1 and 2.5 local moves per leaf wrote the same draws: the setting is not used")
	}
}

// TestLocalMovesRejected: a number of local moves that is not finite is a
// clear error, before any sweep.
func TestLocalMovesRejected(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := Run(context.Background(), m, Config{Iters: 10, LocalMoves: x, Out: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "local moves") {
			t.Errorf("LocalMoves %v: error %v", x, err)
		}
	}
	s, err := NewSchedule(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetLocalMoves(-1); err == nil {
		t.Error("SetLocalMoves(-1) accepted")
	}
}

// TestLocalGridSetting checks Config.LocalGrid end to end: run.json records
// it (and leaves it out for the uniform proposal, so that older run
// directories read as made), run --explain names the informed proposal,
// the draws differ from the uniform proposal's, and a run stopped and
// resumed goes on with it, byte for byte as the uninterrupted run. A
// negative value is a clear error.
func TestLocalGridSetting(t *testing.T) {
	m := compileWithData(t, gaussianModel, smallData, nil)
	outputs := []string{TraceFile, TreesFile(1), TreesFile(2)}
	traces := map[int]string{}
	for _, g := range []int{0, 2} {
		t.Run(fmt.Sprint(g), func(t *testing.T) {
			cfg := Config{Iters: 20, Burn: 5, Chains: 2, Seed: 3, CheckpointEvery: 4, LocalGrid: g, Out: t.TempDir()}
			res, err := Run(context.Background(), m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			whole := readAll(t, cfg.Out, outputs...)
			traces[g] = whole
			var raw map[string]any
			b, err := os.ReadFile(filepath.Join(cfg.Out, RunFile))
			if err != nil || json.Unmarshal(b, &raw) != nil {
				t.Fatalf("run.json: %v", err)
			}
			if got, ok := raw["local_grid"]; ok != (g > 0) || (ok && got != float64(g)) {
				t.Errorf("run.json local_grid %v (present %v), want %d", got, ok, g)
			}
			if rate := res.Acceptance["local"]; !(rate > 0 && rate <= 1) {
				t.Errorf("acceptance of the local moves %v", rate)
			}
			text, err := ExplainRun(m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text, "likelihood-informed proposal") != (g > 0) {
				t.Errorf("explain names the informed proposal %v, want %v:\n%s", !(g > 0), g > 0, text)
			}
			cfg.Out, cfg.Iters = t.TempDir(), 10
			if _, err := Run(context.Background(), m, cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := ResumeTo(context.Background(), m, cfg.Out, 20, nil); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, cfg.Out, outputs...); got != whole {
				t.Errorf("resumed run differs from the uninterrupted one")
			}
		})
	}
	if traces[0] == traces[2] {
		t.Error("runs with LocalGrid 0 and 2 wrote the same draws: the setting is not used")
	}
	for _, g := range []int{-1, treemove.MaxLocalGrid + 1} {
		_, err := Run(context.Background(), m, Config{Iters: 10, LocalGrid: g, Out: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "cells per edge") {
			t.Errorf("LocalGrid %d: error %v", g, err)
		}
		s, err := NewSchedule(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetLocalGrid(g); err == nil {
			t.Errorf("SetLocalGrid(%d): no error", g)
		}
	}
}
