package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/inference"
	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

func newRun() *cobra.Command {
	var (
		b       bindings
		cfg     inference.Config
		explain bool
		resume  string
		burn    int
		local   float64
		force   bool
		stdz    bool
		method  string
		emc     inference.EMConfig
		// initTrees are the --init-tree values, FILE or V=FILE.
		initTrees []string
	)
	cmd := &cobra.Command{
		Use:   "run MODEL --data NAME=FILE... [--iters N --burn B --thin T --chains C --seed S] --out DIR [--force]",
		Short: "Fit a model by MCMC (posterior trees and hyperparameters) or by EM (--method em: one good tree, fast)",
		Long: `run samples the posterior of a model's tree and latent variables by MCMC.

The engine chooses an update for each latent variable, scalar or array, from
the capabilities of the factors around it (run --explain prints the choice
and why): the paper's subtree move with slice moves of divergence times and
of re-attachment positions for the tree, and local moves that re-attach a
subtree within two edges of where it was (--local-moves per leaf per sweep,
1 by default; 0 turns them off; --local-grid G proposes their new point from
the likelihood at G points per edge near the old one; run.json records both
and a resumed run keeps them), conjugate Gibbs updates where a
Gamma prior meets factors conjugate in it (c of the divergence function, a
precision written 1 / sqrt(tau) in a Normal, a Gamma's rate; element by
element for arrays; the PYDT's precision, variance 1 / prec, given the tree
with the locations integrated out when the data are the leaves), slice sampling (log, logit or real scale) for everything
else, element by element for arrays, and data
augmentation for a likelihood that asks for it (Probit's truncated-normal
auxiliaries, StudentT's precision scales). For Probit the precision is
slice sampled with the locations integrated out, and moves of several
variables at once keep chains from crawling along the directions the binary
data hardly determine (see docs/probit-mixing.md): three scale moves
(auxiliaries with the variance, locations with the variance, times with c);
orbit(prec, times, u), which moves σ²/(σ²+1) by a factor h, every divergence
time t to t/h and the auxiliaries with them so that their likelihood is
unchanged, h drawn from the priors alone; ghk(prec, u), the variance given
the auxiliaries' non-centred coordinates; and hmc(u), the auxiliaries drawn
afresh given the tree and the variance by exact HMC. A hidden Markov chain over categories
(z[1] ~ Categorical(p0), z[t] ~ Categorical(A[z[t - 1]])) gets ffbs(z),
forward filtering and backward sampling of the whole chain, and Dirichlet
vectors or rows read only by Categoricals get conjugate Gibbs updates
(gibbs(trans[k])); PYDT leaves read through the states (mu[z[t], d]) get
the evidence of the data assigned to each state (examples/hmm-gaussian.pydt;
states have no fixed labels: the summary aligns them, see below). PYDT
leaves read as the logits of categoricals (w[t] ~
Categorical(softmax(eta[z[t]])), examples/hmm-pos.pydt) are latent values
the tree observes exactly: softmax-leaf(eta) draws each row exactly given
the tree's message and the counts of the categories it emits, and ffbs(z)
takes the emissions from each state's log-softmax. Internal locations are integrated out by belief
propagation; missing data are marginalised. A latent variable no update can
serve (another discrete one) is an error naming it, before any sweep. trace.csv
lists every latent scalar and every element of every latent array (prec[1],
"w[1,2]"), as drawn (not aligned), but a categorical latent array z (z :
categorical(K)[T]): it has the column occupied(z), the number of states in
use, and its draws go to draws-z-K.csv.

Each chain runs --iters sweeps; the first --burn of them (default: half of
--iters; --burn 0 for none) are discarded and tune the slice widths, and
every --thin-th sweep after them is kept. --tree-thin K writes the tree of
every K-th kept sweep only (kept sweeps K, 2K, ...), so that tree files stay
small on long runs (about 15 kB per tree and chain at N = 500); trace.csv
keeps every kept sweep, and the tree summaries, cut and predict use the trees
written. --iters, --thin, --chains and
--checkpoint-every must be at least 1.

Chains run in parallel with independent streams; the same --seed gives the
same output. Each chain starts from a draw of the prior, --set values kept,
restricted to where the PYDT's parameters are valid (alpha >= -2 beta): with
--set alpha=-1.5 and beta ~ Beta(1, 1), beta starts at 0.75 or more.

It writes to DIR, as it goes:
  trace.csv        chain,iteration,log_joint,log_lik and every latent scalar,
                   one row per kept iteration per chain; for a Probit
                   likelihood, log_lik is the log density of the auxiliary
                   variables u with the latent locations integrated out (the
                   sampler's augmented target), not of the binary data
  trees-K.nwk      the kept trees of chain K (Newick, diffusion-time lengths)
  draws-Z-K.csv    for a categorical latent array Z: chain K's kept draws of
                   Z, raw as drawn, one row per kept iteration:
                   iteration,states with the states of Z's elements
                   separated by spaces ("51,1 1 3 2"); the summary aligns
                   them (see states-Z.csv). trace.csv has occupied(Z) in
                   their place, so that it stays narrow at T = 10^5
  summary.nwk      the summary tree: the average-linkage (UPGMA) tree of the
                   posterior mean LCA times of coclust.csv, i.e. the tree
                   whose LCA times best fit their posterior means, which
                   approximately minimises the expected squared error of
                   the LCA times over pairs of rows. Fully resolved except
                   for ties; written with coclust.csv
  mea.nwk          the kept tree of maximum expected clade accuracy: the one
                   that maximises the expected number of its clades that
                   are in the true tree minus the expected number that are
                   not, the sum over its clades of 2p - 1, where p is a
                   clade's posterior probability (its frequency in the kept
                   trees of all chains). A clade with p < 1/2 costs more than
                   it gains, so it multifurcates where the posterior is unsure
  consensus.nwk    the majority-rule consensus, the clades with p > 1/2: the
                   maximiser of the same sum over all trees. It can be a star
                   when no clade is in most kept trees
                   In summary.nwk, mea.nwk and consensus.nwk each branch
                   point is labelled with its clade's p (ape: node.label;
                   Bio.Phylo: confidence); in the last two it is at the
                   posterior mean time of the most recent common ancestor of
                   its leaves
  coclust.csv      for every pair of rows, the posterior mean time of their
                   lowest common ancestor (an N x N matrix with row names; 1
                   on the diagonal; 1 - it is a distance for clustering and
                   heat maps). Written for up to 2000 rows, and above that
                   with --coclust (memory about 10·N² bytes, file 10·N²)
  map.nwk          the tree of the state of highest log joint density with
                   the times in s = -log(1-t) (log_joint, the density in t
                   that score prints, less the sum of s over the branch
                   points; in t the mode can be a state with times within
                   1e-20 of 1). One state: read summary.nwk first. Not
                   written for an augmented (Probit, StudentT)
                   likelihood: its log joint is that of the augmented state
                   (one draw of the auxiliaries u), which is not comparable
                   across states, and p(Y | tree) has no closed form
  summary.json     mean, sd, 5/50/95% quantiles, split R-hat and bulk/tail ESS
                   of every scalar; acceptance rates (the tree moves, the
                   ridge, and Metropolis steps such as ghk(prec, u) under
                   their schedule names); stuck chains; wall time
  states-Z.csv     for a categorical latent array Z (z : categorical(K)):
                   t,state,prob, each element's modal state once every kept
                   draw's states are aligned to the kept draw of highest
                   log_joint (Hungarian matching of the two draws' states).
                   The variables whose axes Z's values label (pi0[k],
                   trans[j,k]) are permuted alike and reported aligned in the
                   table and in summary.json ("aligned"), with R-hat and ESS
                   of the aligned draws; the raw draws of Z are not
                   summarised (occupied(Z), the number of states in use,
                   is), and the warnings use only aligned and label-invariant
                   columns. A PYDT whose leaves are the states (mu[z[t], d])
                   has its tree summaries (summary.nwk, mea.nwk,
                   consensus.nwk, coclust.csv, credibilities, ASDSF) made
                   with each kept tree's leaves renamed by its draw's
                   permutation, so leaf k is aligned state k. trace.csv,
                   trees-K.nwk and map.nwk stay raw
  impute.csv       with --impute: draws of the missing data entries (in a
                   model with several PYDTs, of the first PYDT's data;
                   impute-V.csv holds those of the data at the leaves of
                   each further PYDT V)
  checkpoint.json  the state after the last checkpoint (written atomically)
  run.json         the settings, the command line's model, data and --set,
                   and the SHA-256 of the model and data files (both JSON
                   files carry a "version"; formats: docs/architecture.md)

A DIR that already holds a run (a run.json) is refused: continue that run
with --resume DIR, or pass --force to delete its output files first (files
of other names are kept). So is a DIR with a file of one of the names above
but no run.json, rather than overwrite someone else's file. One run at a
time writes to a DIR: a run, --resume and --force hold a lock on DIR/.lock
(flock; none on Windows) until they end, and a second one is refused with
the first one's process id.

No state whose log density float64 cannot evaluate (NaN or +Inf) is ever
accepted; should a chain's state become non-finite anyway, the run stops with
an error naming the part of the model and what to try. A chain whose tree
accepts no move for 100 consecutive sweeps is STUCK: the table and
summary.json (stuck_chains, longest_stall_sweeps) say so, and the run exits
with status 1 unless --allow-stuck is given. With data observed without noise
(X ~ PYDT(...)) and exactly duplicated rows, the posterior can be improper
(the duplicates' divergence goes to t = 1 with infinite mass); run refuses
such a model before sampling and suggests a Normal noise model.

On a terminal, a progress bar shows the sweeps done; when stderr is not a
terminal (a log file), a line such as
  Iteration: 1200 / 4000 [ 30%]  41.2 sweeps/s  ETA 1m8s  log joint -1234.56 (chain 1)
is printed every --progress-every (default 5s; 0 for none).

--labels FILE names the data rows by the lines of FILE (one name per line,
distinct, as animal_names.txt), for data files without a label column.

Ctrl-C stops after the current sweep, writes a checkpoint and the summary;
"run --resume DIR" continues exactly as if the run had not stopped. It takes
no other flags but --iters, since a run's settings are fixed when it starts,
and refuses if the model or a data file has changed since.

"run --resume DIR --iters M" extends a finished or stopped run to M sweeps
(for --method em: M rounds) per chain, keeping its burn-in, thinning, tuning and random streams: the
result is bit for bit that of a run started with --iters M and --burn B, B
the original run's burn-in (only the wall times differ). run.json then
records M. M must be at least the sweeps done and more than the burn-in.

After a kill -9 or a crash, the files above end at a whole row and may run
past the last checkpoint; --resume cuts them back and continues exactly.
Files named .checkpoint.json.tmpNNN and the like are unfinished atomic
writes, not output; --resume and --force delete them. A run killed before
its first checkpoint starts again from its first sweep on --resume.

With a data file of draws from sample, --draw K fits draw K.

--init-tree FILE starts every chain from the tree in FILE (Newick, its
leaves labelled as the data's rows, e.g. another run's map.nwk or an EM
run's best tree) instead of a draw; the hyperparameters are drawn as usual.
For a model with several PYDTs, --init-tree V=FILE names the PYDT by its
variable (repeatable). The tree is copied into DIR (init-tree.nwk) and
recorded in run.json, so that --resume needs no other file. With --method em
the search starts from the tree (EM fits its times) instead of building one.

--chain-offset K makes the run hold chains K+1..K+C (C = --chains) of a
larger design, for spreading chains over machines (a Slurm job array, a
Kubernetes indexed Job; docs/cluster-runs.md): chain k's random stream
depends only on --seed and k, and trace.csv, impute.csv and trees-k.nwk
number the chains k, so that runs with --chains 1 and offsets 0, 1, ..., C-1
(same model, data, --seed and settings) write, bit for bit, what one run
with --chains C writes. run.json records the offset. "pydtlang summary
DIR..." then summarises all their chains together.

The default priors assume real-valued columns of roughly mean 0 and sd 1;
run warns about columns far from that. --standardize fits the data with each
column shifted and scaled to mean 0 and sd 1: the scalars in trace.csv (the
diffusion variance, a noise sd) are then in standardized units, impute.csv
is in the data's units, and run.json records each column's mean and sd
("standardize"), which --resume applies again. It is meant for real-valued
columns on different scales: standardizing 0/1 columns turns rare features
into large values (docs/clustering.md).

--method em fits the model by greedy Bayesian EM instead (one good tree fast,
not a posterior): --iters is then the number of search rounds, --k the number
of best trees kept, --time and --patience stop the search early, --em-iters
bounds the EM iterations per candidate tree. A flag only one method reads
is a usage error with the other, rather than silently ignored: --k,
--patience, --time, --em-iters, --margin, --ab-rows and --ab-sweeps are
EM's; --chains, --chain-offset, --burn, --thin, --tree-thin,
--checkpoint-every, --local-moves, --local-grid, --coclust, --impute and
--allow-stuck are MCMC's. It writes
map.nwk (the best tree), kbest.nwk (each kept tree after "[bound=L]", L the
value it is ranked by) and summary.json (method "em", Gamma posteriors of c
and the precision, alpha, beta, the trace of the best value, wall time,
failed candidate fits). A model with a variance per column (1 / prec with
param prec : pos[D], examples/gaussian-perdim.pydt) gets a Gamma posterior
per column, prec[1] ... prec[D], and the initial trees compare each column
on its own scale. A latent observation noise, X ~ Normal(Z, 1 / sqrt(noise))
with noise under a Gamma prior (one, examples/gaussian-noise.pydt, or one per
column, param noise : pos[D], examples/gaussian-colnoise.pydt and
gaussian-perdim-noise.pydt), gets a Gamma posterior q(noise) (noise[1] ...
noise[D]) from the expected squared residuals at the leaves: a column of
pure noise gets a small noise precision instead of hiding the clusters.
EM learns only these latent variables (c, the diffusion precision or
precisions, alpha, beta, the noise precision or precisions); any other is
refused, naming it. The search starts from trees by sequential
attachment and, up to 2000 rows, by average linkage; with a variance per
column learned also by average linkage of the columns divided by the
sigma_d that EM fits to the linkage tree (refitted and rebuilt three
times; start "linkage-weighted"), so that columns of noise do not hide
the clusters. What the trees are
ranked by (summary.json's "ranked_by", named on every progress line): up to
2000 rows with Gaussian data "bound + Laplace correction", the EM lower
bound plus a Laplace correction for the divergence times (an approximation
of log p(Y, alpha, beta | T) with the times integrated out, not a bound;
summary.json's "bound" field, kept under its old name, holds it, and
"em_bound" and "laplace_correction" its parts); above, "bound" (the EM
lower bound); with EP sites (probit data) "EP approximation". A tree whose
correction cannot be formed (its Hessian in the times is not negative
definite even after a refit from perturbed times) is kept, ranked by its
bound after every tree with the correction ("laplace_fallbacks" lists
them, and a warning says so). When the model learns alpha or beta, they are
not fitted to each tree (that made stars nearly free) but held at their
posterior means from a short MCMC run, the trees integrated out, on
--ab-rows random rows (all rows if there are fewer) for --ab-sweeps sweeps,
half of them burn-in; summary.json's "alpha_beta" records the estimate and
its source; with --time that run makes the sweeps that fit in a quarter
of it (at least 50, half burn-in; "alpha_beta" records the sweeps made and
"planned_sweeps", and a warning says it was cut).
--ab-sweeps -1 fits
them to each tree instead (golden-section search under their priors). For
probit data the diffusion variance is held likewise (1 / the posterior mean
of the precision, or of each prec[d] with a variance per column,
examples/binary-perdim.pydt); for Gaussian data a variance per column keeps
its q(prec[d]) in each fit. The same run's summary tree, majority-rule
consensus and last tree (extended to all rows) are among the search's
initial trees (also when alpha and beta are fixed; with alpha = beta = 0,
where only binary trees are possible, those that multifurcate are split
into binary trees by average linkage of their children's mean rows);
kbest.nwk and
summary.json's kbest_estimates say which start each tree descends from. The
best tree is the one of highest value: where many trees fit about equally
well it can be a near-star, and the run then warns (use MCMC).
Models with parts EM cannot fit are refused naming the variable. An EM run
writes checkpoint.json as it goes (the K-best list, the search's random
state, the round); Ctrl-C stops it after the last completed round with its
outputs written, and "run --resume DIR" (or "--iters R" to go on to R
rounds) continues it exactly: the same kbest.nwk, map.nwk and summary.json,
but for the wall times, as a run without the stop (stopped while the initial
trees are fitted, it has no checkpoint, map.nwk and kbest.nwk hold the
starts fitted in full, and --resume starts it again, keeping the trees on
disk until its refits have caught up with them). A run with --time keeps
its budget across sessions. --explain with
--method em prints the EM schedule (spec.md, docs/em.md).

EM on large data: above 2000 rows (probit data too) EM builds three initial
trees, the sequential tree at the construction variance that does best on
1000 random rows, the average-linkage tree of those rows extended to all,
and the subsample MCMC run's summary tree extended to all, instead of four
sequential trees and average linkage of all rows; the K-best list is
shortened when its trees would hold more than 800 MB (2 trees at 10^5 x 10),
and the search scores re-attachments in O(depth) each. EM on the whole tree
costs O(N·D) per iteration (about 0.5 s of CPU at N = 10^4, D = 10), so at
N = 10^4 and beyond give --time. The subsample MCMC for alpha and beta
takes at most a quarter of it; every EM fit, the initial trees' included,
stops when it is up, after at least one iteration, and the rounds too; a
fit so cut short is ranked by its bound alone (its Laplace correction is
not formed: its times are not at a maximum), with a warning. The building
of an initial tree is not cut short (above 2000 rows an initial tree after the first is
skipped when less time is left than the first took); e.g. --time 25s at
N = 10^4 or --time 4m at N = 10^5
(docs/em.md, "Scale"). Each initial tree is fitted as soon as it is built,
and map.nwk and kbest.nwk are written after each initial fit, so a tree is
on disk from the first start on. The sequential construction places each
row by a beam search down the tree that skips the branch points whose edge
scores more than --margin nats (20) below the best position so far (a
heuristic; --margin -1 skips none, at more CPU on clustered data;
em.InitOptions.Margin in the library). Progress lines on stderr name
each stage.

Load the trace in Python with ArviZ:
  df = pandas.read_csv("DIR/trace.csv")
  idata = arviz.from_dict(posterior={c: df.pivot(index="iteration", columns="chain", values=c).T.values
                                     for c in df.columns[2:]})
and in R with posterior:
  d <- read.csv("DIR/trace.csv"); names(d)[1:2] <- c(".chain", ".iteration")
  posterior::summarise_draws(posterior::as_draws_df(d))`,
		Example: `  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --iters 500 --seed 1 --out fit
  pydtlang run examples/binary.pydt --data Y=examples/data/animals.csv --chains 2 --out animals
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --explain
  pydtlang run --resume fit
  pydtlang run examples/gaussian.pydt --data X=examples/data/synthetic.csv --chains 1 --chain-offset 2 --out fit-3`,
		Args: runArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			stderr := cmd.ErrOrStderr()
			if method != "mcmc" && method != "em" {
				return &exitError{code: 2, err: fmt.Errorf("run: --method must be mcmc or em, got %q", method)}
			}
			if resume != "" {
				if _, err := os.Stat(filepath.Join(resume, inference.KBestFile)); err == nil {
					if _, err := os.Stat(filepath.Join(resume, inference.RunFile)); errors.Is(err, fs.ErrNotExist) {
						return &exitError{code: 1, err: fmt.Errorf("run --resume: %s holds an EM run (%s), which cannot be resumed; start it again", resume, inference.KBestFile)}
					}
				}
				if err := resumeAlone(cmd, args); err != nil {
					return err
				}
				iters := 0
				if cmd.Flags().Changed("iters") {
					if cfg.Iters < 1 {
						return &exitError{code: 2, err: fmt.Errorf("run: --iters must be at least 1, got %d", cfg.Iters)}
					}
					iters = cfg.Iters
				}
				return resumeRun(cmd, resume, iters)
			}
			if len(args) != 1 {
				return &exitError{code: 2, err: errors.New("run: give a MODEL file (or --resume DIR)")}
			}
			if err := methodOnly(cmd, method); err != nil {
				return err
			}
			if err := runFlags(cmd, &cfg, burn); err != nil {
				return err
			}
			if err := localFlag(&cfg, local); err != nil {
				return err
			}
			l, m, err := loadModel(args[0], &b, stderr)
			if err != nil {
				return err
			}
			if cfg.InitTrees, err = readInitTrees(m, initTrees); err != nil {
				return err
			}
			if method == "em" {
				for v, tr := range cfg.InitTrees {
					if v != "" && v != m.Trees[0].Leaves.Name {
						return &exitError{code: 2, err: fmt.Errorf("run --method em --init-tree: EM fits the model's first PYDT, %s, not %s", m.Trees[0].Leaves.Name, v)}
					}
					emc.InitTree = tr
				}
				return runEM(cmd, args[0], m, l.Graph, emc, cfg, explain, force, stdz)
			}
			if explain {
				text, err := inference.ExplainRun(m, cfg)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				var kinds []string
				for _, b := range m.Trees {
					k := fmt.Sprint(b.Kind())
					if m.Several() {
						k = b.Leaves.Name + ": " + k
					}
					kinds = append(kinds, k)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schedule of one sweep for %s (data at the leaves: %s):\n%s", args[0], strings.Join(kinds, "; "), text)
				return nil
			}
			if cfg.Out == "" {
				return &exitError{code: 2, err: errors.New("run: --out DIR is required")}
			}
			cfg.Force = force
			if stdz {
				if _, err := m.Standardize(); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			for _, w := range m.Warnings(graph.NewEnv(l.Graph)) {
				fmt.Fprintf(stderr, "pydtlang: warning: %s\n", w)
			}
			if note := m.OmittedNote(); note != "" {
				fmt.Fprintf(stderr, "pydtlang: note: %s\n", note)
			}
			return execute(cmd, func(ctx context.Context, progress func(int, int, float64)) (*inference.Result, error) {
				cfg.Progress = progress
				return inference.Run(ctx, m, cfg)
			}, cfg.Out)
		},
	}
	b.register(cmd, true)
	f := cmd.Flags()
	f.IntVar(&cfg.Iters, "iters", 1000, "sweeps per chain, burn-in included")
	f.IntVar(&burn, "burn", 0, "sweeps discarded at the start; 0 for none (default: half of --iters)")
	f.IntVar(&cfg.Thin, "thin", 1, "keep every T-th sweep after burn-in")
	f.IntVar(&cfg.TreeThin, "tree-thin", 1, "write the tree of every K-th kept sweep only (trace.csv keeps all); the summaries use the trees written")
	f.IntVar(&cfg.Chains, "chains", 4, "independent chains, run in parallel")
	f.Uint64Var(&cfg.Seed, "seed", 1, "random seed; the same seed gives the same output")
	f.IntVar(&cfg.ChainOffset, "chain-offset", 0, "hold chains K+1..K+C of a larger design (one job of a cluster array; merge with pydtlang summary)")
	f.StringVar(&cfg.Out, "out", "", "output directory")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 100, "sweeps between checkpoints")
	f.BoolVar(&cfg.Impute, "impute", false, "write posterior draws of missing data entries to impute.csv")
	f.BoolVar(&cfg.Coclust, "coclust", false, "write coclust.csv and summary.nwk also for more than 2000 rows (O(N²) memory and file)")
	f.BoolVar(&explain, "explain", false, "print the chosen updates of one sweep and exit")
	f.Float64Var(&local, "local-moves", treemove.DefaultLocalMovesPerLeaf, "local prune-and-regraft tree moves (a subtree re-attached within 2 edges of where it was) per leaf per sweep; 0 turns them off")
	f.IntVar(&cfg.LocalGrid, "local-grid", 0, "propose the local moves' new point from the likelihood at `G` points per edge around the old one, G at most 1000 (a likelihood-informed proposal, exact; uniform in regions of more than 64 edges and atoms; recorded in run.json); 0 proposes uniformly")
	f.StringVar(&resume, "resume", "", "continue the stopped run in DIR from its last checkpoint (no other flags but --iters M, which extends it to M sweeps)")
	f.BoolVar(&force, "force", false, "replace the run already in --out DIR, deleting its output files")
	f.BoolVar(&stdz, "standardize", false, "fit the data with every column shifted and scaled to mean 0 and sd 1 (recorded in run.json)")
	f.Duration("progress-every", 5*time.Second, "when stderr is not a terminal, print a progress line (iteration, rate, ETA, log joint) this often; 0 for none")
	f.BoolVar(&cfg.AllowStuck, "allow-stuck", false, "exit 0 even when a chain is stuck (its tree accepted no move for 100 consecutive sweeps)")
	f.StringArrayVar(&initTrees, "init-tree", nil, "start every chain (or the EM search) from this tree, a Newick file whose leaves are labelled as the data's rows: FILE for the model's PYDT, V=FILE for the PYDT of variable V (repeatable)")
	f.StringVar(&method, "method", "mcmc", "mcmc (posterior samples) or em (greedy Bayesian EM: one good tree fast, with a K-best search; see --help)")
	f.IntVar(&emc.K, "k", 10, "with --method em: the number of best trees kept (kbest.nwk)")
	f.IntVar(&emc.Patience, "patience", 30, "with --method em: stop after this many search rounds without a better tree (0: never)")
	f.DurationVar(&emc.Time, "time", 0, "with --method em: stop the run after this long, EM on the initial trees included; alpha and beta's MCMC run takes at most a quarter of it (e.g. 60s; 0: no limit)")
	f.IntVar(&emc.EMIters, "em-iters", 50, "with --method em: the most EM iterations per tree (initial and candidate trees)")
	f.IntVar(&emc.ABRows, "ab-rows", 300, "with --method em: the random rows of the MCMC run that estimates alpha and beta (all rows if there are fewer)")
	f.Float64Var(&emc.Margin, "margin", inference.DefaultEMMargin, "with --method em: the initial trees' construction skips a branch point whose edge scores more than this many nats below the best position so far (a heuristic; negative: skip none)")
	f.IntVar(&emc.ABSweeps, "ab-sweeps", 400, "with --method em: the sweeps of that MCMC run, half burn-in (-1: fit alpha and beta to each tree instead)")
	return cmd
}

// methodFlags are the run flags that one method alone reads, with that
// method: given with the other method, such a flag would be silently
// ignored, so methodOnly refuses it.
var methodFlags = []struct{ flag, method string }{
	{"k", "em"}, {"patience", "em"}, {"time", "em"}, {"em-iters", "em"}, {"margin", "em"}, {"ab-rows", "em"}, {"ab-sweeps", "em"},
	{"chains", "mcmc"}, {"chain-offset", "mcmc"}, {"burn", "mcmc"}, {"thin", "mcmc"}, {"tree-thin", "mcmc"}, {"checkpoint-every", "mcmc"},
	{"local-moves", "mcmc"}, {"local-grid", "mcmc"}, {"coclust", "mcmc"}, {"impute", "mcmc"}, {"allow-stuck", "mcmc"},
}

// methodOnly is a usage error naming the flags given explicitly that
// method does not read (methodFlags) and the method that reads them.
func methodOnly(cmd *cobra.Command, method string) error {
	var other string
	var bad []string
	for _, f := range methodFlags {
		if f.method != method && cmd.Flags().Changed(f.flag) {
			other = f.method
			bad = append(bad, "--"+f.flag)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	these, are := "it", "is"
	if len(bad) > 1 {
		these, are = "them", "are"
	}
	given := "--method " + method
	if !cmd.Flags().Changed("method") {
		given += " (the default)"
	}
	return &exitError{code: 2, err: fmt.Errorf("run: %s %s read only by --method %s, not by %s: drop %s, or give --method %s",
		strings.Join(bad, ", "), are, other, given, these, other)}
}

// runEM runs --method em: --iters is the number of search rounds.
func runEM(cmd *cobra.Command, model string, m *inference.Model, g *graph.Graph, emc inference.EMConfig, cfg inference.Config, explain, force, stdz bool) error {
	stderr := cmd.ErrOrStderr()
	if explain {
		plan, err := inference.PlanEM(m)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "EM schedule for %s (data at the leaves: %s):\n%s", model, m.Trees[0].Kind(), plan.Explain())
		return nil
	}
	if cfg.Out == "" {
		return &exitError{code: 2, err: errors.New("run: --out DIR is required")}
	}
	if emc.K < 1 {
		return &exitError{code: 2, err: fmt.Errorf("run: --k must be at least 1, got %d", emc.K)}
	}
	if emc.EMIters < 1 {
		return &exitError{code: 2, err: fmt.Errorf("run: --em-iters must be at least 1, got %d", emc.EMIters)}
	}
	if emc.ABRows < 2 {
		return &exitError{code: 2, err: fmt.Errorf("run: --ab-rows must be at least 2, got %d", emc.ABRows)}
	}
	if math.IsNaN(emc.Margin) || math.IsInf(emc.Margin, 0) {
		return &exitError{code: 2, err: fmt.Errorf("run: --margin must be a finite number of nats (negative: no margin), got %v", emc.Margin)}
	}
	if emc.ABSweeps == 0 || emc.ABSweeps < -1 {
		return &exitError{code: 2, err: fmt.Errorf("run: --ab-sweeps must be positive, or -1 to fit alpha and beta per tree, got %d", emc.ABSweeps)}
	}
	if emc.Patience == 0 {
		emc.Patience = -1
	}
	emc.Rounds, emc.Seed, emc.Out, emc.Force = cfg.Iters, cfg.Seed, cfg.Out, force
	if stdz {
		if _, err := m.Standardize(); err != nil {
			return &exitError{code: 1, err: err}
		}
	}
	for _, w := range m.Warnings(graph.NewEnv(g)) {
		fmt.Fprintf(stderr, "pydtlang: warning: %s\n", w)
	}
	emCallbacks(cmd, &emc)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := inference.RunEM(ctx, m, emc)
	return emDone(cmd, res, err, cfg.Out)
}

// emCallbacks sets the progress and log lines of an EM run (stderr, every
// --progress-every).
func emCallbacks(cmd *cobra.Command, emc *inference.EMConfig) {
	stderr := cmd.ErrOrStderr()
	if every := progressEvery(cmd); every > 0 {
		last := time.Now()
		emc.Progress = func(round, rounds int, best float64, rankedBy string) {
			if time.Since(last) >= every || round == rounds {
				last = time.Now()
				fmt.Fprintf(stderr, "EM round %d / %d  best %s %.6g\n", round, rounds, rankedBy, best)
			}
		}
		emc.Log = func(msg string) { fmt.Fprintf(stderr, "EM %s\n", msg) }
	}
}

// emDone prints the outcome of an EM run (or its resume) in out: a line
// on the best tree and the warnings, and after Ctrl-C how to continue
// (exit status 130).
func emDone(cmd *cobra.Command, res *inference.EMResult, err error, out string) error {
	if res == nil {
		if errors.Is(err, inference.ErrInterrupted) {
			return &exitError{code: 130, err: err}
		}
		return &exitError{code: 1, err: err}
	}
	value := fmt.Sprintf("bound %.6g (a lower bound)", res.Bound)
	switch {
	case res.Approximate:
		value = fmt.Sprintf("EP approximation %.6g", res.Bound)
	case res.TimesIntegrated && res.Trees[0].NoLaplace:
		value = fmt.Sprintf("bound %.6g (its Laplace correction unavailable)", res.Bound)
	case res.TimesIntegrated:
		value = fmt.Sprintf("bound + Laplace correction %.6g (lower bound %.6g plus correction %.4g; an approximation of log p(Y, alpha, beta | T), not a bound)", res.Bound, res.EMBound, res.Laplace)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "EM: best tree's %s after %d rounds (stopped: %s), %d trees kept, %.1fs; wrote %s, %s and %s in %s\n",
		value, res.Rounds, res.StopReason, len(res.Trees), res.WallTime, inference.MapFile, inference.KBestFile, inference.SummaryFile, out)
	for _, w := range res.Warnings {
		fmt.Fprintf(cmd.OutOrStdout(), "warning: %s\n", w)
	}
	if errors.Is(err, inference.ErrInterrupted) {
		fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: stopped after round %d; everything written in %s is valid. Continue with: pydtlang run --resume %s\n", res.Rounds, out, out)
		return &exitError{code: 130, err: err, quiet: true}
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// resumeEM continues the EM run in dir (inference.ResumeEM); iters, when
// not 0, is its new number of rounds.
func resumeEM(cmd *cobra.Command, m *inference.Model, dir string, iters int) error {
	if _, err := os.Stat(filepath.Join(dir, inference.CheckpointFile)); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: %s has no %s (the EM run stopped before all its initial trees were fitted, or was made by a pydtlang without EM checkpoints); starting it again with the settings in %s (its %s and %s keep the earlier session's trees until the initial trees refitted are as good)\n",
			dir, inference.CheckpointFile, inference.RunFile, inference.MapFile, inference.KBestFile)
	}
	var emc inference.EMConfig
	emc.Rounds = iters
	emCallbacks(cmd, &emc)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := inference.ResumeEM(ctx, m, dir, emc)
	return emDone(cmd, res, err, dir)
}

// readInitTrees reads the --init-tree values, FILE or V=FILE, into the
// trees by PYDT variable that inference.Config.InitTrees takes.
func readInitTrees(m *inference.Model, specs []string) (map[string]*pydt.Tree, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string]*pydt.Tree{}
	for _, spec := range specs {
		v, path := "", spec
		if name, rest, ok := strings.Cut(spec, "="); ok && isIdent(name) {
			v, path = name, rest
		}
		if v == m.Trees[0].Leaves.Name {
			v = ""
		}
		if _, dup := out[v]; dup {
			return nil, &exitError{code: 2, err: fmt.Errorf("run: --init-tree %s: a second start tree for the same PYDT", spec)}
		}
		tr, err := m.ReadTree(path, v)
		if err != nil {
			return nil, &exitError{code: 1, err: fmt.Errorf("run: --init-tree: %w", err)}
		}
		out[v] = tr
	}
	return out, nil
}

// isIdent reports whether s is a model identifier (the V of V=FILE).
func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

// runFlags checks the numeric run flags and sets cfg.Burn from --burn: the
// library default (half the iterations) when it is not given, none for 0.
func runFlags(cmd *cobra.Command, cfg *inference.Config, burn int) error {
	for _, c := range []struct {
		name string
		v    int
	}{{"iters", cfg.Iters}, {"thin", cfg.Thin}, {"chains", cfg.Chains}, {"checkpoint-every", cfg.CheckpointEvery}} {
		if c.v < 1 {
			return &exitError{code: 2, err: fmt.Errorf("run: --%s must be at least 1, got %d", c.name, c.v)}
		}
	}
	if cfg.ChainOffset < 0 {
		return &exitError{code: 2, err: fmt.Errorf("run: --chain-offset must be 0 or more, got %d", cfg.ChainOffset)}
	}
	if cmd.Flags().Lookup("tree-thin") != nil && cfg.TreeThin < 1 {
		return &exitError{code: 2, err: fmt.Errorf("run: --tree-thin must be at least 1, got %d", cfg.TreeThin)}
	}
	cfg.Burn = 0 // the library's default, Iters/2
	if cmd.Flags().Changed("burn") {
		switch {
		case burn < 0:
			return &exitError{code: 2, err: fmt.Errorf("run: --burn must be 0 (none) or more, got %d", burn)}
		case burn >= cfg.Iters:
			return &exitError{code: 2, err: fmt.Errorf("run: --burn %d must be less than --iters %d", burn, cfg.Iters)}
		case burn == 0:
			cfg.Burn = -1 // the library's "none"
		default:
			cfg.Burn = burn
		}
	}
	return nil
}

// localFlag sets cfg.LocalMoves from --local-moves: 0 turns the local
// moves off (the library's negative value); it also checks --local-grid.
func localFlag(cfg *inference.Config, local float64) error {
	if !(local >= 0) || math.IsInf(local, 1) {
		return &exitError{code: 2, err: fmt.Errorf("run: --local-moves must be 0 (none) or a positive number, got %v", local)}
	}
	cfg.LocalMoves = local
	if local == 0 {
		cfg.LocalMoves = -1
	}
	if cfg.LocalGrid < 0 || cfg.LocalGrid > treemove.MaxLocalGrid {
		return &exitError{code: 2, err: fmt.Errorf("run: --local-grid must be 0 (a uniform proposal) or a number of points per edge up to %d, got %d", treemove.MaxLocalGrid, cfg.LocalGrid)}
	}
	return nil
}

// resumeAlone rejects a MODEL argument or any flag other than --resume
// given with --resume: a run's settings are fixed when it starts.
// runArgs accepts at most the model file, and says where the rest
// belongs: the commonest slip is the output directory written as a second
// argument instead of with --out.
func runArgs(cmd *cobra.Command, args []string) error {
	if len(args) <= 1 {
		return nil
	}
	return fmt.Errorf("run takes one argument, the MODEL file, but got %d: %s; the output directory is given with --out DIR and data files with --data NAME=FILE",
		len(args), strings.Join(args, " "))
}

func resumeAlone(cmd *cobra.Command, args []string) error {
	var extra []string
	if len(args) > 0 {
		extra = append(extra, "MODEL "+args[0])
	}
	named := 0
	for _, name := range []string{"data", "draw", "labels", "set", "burn", "thin", "tree-thin", "chains", "chain-offset", "seed", "out",
		"checkpoint-every", "impute", "coclust", "explain", "force", "standardize", "allow-stuck", "local-moves", "local-grid"} {
		if cmd.Flags().Changed(name) {
			extra = append(extra, "--"+name)
			named++
		}
	}
	for _, name := range []string{"progress-every", "iters"} {
		if cmd.Flags().Changed(name) {
			named++ // allowed: --iters extends the run, --progress-every changes only what is printed
		}
	}
	if cmd.Flags().NFlag() > 1+named { // --resume itself, and a flag not listed above
		extra = append(extra, "other flags")
	}
	if len(extra) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("run --resume takes no other arguments or flags but --iters (got %s): a run's settings are fixed when it starts",
			strings.Join(extra, ", "))}
	}
	return nil
}

// resumeRun rebuilds the model from run.json, checks that the model and
// data files are those the run started with, and continues the run.
func resumeRun(cmd *cobra.Command, dir string, iters int) error {
	m, err := modelOfRun(dir, cmd.ErrOrStderr(), func(err error) error {
		return &exitError{code: 1, err: fmt.Errorf("resume %s: %w", dir, err)}
	})
	if err != nil {
		return err
	}
	if ri, err := inference.ReadRun(dir); err == nil && ri.IsEM() {
		return resumeEM(cmd, m, dir, iters)
	}
	if _, err := os.Stat(filepath.Join(dir, inference.CheckpointFile)); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(cmd.ErrOrStderr(), "pydtlang: %s has no %s (the run stopped before its first checkpoint); starting it again from sweep 1 with the settings in %s\n",
			dir, inference.CheckpointFile, inference.RunFile)
	}
	return execute(cmd, func(ctx context.Context, progress func(int, int, float64)) (*inference.Result, error) {
		return inference.ResumeTo(ctx, m, dir, iters, progress)
	}, dir)
}

// modelOfRun rebuilds the model the run in dir was started with, from its
// run.json (inference.LoadRun: the model file bound to the run's --data,
// --set, --draw and --labels, checking that the model and data files have
// not changed since); --resume, predict, cut and plot all start from it.
// wrap gives context to the errors other than the model's diagnostics,
// which are printed. The data are not standardized here:
// inference.Resume does that itself, and the other commands call
// inference.StandardizeLikeRun.
func modelOfRun(dir string, stderr io.Writer, wrap func(error) error) (*inference.Model, error) {
	m, err := inference.LoadRun(dir)
	var se *inference.SourceError
	switch {
	case errors.As(err, &se):
		return nil, loadError(err, stderr)
	case err != nil:
		return nil, wrap(err)
	}
	return m, nil
}

// execute runs fn with Ctrl-C handling and a progress bar on a terminal,
// then prints the summary table.
func execute(cmd *cobra.Command, fn func(context.Context, func(int, int, float64)) (*inference.Result, error), out string) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := cmd.ErrOrStderr()
	var progress func(int, int, float64)
	if isTerminal(stderr) {
		var bar *progressbar.ProgressBar
		progress = func(done, total int, lj float64) {
			if bar == nil {
				bar = progressbar.NewOptions(total,
					progressbar.OptionSetWriter(stderr),
					progressbar.OptionShowIts(),
					progressbar.OptionSetItsString("sweeps"),
					progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionFullWidth(),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			bar.Describe(fmt.Sprintf("log joint %.6g", lj))
			bar.Set(done)
		}
	} else if every := progressEvery(cmd); every > 0 {
		lp := newLineProgress(stderr, every)
		lp.dir = out
		progress = lp.report
	}
	res, err := fn(ctx, progress)
	if res != nil {
		res.WriteTable(cmd.OutOrStdout())
	}
	if errors.Is(err, inference.ErrInterrupted) {
		done := 0
		if res != nil {
			done = res.Completed
		}
		fmt.Fprintf(stderr, "pydtlang: stopped after iteration %d; everything written in %s is valid. Continue with: pydtlang run --resume %s\n", done, out, out)
		return &exitError{code: 130, err: err, quiet: true}
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// progressEvery is the interval of the progress lines when stderr is not a
// terminal: --progress-every, 0 for none.
func progressEvery(cmd *cobra.Command) time.Duration {
	d, err := cmd.Flags().GetDuration("progress-every")
	if err != nil || d < 0 {
		return 0
	}
	return d
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
