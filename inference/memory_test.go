package inference

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// liveHeap returns the bytes of heap in use after a full collection:
// what the program holds, not what it has yet to free.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// memoryRows returns n deterministic rows of four-cluster 2-D data.
func memoryRows(n int) [][]float64 {
	rng := rand.New(rand.NewPCG(8, 3))
	rows := make([][]float64, n)
	for i := range rows {
		cx, cy := float64(i%2)*3, float64(i/2%2)*3
		rows[i] = []float64{cx + 0.3*rng.NormFloat64(), cy + 0.3*rng.NormFloat64()}
	}
	return rows
}

// memoryGrowthBound is the live heap a run of 4K kept sweeps may hold
// beyond one of K (issue 8, item 3): well above the trace points and the
// noise of the runtime, and below what holding the extra 3K kept trees
// would take: keeping just their Newick text (40 rows) raised the peak by
// 1.7 MB, and keeping the parsed trees in the summary by 7 MB or more.
const memoryGrowthBound = 1 << 20

// TestRunMemoryDoesNotGrowWithIterations checks that a run's live heap,
// measured after a full collection every fourth sweep (no timing involved),
// is the same for K and 4K kept sweeps: the kept trees go to the tree
// files and are never held together, and every per-sweep accumulator is
// of fixed size.
func TestRunMemoryDoesNotGrowWithIterations(t *testing.T) {
	m := compileWithData(t, gaussianModel, memoryRows(40), nil)
	const burn, k = 20, 100
	peak := func(kept int) uint64 {
		var hi uint64
		cfg := Config{Iters: burn + kept, Burn: burn, Chains: 1, Seed: 5, Out: t.TempDir(), CheckpointEvery: 50,
			Progress: func(done, total int, _ float64) {
				if done%4 != 0 && done != total {
					return
				}
				if h := liveHeap(); h > hi {
					hi = h
				}
			}}
		if _, err := Run(context.Background(), m, cfg); err != nil {
			t.Fatal(err)
		}
		return hi
	}
	short, long := peak(k), peak(4*k)
	t.Logf("peak live heap: %d kept sweeps %d B, %d kept sweeps %d B", k, short, 4*k, long)
	if long > short+memoryGrowthBound {
		t.Errorf("live heap grows with the run: %d B for %d kept sweeps, %d B for %d (bound +%d B)",
			long, 4*k, short, k, memoryGrowthBound)
	}
}

// TestSummaryMemoryDoesNotGrowWithTrees checks that the tree summaries
// (clade counts, co-clustering, MEA and consensus trees) hold memory for
// the distinct clades, not for the trees: replaying the same K trees four
// times (4K trees, the same distinct clades) must not raise the live heap,
// measured after a full collection every 16th tree read.
func TestSummaryMemoryDoesNotGrowWithTrees(t *testing.T) {
	m := compileWithData(t, gaussianModel, memoryRows(40), nil)
	dir := t.TempDir()
	if _, err := Run(context.Background(), m, Config{Iters: 120, Burn: 20, Chains: 1, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	file := NewickFiles(40, nil, filepath.Join(dir, TreesFile(1)))
	peak := func(replays int) uint64 {
		var hi uint64
		read := 0
		src := func(fn func(*pydt.Tree) error) error {
			for range replays {
				if err := file(func(tr *pydt.Tree) error {
					if read++; read%16 != 0 {
						return fn(tr)
					}
					if h := liveHeap(); h > hi {
						hi = h
					}
					return fn(tr)
				}); err != nil {
					return err
				}
			}
			return nil
		}
		s, err := SummarizeChains([]TreeSource{src, src}, m.N, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.Clades.Trees(), 2*100*replays; got != want {
			t.Fatalf("summarised %d trees, want %d", got, want)
		}
		return hi
	}
	short, long := peak(1), peak(4)
	t.Logf("peak live heap while summarising: 200 trees %d B, 800 trees %d B", short, long)
	if long > short+memoryGrowthBound {
		t.Errorf("summary memory grows with the trees: %d B for 800 trees, %d B for 200 (bound +%d B)",
			long, short, memoryGrowthBound)
	}
}
