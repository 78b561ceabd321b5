package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pydtlang/pydtlang/inference"
)

// taskEnv names the environment variable that makes TestArrayTaskHelper
// a task of an array job: it holds the task's index, as
// SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX do, and taskArgsEnv the
// command line with the placeholder TASK for that index.
const (
	taskEnv     = "PYDTLANG_TEST_TASK"
	taskArgsEnv = "PYDTLANG_TEST_TASK_ARGS"
)

// TestArrayTaskHelper is one task of the array job that TestArrayJob
// starts as a separate process; it does nothing in a normal test run.
func TestArrayTaskHelper(t *testing.T) {
	task := os.Getenv(taskEnv)
	if task == "" {
		t.Skip("only run by TestArrayJob")
	}
	args := strings.Fields(strings.ReplaceAll(os.Getenv(taskArgsEnv), "TASK", task))
	var out, errOut strings.Builder
	if code := run(args, &out, &errOut); code != 0 {
		t.Fatalf("%v: status %d\n%s", args, code, errOut.String())
	}
}

// TestArrayJob follows docs/cluster-runs.md with local processes standing
// in for the tasks of a Slurm array or Kubernetes indexed Job: three
// processes, started together, each run one chain with --chain-offset set
// from its task index, and "summary --out" merges them. The merged
// summary.json (but its wall time and list of runs) and files must be
// those of one run with --chains 3. A run with other data is refused.
func TestArrayJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts helper processes")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	data := "r1,0.1,1.2\nr2,0.3,1.0\nr3,-1.1,0.2\nr4,-0.9,0.4\nr5,1.4,-0.8\nr6,1.2,-1.1\n"
	writeFiles(t, dir, map[string]string{"x.csv": data, "y.csv": strings.Replace(data, "0.1", "0.2", 1)})
	model := filepath.Join("..", "..", "examples", "gaussian.pydt")
	common := fmt.Sprintf("run %s --iters 24 --burn 8 --seed 5 --progress-every 0", model)
	code, _, errOut := runCmd(t, strings.Fields(common+" --data X="+p("x.csv")+" --chains 3 --out "+p("whole"))...)
	if code != 0 {
		t.Fatal(errOut)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for task := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestArrayTaskHelper$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", taskEnv, task),
				taskArgsEnv+"="+common+" --data X="+p("x.csv")+" --chains 1 --chain-offset TASK --out "+p("chain-TASK"))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[task] = fmt.Errorf("task %d: %v\n%s", task, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCmd(t, "summary", p("chain-0"), p("chain-1"), p("chain-2"), "--out", p("merged"))
	if code != 0 {
		t.Fatalf("summary: status %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "chain-2: chain 3\n") || !strings.Contains(out, "3 chains × 24 iterations") || !strings.Contains(out, "ASDSF") {
		t.Errorf("summary printed:\n%s", out)
	}
	read := func(path string) map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		delete(v, "wall_time_seconds")
		return v
	}
	merged, whole := read(p("merged/summary.json")), read(p("whole/summary.json"))
	if runs, ok := merged["runs"].([]any); !ok || len(runs) != 3 {
		t.Errorf("merged runs: %v", merged["runs"])
	}
	delete(merged, "runs")
	if !reflect.DeepEqual(merged, whole) {
		t.Errorf("merged summary.json\n%v\nwant the three-chain run's\n%v", merged, whole)
	}
	for _, name := range []string{inference.MapFile, inference.SummaryTreeFile, inference.MEAFile, inference.ConsensusFile, inference.CoclustFile} {
		a, err := os.ReadFile(p("whole/" + name))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p("merged/" + name)); err != nil || string(a) != string(b) {
			t.Errorf("merged %s differs from the three-chain run's (%v)", name, err)
		}
	}
	// A fourth chain run on other data is refused, naming the file.
	code, _, errOut = runCmd(t, strings.Fields(common+" --data X="+p("y.csv")+" --chains 1 --chain-offset 3 --out "+p("other"))...)
	if code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut = runCmd(t, "summary", p("chain-0"), p("other"))
	if code != 1 || !strings.Contains(errOut, "data X's SHA-256 differs") || !strings.Contains(errOut, p("other")) {
		t.Errorf("summary of other data: status %d\n%s", code, errOut)
	}
	if code, _, errOut = runCmd(t, "summary"); code != 2 {
		t.Errorf("summary without runs: status %d\n%s", code, errOut)
	}
	if code, _, errOut = runCmd(t, strings.Fields(common+" --data X="+p("x.csv")+" --chain-offset -1 --out "+p("neg"))...); code != 2 || !strings.Contains(errOut, "--chain-offset") {
		t.Errorf("negative offset: status %d\n%s", code, errOut)
	}
}
