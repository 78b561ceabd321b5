//go:build unix

package inference

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// killHelperEnv tells the test binary, started again by TestKillNineAndResume,
// to run TestKillHelper: "run|resume,DIR,K" runs (or resumes) the run of
// killConfig in DIR and sends itself SIGKILL after sweep K.
const killHelperEnv = "PYDTLANG_KILL_HELPER"

// killConfig is the run that TestKillNineAndResume kills: enough rows
// between checkpoints to fill the output buffers several times.
func killConfig(dir string) Config {
	return Config{Iters: 60, Burn: -1, Chains: 2, Seed: 11, CheckpointEvery: 40, Impute: true, Out: dir}
}

// TestKillHelper is the process that TestKillNineAndResume kills; it does
// nothing in a normal test run.
func TestKillHelper(t *testing.T) {
	spec := os.Getenv(killHelperEnv)
	if spec == "" {
		t.Skip("only run by TestKillNineAndResume")
	}
	parts := strings.Split(spec, ",")
	killAt, _ := strconv.Atoi(parts[2])
	m := compileWithData(t, gaussianModel, smallData, nil)
	progress := func(done, _ int, _ float64) {
		if done == killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	cfg := killConfig(parts[1])
	cfg.Progress = progress
	var err error
	if parts[0] == "run" {
		_, err = Run(context.Background(), m, cfg)
	} else {
		_, err = Resume(context.Background(), m, cfg.Out, progress)
	}
	t.Fatalf("not killed at sweep %d: %v", killAt, err)
}

// TestKillNineAndResume kills a run with SIGKILL before its first
// checkpoint (at sweeps 3 and 30) and after it (sweep 50), checking after
// each kill that every output file holds whole rows only, and resuming
// each time; the finished run must equal an uninterrupted one byte for
// byte.
func TestKillNineAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts helper processes")
	}
	m := compileWithData(t, gaussianModel, smallData, nil)
	outputs := []string{TraceFile, TreesFile(1), TreesFile(2), MapFile, ImputeFile, SummaryTreeFile, ConsensusFile, CoclustFile}
	want := t.TempDir()
	if _, err := Run(context.Background(), m, killConfig(want)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, kill := range []int{3, 30, 50} {
		mode := "resume"
		if i == 0 {
			mode = "run"
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$")
		cmd.Env = append(os.Environ(), killHelperEnv+"="+mode+","+dir+","+strconv.Itoa(kill))
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("helper (%s, kill at %d) was not killed: %v\n%s", mode, kill, err, out)
		}
		checkWholeRows(t, dir, kill)
	}
	if _, err := Resume(context.Background(), m, dir, nil); err != nil {
		t.Fatal(err)
	}
	if got, w := readAll(t, dir, outputs...), readAll(t, want, outputs...); got != w {
		t.Fatalf("killed and resumed run differs from the uninterrupted one:\n%s\n---\n%s", got[:min(len(got), 1500)], w[:min(len(w), 1500)])
	}
}

// checkWholeRows checks what a reader of a killed run's directory sees:
// files that end at a row's end, rows with the header's number of fields,
// trees that parse.
func checkWholeRows(t *testing.T, dir string, kill int) {
	t.Helper()
	for _, name := range []string{TraceFile, ImputeFile, TreesFile(1), TreesFile(2)} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("after a kill at sweep %d: %v", kill, err)
		}
		if len(b) == 0 {
			continue
		}
		if b[len(b)-1] != '\n' {
			t.Errorf("after a kill at sweep %d, %s ends in half a row: %q", kill, name, b[max(0, len(b)-60):])
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if strings.HasPrefix(name, "trees-") {
			for _, l := range lines {
				if _, err := pydt.ParseNewick(l, nil); err != nil {
					t.Errorf("after a kill at sweep %d, %s: %v", kill, name, err)
				}
			}
			continue
		}
		n := strings.Count(lines[0], ",")
		for _, l := range lines[1:] {
			if strings.Count(l, ",") != n {
				t.Errorf("after a kill at sweep %d, %s has a ragged row %q", kill, name, l)
			}
		}
	}
}
