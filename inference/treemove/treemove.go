// Package treemove implements Markov chain Monte Carlo moves on the tree of a
// Pitman-Yor diffusion tree (Knowles & Ghahramani 2011, Section "MCMC
// sampler"), with the node locations integrated out by Gaussian belief
// propagation (package bp).
//
// The target is the posterior p(T | data) ∝ p(T) L(T): p is the PYDT prior
// of the tree structure and divergence times (pydt.LogPrior), L the marginal
// likelihood bp.Model.LogLik. A Sampler offers three moves and a sweep:
//
//   - SubtreeMove, the paper's Metropolis-Hastings move: detach a uniformly
//     chosen non-root node v (a leaf, or a branch point with everything
//     below it), propose a re-attachment point from the generative process
//     of one new point on the remaining tree restricted to times before t_v,
//     and accept with the corrected ratio derived in subtree.go (the paper's
//     ratio of likelihoods alone is exact only for leaves). With Informed
//     set, the choices at branch points lean towards children whose
//     messages fit v's (informed.go), with the exact correction.
//   - TimeMove: slice sampling of a branch point's divergence time in the
//     coordinate s = -log(1-t); TimeSweep does the same for every branch
//     point, top down, at O(K · D) of likelihood work each
//     (bp.Model.TimeSweep) instead of two walks to the root.
//   - PositionMove: slice sampling of where a detached subtree re-attaches,
//     over a line that lays out the attachment points of the remaining tree
//     in depth-first order, branch points (atoms of the prior) included as
//     intervals of fixed length (of length 0 when the atom has no mass, as
//     in the DDT).
//   - LocalMove: prune and regraft near the old point (local.go): detach a
//     uniformly chosen non-root node and propose a point uniformly among
//     the edges and atoms within LocalRadius steps of the old one, uniform
//     in ψ on an edge, with the Metropolis-Hastings correction for the
//     sizes of the two neighbourhoods and the lengths of the two edges.
//     With LocalGrid set, the proposal is likelihood-informed
//     (localgrid.go): a region of edges around a random centre near the
//     old point, the target evaluated at LocalGrid points per edge at
//     O(D) each (bp.Region), and a point drawn from that piecewise-constant
//     approximation, with the exact correction.
//   - Sweep: a mixture of these: N subtree moves, DefaultLocalMovesPerLeaf·N
//     local moves, about N time updates and 0.1·N position moves by default.
//     With Collapse set (collapse.go), for a divergence function linear in
//     its constant c under a Gamma prior, the subtree, uniform local and
//     position moves target the tree prior with c integrated out and run
//     after the time moves; the caller draws c afresh right after the sweep.
//
// Every move costs O(depth · D · degree) per likelihood evaluation, uses the
// local message updates of bp, and allocates nothing.
package treemove

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/pydtlang/pydtlang/stdlib/pydt"
	"github.com/pydtlang/pydtlang/stdlib/pydt/bp"
)

// MoveStats counts the proposals and acceptances of one kind of move. For
// the slice-sampling moves Accepted counts the updates that changed the
// state.
type MoveStats struct {
	Proposed, Accepted int
}

// Rate returns Accepted/Proposed, or NaN before any proposal.
func (s MoveStats) Rate() float64 {
	if s.Proposed == 0 {
		return math.NaN()
	}
	return float64(s.Accepted) / float64(s.Proposed)
}

// Stats collects the counters of a Sampler.
type Stats struct {
	Subtree, Time, Position MoveStats
	// Local counts the moves of LocalMove.
	Local MoveStats
	// GaveUp counts subtree moves in which no valid re-attachment point
	// was drawn within MaxTries attempts (the state is then kept; see
	// Sampler.MaxTries).
	GaveUp int
	// NonFinite counts density evaluations refused because they were NaN
	// or +Inf (see Finite): proposals treated as outside the support, and
	// moves not started because the current state's density was not
	// finite.
	NonFinite int
	// Tries counts the attempts of SubtreeMove's proposal at drawing a
	// point (between 1 and MaxTries per move), and Steps the nodes those
	// attempts passed on their walks down from the root; PositionEvals
	// counts the density evaluations of the position moves. They measure
	// the moves' work (docs/benchmarks.md, "Growth per sweep").
	Tries, Steps, PositionEvals int
}

// Add adds o's counters to s's, as when the counts of several chains or
// trees are pooled.
func (s *Stats) Add(o Stats) {
	s.Subtree.Proposed += o.Subtree.Proposed
	s.Subtree.Accepted += o.Subtree.Accepted
	s.Time.Proposed += o.Time.Proposed
	s.Time.Accepted += o.Time.Accepted
	s.Position.Proposed += o.Position.Proposed
	s.Position.Accepted += o.Position.Accepted
	s.Local.Proposed += o.Local.Proposed
	s.Local.Accepted += o.Local.Accepted
	s.GaveUp += o.GaveUp
	s.NonFinite += o.NonFinite
	s.Tries += o.Tries
	s.Steps += o.Steps
	s.PositionEvals += o.PositionEvals
}

// Evaluable reports whether a log density may be accepted by a move: finite,
// or -Inf (zero density, which every move rejects). NaN and +Inf are never
// accepted: they mean that float64 cannot evaluate the density there (an
// overflow, or 0/0 from times closer to t = 1 than it resolves), and a chain
// that accepted one would be left in a state whose density it cannot
// compare with any other. Unlike scalar.Finite, it lets -Inf through: a
// move rejects that value itself.
func Evaluable(logDensity float64) bool {
	return !math.IsNaN(logDensity) && !math.IsInf(logDensity, 1)
}

// settled reports whether the model's log likelihood after a committed
// change is finite. The moves evaluate a proposal by a different order of
// operations than the committed update, and for states that float64 barely
// resolves the two can disagree (a finite proposal, a NaN state); the moves
// then undo the change and treat the proposal as refused.
func (s *Sampler) settled() bool {
	ll := s.m.LogLik()
	if math.IsNaN(ll) || math.IsInf(ll, 0) {
		s.Stats.NonFinite++
		return false
	}
	return true
}

// accept reports whether a move with log acceptance ratio logA is accepted
// (with probability min(1, e^logA)). A NaN or +Inf ratio (the proposal's
// density or the current one cannot be evaluated) is refused as not
// finite (see Finite).
func (s *Sampler) accept(logA float64) bool {
	if math.IsNaN(logA) || math.IsInf(logA, 1) {
		s.Stats.NonFinite++
		return false
	}
	return logA >= 0 || s.rng.Float64() < math.Exp(logA)
}

// moveTo attaches the detached subtree v at pos, an accepted proposal from
// old, counting it in *accepted; a tree that does not settle (settled) is
// put back at old.
func (s *Sampler) moveTo(v pydt.NodeID, old, pos pydt.Position, accepted *int) bool {
	s.m.Attach(v, pos)
	if s.settled() {
		*accepted++
		return true
	}
	s.m.Detach(v)
	s.m.Attach(v, old)
	return false
}

// refuse returns -Inf for a log density that Finite rejects, counting it,
// and the density itself otherwise.
func (s *Sampler) refuse(logDensity float64) float64 {
	if Evaluable(logDensity) {
		return logDensity
	}
	s.Stats.NonFinite++
	return math.Inf(-1)
}

// Sampler runs MCMC moves on the tree of a bp.Model. It refers to the model
// and its tree; change them only through the sampler's moves, or between
// moves through the model (SetVariance, SetEvidence, ...). The prior
// parameters can be changed between moves with SetPrior.
//
// A Sampler is not safe for concurrent use.
type Sampler struct {
	tr  *pydt.Tree
	m   *bp.Model
	rng *rand.Rand

	alpha, beta float64
	div         pydt.Divergence
	h           *pydt.Harmonic

	// TimeWidth is the initial slice width of TimeMove in s = -log(1-t).
	TimeWidth float64
	// PosWidth is the initial slice width of PositionMove on its line, on
	// which an edge from s_a to s_b has length s_b/(1+s_b) - s_a/(1+s_a).
	PosWidth float64
	// AtomLen is the length of the interval that stands for a branch point
	// on the line of PositionMove.
	AtomLen float64
	// MaxSteps bounds the stepping out of the slice-sampling moves (Neal's
	// m): the interval grows by at most MaxSteps widths.
	MaxSteps int
	// MaxTries bounds the attempts of SubtreeMove at drawing a point before
	// the detached subtree's time; after that many invalid draws the move
	// keeps the state. The bound depends only on the remaining tree and
	// t_v, which the reverse move shares, so the move stays exact.
	MaxTries int
	// PositionMovesPerLeaf is the number of position moves of a Sweep per
	// leaf.
	PositionMovesPerLeaf float64
	// LocalMovesPerLeaf is the number of LocalMoves of a Sweep per leaf
	// (rounded; none when it rounds to 0). New sets
	// DefaultLocalMovesPerLeaf.
	LocalMovesPerLeaf float64
	// LocalRadius is the number of steps between pieces within which
	// LocalMove proposes (local.go); 0 moves v along its own edge only.
	LocalRadius int
	// LocalGrid, when positive, makes LocalMove's proposal
	// likelihood-informed (localgrid.go): a region of pieces around a
	// random centre near the old piece, each edge piece cut into
	// LocalGrid cells whose weights are the target at their midpoints,
	// and a point drawn from that piecewise-constant approximation. 0
	// proposes a piece and a point uniformly (local.go). At most
	// MaxLocalGrid.
	LocalGrid int
	// LocalGridRadius is the radius, in steps between pieces, of the
	// informed proposal's centre and region (localgrid.go); LocalRadius
	// is that of the uniform proposal.
	LocalGridRadius int
	// TimeUpdatesPerLeaf is the number of time updates of a Sweep per
	// leaf: N·TimeUpdatesPerLeaf/I TimeSweeps, rounded (at least one), I
	// being the number of branch points, so that a tree with few branch
	// points updates each of them many times, as random-scan TimeMoves
	// would.
	TimeUpdatesPerLeaf float64
	// RandomScanTime makes the time updates of a Sweep TimeMoves on
	// randomly chosen branch points (N·TimeUpdatesPerLeaf of them) instead
	// of TimeSweeps.
	RandomScanTime bool
	// Informed is the weight λ of the likelihood in the branch choices of
	// SubtreeMove's proposal (informed.go); 0 proposes from the prior.
	Informed float64
	// InformedMix is the weight ε of the prior's choice in the informed
	// proposal's mixture, in (0, 1]: it keeps every point proposable.
	InformedMix float64
	// TopologyFixed makes Sweep update the branch-point times only (no
	// subtree, local or position moves): the chain then samples the times
	// given the topology, as diagnostics of mixing need
	// (internal/mixbench -freeze-topology).
	TopologyFixed bool

	// Collapse, when set, makes Sweep's subtree, uniform local and
	// position moves target the tree prior with the divergence function's
	// constant c integrated out under the Gamma prior it holds
	// (collapse.go); they then run after the moves that condition on c
	// (the time moves, the informed local moves), and the caller must
	// draw c from its conditional before any update that conditions on
	// it. The divergence function must be Collapse.Unit scaled by c.
	Collapse *CollapseC

	// Stats counts proposals and acceptances since New or ResetStats.
	Stats Stats

	// The collapsed moves (collapse.go): the scale of the divergence
	// function and its log (1 and 0 otherwise), and the tree's K and R.
	// During the collapsed moves (collapsing): the chain's divergence
	// function, and K_x, R_x of the move under way with v's own e and r.
	cs, lcs    float64
	cK         int
	cR         float64
	collapsing bool
	savedDiv   pydt.Divergence
	cKx, cE0   int
	cRx, cR0   float64

	// Position move state: the detached subtree's time, the current piece
	// of the line and the offset in it, the seed of the sibling order.
	tv   pydt.Time
	cur  piece
	off0 float64
	seed uint64 // sibling order of the line

	// Memo and count tables (cache.go).
	epoch    uint32
	nodes    []nodeMemo
	lnB, lnA []float64 // log(k-β), log(k+α) by leaf count k
	pbuf     []float64 // choice probabilities of the informed proposal

	// LocalMove's neighbourhood: the pieces found, and a stamp per piece
	// (2 per node: edge, atom) marking those already found.
	lbuf   []piece
	lmark  []uint32
	lstamp uint32
	// The informed LocalMove (localgrid.go): the region's pieces, the
	// target at its cells' midpoints and the cells' weights, the centre's
	// ancestors, the region evaluator.
	rbuf   []piece
	gbuf   []float64
	wbuf   []float64
	anc    []pydt.NodeID
	region *bp.Region

	// TimeSweep: its visit function (made once, so that a sweep does not
	// allocate) and the times it restores on failure.
	visit func(e *bp.TimeEval)
	tsave []timeSave
	// sweepLL is the log likelihood of the current state during a
	// TimeSweep (see sliceTime).
	sweepLL float64
	// timeEvals counts the candidates the time moves evaluated.
	timeEvals int
	// afterSweep, if set (by tests), replaces the model's LogLik in the
	// check at the end of a TimeSweep.
	afterSweep func() float64
}

// DefaultLocalMovesPerLeaf is the number of LocalMoves per leaf of a Sweep
// that New sets. At N = 1000, D = 2 (DDT) one local move per leaf gave
// 1.2-2× the effective samples of the log likelihood per CPU second of the
// sweep without them, in every seed of 20,000-sweep runs
// (docs/benchmarks.md, "Issue 8 status").
const DefaultLocalMovesPerLeaf = 1.0

// DefaultLocalRadius is the LocalRadius that New sets.
const DefaultLocalRadius = 2

// DefaultLocalGridRadius is the LocalGridRadius that New sets: the informed
// proposal draws a centre within one step of the old piece and a point in
// the pieces within one step of the centre.
const DefaultLocalGridRadius = 1

// New returns a sampler for the tree of m, with prior parameters alpha, beta
// and divergence function div, drawing random numbers from rng. The tree must
// be complete (every leaf attached) and the model's messages current or
// stale (the first move recomputes them).
func New(m *bp.Model, alpha, beta float64, div pydt.Divergence, rng *rand.Rand) (*Sampler, error) {
	if m == nil || rng == nil {
		return nil, fmt.Errorf("treemove: New needs a model and a random source")
	}
	tr := m.Tree()
	if tr.Root() == pydt.NoNode || tr.Count(tr.Root()) != tr.NumLeaves() {
		return nil, fmt.Errorf("treemove: the tree is not complete (%d leaves below the root of %d)",
			countRoot(tr), tr.NumLeaves())
	}
	s := &Sampler{
		tr: tr, m: m, rng: rng,
		h:                    &pydt.Harmonic{},
		cs:                   1,
		TimeWidth:            1,
		PosWidth:             0.3,
		AtomLen:              0.1,
		MaxSteps:             8,
		MaxTries:             1000,
		PositionMovesPerLeaf: 0.1,
		LocalMovesPerLeaf:    DefaultLocalMovesPerLeaf,
		LocalRadius:          DefaultLocalRadius,
		LocalGridRadius:      DefaultLocalGridRadius,
		TimeUpdatesPerLeaf:   1,
		Informed:             0,
		InformedMix:          0.1,
	}
	if err := s.SetPrior(alpha, beta, div); err != nil {
		return nil, err
	}
	s.visit = func(e *bp.TimeEval) {
		v := e.Node()
		s.tsave = append(s.tsave, timeSave{v, s.tr.Time(v)})
		s.sliceTime(e, true)
	}
	return s, nil
}

func countRoot(tr *pydt.Tree) int {
	if tr.Root() == pydt.NoNode {
		return 0
	}
	return tr.Count(tr.Root())
}

// SetPrior sets the concentration alpha, the discount beta and the divergence
// function. The harmonic table and the count tables (cache.go) are
// recomputed when alpha or beta change (O(N)); otherwise the call is O(1).
func (s *Sampler) SetPrior(alpha, beta float64, div pydt.Divergence) error {
	if err := pydt.CheckPrior(alpha, beta, div); err != nil {
		return fmt.Errorf("treemove: %w", err)
	}
	if !s.h.Has(alpha, beta) {
		if err := s.h.Reset(alpha, beta); err != nil {
			return fmt.Errorf("treemove: %w", err)
		}
		s.h.Grow(s.tr.NumLeaves())
		s.setCounts(alpha, beta)
	}
	s.alpha, s.beta, s.div = alpha, beta, div
	s.growMemo()
	s.newEpoch()
	return nil
}

// Alpha returns the concentration.
func (s *Sampler) Alpha() float64 { return s.alpha }

// Beta returns the discount.
func (s *Sampler) Beta() float64 { return s.beta }

// Divergence returns the divergence function.
func (s *Sampler) Divergence() pydt.Divergence { return s.div }

// Harmonic returns the sampler's table of harmonic numbers for (alpha, beta),
// grown to N. Callers may read it; it is reset by SetPrior.
func (s *Sampler) Harmonic() *pydt.Harmonic { return s.h }

// Model returns the belief-propagation model the sampler moves.
func (s *Sampler) Model() *bp.Model { return s.m }

// Tree returns the tree the sampler moves.
func (s *Sampler) Tree() *pydt.Tree { return s.tr }

// Rand returns the sampler's random source.
func (s *Sampler) Rand() *rand.Rand { return s.rng }

// ResetStats clears the counters.
func (s *Sampler) ResetStats() { s.Stats = Stats{} }

// LogPosterior returns log p(T) + log L(T) up to a constant: the full O(N)
// prior plus the current log likelihood. For monitoring, not for moves.
func (s *Sampler) LogPosterior() float64 {
	return pydt.LogPrior(s.tr, s.alpha, s.beta, s.div, s.h) + s.m.LogLik()
}

// Sweep runs N subtree moves, round(LocalMovesPerLeaf·N) local moves, about
// TimeUpdatesPerLeaf·N time updates (as TimeSweeps, every branch point once
// each, or with RandomScanTime as TimeMoves on random branch points) and PositionMovesPerLeaf·N position
// moves (at least one), N being the number of leaves; with TopologyFixed,
// the time updates alone. Its error is that of a TimeSweep that could not
// restore the messages (see there).
func (s *Sampler) Sweep() error {
	n := s.tr.NumLeaves()
	if n < 2 {
		return nil
	}
	collapse := s.Collapse != nil && !s.TopologyFixed
	local := int(s.LocalMovesPerLeaf*float64(n) + 0.5)
	if !s.TopologyFixed && !collapse {
		for range n {
			s.SubtreeMove()
		}
	}
	if !s.TopologyFixed && (!collapse || s.LocalGrid > 0) {
		// The informed local moves are not collapsed: they run given c,
		// before the collapsed moves.
		for range local {
			s.LocalMove()
		}
		local = 0
	}
	if in := s.tr.NumInternal(); in > 0 {
		k := s.TimeUpdatesPerLeaf * float64(n)
		if s.RandomScanTime {
			for range int(k + 0.5) {
				s.TimeMove()
			}
		} else {
			for range max(1, int(k/float64(in)+0.5)) {
				if err := s.TimeSweep(); err != nil {
					return err
				}
			}
		}
	}
	if s.TopologyFixed {
		return nil
	}
	k := max(1, int(s.PositionMovesPerLeaf*float64(n)+0.5))
	if collapse {
		return s.collapsedMoves(n, local, k)
	}
	for range k {
		s.PositionMove()
	}
	return nil
}

// randomNonRoot returns a node drawn uniformly from the non-root nodes of
// the tree (N ≥ 2), by rejection on the node IDs: at most 2 tries expected.
func (s *Sampler) randomNonRoot() pydt.NodeID {
	c := s.tr.Cap()
	root := s.tr.Root()
	for {
		v := pydt.NodeID(s.rng.IntN(c))
		if v != root && s.tr.InUse(v) {
			return v
		}
	}
}

// randomInternal returns a branch point drawn uniformly, or NoNode when the
// tree has none.
func (s *Sampler) randomInternal() pydt.NodeID {
	if s.tr.NumInternal() == 0 {
		return pydt.NoNode
	}
	n := s.tr.NumLeaves()
	k := s.tr.Cap() - n
	for {
		v := pydt.NodeID(n + s.rng.IntN(k))
		if s.tr.InUse(v) {
			return v
		}
	}
}

// numNonRoot returns the number of non-root nodes, N + I - 1.
func (s *Sampler) numNonRoot() int { return s.tr.NumLeaves() + s.tr.NumInternal() - 1 }
