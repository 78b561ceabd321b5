package inference

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pydtlang/pydtlang/dataset"
)

// TestPlanEMNoise plans EM for a latent observation noise: the shared
// noise of examples/gaussian-noise.pydt (refused before: "latent variable
// noise") and one per column (examples/gaussian-colnoise.pydt,
// gaussian-perdim-noise.pydt), learned as q(noise) under the prior
// Gamma(1, 1), with the data as evidence means and unit precisions 1
// (Normal's evidence precision is noise itself), missing entries skipped.
func TestPlanEMNoise(t *testing.T) {
	x := noisyClusters(10, 0.3, 4, 1)
	x.Data[4] = math.NaN()
	for _, tc := range []struct {
		model  string
		groups int
		want   string
	}{
		{"gaussian-noise.pydt", 1, "q(noise) Gamma: variational posterior of the noise precision of the Normal likelihood of X,"},
		{"gaussian-colnoise.pydt", 3, "q(noise[d]) Gamma for each column d"},
		{"gaussian-perdim-noise.pydt", 3, "q(noise[d]) Gamma for each column d"},
	} {
		p, err := PlanEM(compileExampleFile(t, tc.model, map[string]*dataset.Matrix{"X": x}))
		if err != nil {
			t.Fatalf("%s: PlanEM: %v", tc.model, err)
		}
		ln := p.Opt.Noise
		if p.Noise == nil || p.Noise.Name != "noise" || ln == nil || len(ln.Priors) != tc.groups || len(ln.Starts) != tc.groups {
			t.Fatalf("%s: plan: Noise %v, Opt.Noise %+v", tc.model, p.Noise, ln)
		}
		for g, pr := range ln.Priors {
			if pr.Shape != 1 || pr.Rate != 1 || ln.Starts[g] != 1 {
				t.Errorf("%s: prior %d %+v, start %v; want Gamma(1, 1) from its mean", tc.model, g, pr, ln.Starts[g])
			}
		}
		for k, y := range x.Data {
			switch {
			case math.IsNaN(y) && ln.Unit[k] != 0:
				t.Errorf("%s: missing entry %d has unit precision %v", tc.model, k, ln.Unit[k])
			case !math.IsNaN(y) && (ln.Unit[k] != 1 || ln.Mean[k] != y):
				t.Errorf("%s: entry %d: mean %v, unit %v; want %v, 1", tc.model, k, ln.Mean[k], ln.Unit[k], y)
			}
		}
		if ex := p.Explain(); !strings.Contains(ex, "Gaussian leaf evidence of Normal at precision E[noise") {
			t.Errorf("%s: Explain's E-step does not name the noise:\n%s", tc.model, ex)
		}
		if ex := p.Explain(); !strings.Contains(ex, tc.want) {
			t.Errorf("%s: Explain does not say %q:\n%s", tc.model, tc.want, ex)
		}
	}
}

// TestPlanEMNoiseRefused checks that a noise EM cannot fit is refused,
// naming the variable and why: not conjugate (sd itself latent), a prior
// that is not Gamma, a noise array that is not one per column.
func TestPlanEMNoiseRefused(t *testing.T) {
	x := fourClusters(8, 0.3, 1)
	head := "dim N, D\ndata X : real[N, D]\nparam Z : real[N, D]\nZ ~ PYDT(1, 0.2, 1, 1)\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"sd latent", head + "sd ~ Gamma(2, 2)\nX ~ Normal(Z, sd)", "latent variable sd"},
		{"beta prior", head + "noise ~ Beta(2, 2)\nX ~ Normal(Z, 1 / sqrt(noise))", "EM needs a Gamma prior"},
		{"per row", head + "param noise : pos[N]\nnoise ~ Gamma(1, 1)\nfor i in 1:N, d in 1:D {\n  X[i, d] ~ Normal(Z[i, d], 1 / sqrt(noise[i]))\n}", "one precision per column"},
	} {
		m := compileSource(t, tc.name, []byte(tc.src), map[string]*dataset.Matrix{"X": x}, nil)
		_, err := PlanEM(m)
		if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: PlanEM: %v, want an ErrUnsupported saying %q", tc.name, err, tc.want)
		}
	}
}

// TestRunEMNoise runs EM with a noise precision per column on four
// clusters in two columns (bounded noise ±0.25) beside a third column of
// pure noise on a larger scale (uniform ±2): summary.json reports
// q(noise[d]) for every column, in gamma_posteriors and every
// kbest_estimates entry, and the pure-noise column's noise precision is
// far below the cluster columns'. The shared noise of gaussian-noise.pydt
// is reported as q(noise).
func TestRunEMNoise(t *testing.T) {
	x := noisyClusters(32, 0.25, 2, 3)
	for _, tc := range []struct {
		model string
		names []string
	}{
		{"gaussian-colnoise.pydt", []string{"noise[1]", "noise[2]", "noise[3]"}},
		{"gaussian-noise.pydt", []string{"noise"}},
	} {
		m := compileExampleFile(t, tc.model, map[string]*dataset.Matrix{"X": x})
		dir := t.TempDir()
		res, err := RunEM(context.Background(), m, EMConfig{Rounds: 6, Patience: -1, Seed: 1, Out: dir, EMIters: 30})
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Gamma map[string]GammaSummary `json:"gamma_posteriors"`
			KBest []EMEstimates           `json:"kbest_estimates"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, len(tc.names))
		for k, name := range tc.names {
			g, ok := sum.Gamma[name]
			if !ok || !(g.Mean > 0) || math.Abs(g.Mean-g.Shape/g.Rate) > 1e-12*g.Mean {
				t.Fatalf("%s: summary.json's posterior of %s: %+v, %v", tc.model, name, g, ok)
			}
			mean[k] = g.Mean
			for j, e := range sum.KBest {
				if _, ok := e.Gamma[name]; !ok {
					t.Errorf("%s: kbest_estimates[%d] has no %s", tc.model, j, name)
				}
			}
		}
		if len(sum.KBest) != len(res.Trees) {
			t.Errorf("%s: %d kbest_estimates for %d trees", tc.model, len(sum.KBest), len(res.Trees))
		}
		if len(mean) == 3 && !(mean[2] < mean[0]/5 && mean[2] < mean[1]/5) {
			t.Errorf("%s: E[noise] = %v: the pure-noise column's precision is not well below the cluster columns'", tc.model, mean)
		}
		t.Logf("%s: E[noise] %v; best tree %s", tc.model, mean, res.Trees[0].Tree.Newick())
	}
}

// TestRestoreDamagedCheckpointNoise checks the latent noise in the EM
// checkpoint: every kept tree has one E[noise[d]] and one q(noise[d]) per
// column, and a damaged one is refused naming the field.
func TestRestoreDamagedCheckpointNoise(t *testing.T) {
	x := noisyClusters(12, 0.3, 4, 2)
	m := compileExampleFile(t, "gaussian-colnoise.pydt", map[string]*dataset.Matrix{"X": x})
	want := func(cp *emCheckpoint) error {
		if h := cp.Trees[0].Hyper; len(h.Noise) != 3 || len(h.QNoise) != 3 {
			return fmt.Errorf("hyperparameters %+v, want three noise precisions and q(noise[d])", h)
		}
		return nil
	}
	checkDamagedCheckpoint(t, m, EMConfig{Rounds: 2, Patience: -1, Seed: 1, EMIters: 3, ABSweeps: -1}, want, []checkpointDamage{
		{"trees[0].hyperparameters: noise_precisions has 2 values, q_noise 3", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Noise = cp.Trees[0].Hyper.Noise[:2] }},
		{"trees[0].hyperparameters: noise_precisions has 3 values, q_noise 0", func(cp *emCheckpoint) { cp.Trees[0].Hyper.QNoise = nil }},
		{"trees[0].hyperparameters: q_noise[1] has shape -1", func(cp *emCheckpoint) { cp.Trees[0].Hyper.QNoise[1].Shape = -1 }},
		{"trees[0].hyperparameters: noise_precisions[2] is 7, not the mean", func(cp *emCheckpoint) { cp.Trees[0].Hyper.Noise[2] = 7 }},
	})
}
