package inference

import (
	"fmt"
	"math"

	"github.com/pydtlang/pydtlang/inference/treemove"
	"github.com/pydtlang/pydtlang/stdlib/pydt"
)

// probitHMCStep draws the auxiliaries u of a threshold likelihood (Probit)
// from their conditional given the tree, the diffusion variance and the
// data, with every location integrated out, by exact Hamiltonian Monte
// Carlo for truncated Gaussians (Pakman & Paninski 2014, "Exact Hamiltonian
// Monte Carlo for truncated multivariate Gaussians", JCGS 23).
//
// Given the tree and σ²_d, the columns d are independent and the observed
// auxiliaries of column d are u_d = Z_d + ε_d ~ N(0, K_d), K_d = σ²_d C + I
// with C_ij = t of the lowest common ancestor of leaves i and j (1 on the
// diagonal), truncated to the orthant Side(y_i)·u_i > 0. In whitened
// coordinates the Hamiltonian with a Gaussian potential moves on ellipses,
// so every linear function of the position moves harmonically: u(τ) =
// u cos τ + v sin τ, the initial velocity v a draw of N(0, K_d) (a draw of
// the diffusion at the leaves plus unit noise). When u_i reaches 0 the
// velocity reflects off the wall, v ← v − 2 (v_i / K_ii) K_{·i}; the
// trajectory runs for τ = π/2, which without walls gives an independent
// draw. The move is exact: no acceptance step.
//
// It replaces nothing: probit-aux draws u given the sampled locations, whose
// alternation with the locations given u moves slowly where σ² is large
// next to the unit noise (on animals σ² ≈ 50: each entry of u moves by
// about 1 per sweep where its range is about 7); this move refreshes u in
// one step, so the tree moves of the next sweep see auxiliaries that no
// longer remember the previous trees.
type probitHMCStep struct {
	k        int // the PYDT's index in Model.Trees
	several  bool
	data     string // the data's name
	duration float64
}

// probitHMC returns the move for the k-th PYDT when its leaf factor is a
// stdlib.ThresholdLeaf with data.
func probitHMC(m *Model, k int) (Updater, bool) {
	b := m.Trees[k]
	if b.Threshold() == nil || b.Data == nil {
		return nil, false
	}
	return &probitHMCStep{k: k, several: m.Several(), data: b.Data.Name, duration: math.Pi / 2}, true
}

// Name is "hmc(u)"; in a model with several PYDTs, followed by the data's
// name: "hmc(u of Y)".
func (s *probitHMCStep) Name() string {
	if s.several {
		return "hmc(u of " + s.data + ")"
	}
	return "hmc(u)"
}

func (s *probitHMCStep) Explain() string {
	return "exact Hamiltonian Monte Carlo for truncated Gaussians (Pakman & Paninski 2014): draws the auxiliaries u " +
		"given the tree, the variance and the signs in the data, the locations integrated out " +
		"(u ~ N(0, σ²C + I) per column, reflected at u = 0), so the tree moves see fresh auxiliaries every sweep"
}

// hmcScratch is a chain's scratch space for probitHMCStep.
type hmcScratch struct {
	order     []pydt.NodeID // post-order
	first     []int         // per node: the position of its first leaf in order
	leafAt    []int         // leaves in order
	tval      []float64     // per node: its time t (1 at the leaves)
	edgeSD    []float64     // per node: √(length of the edge above it)
	loc       []float64     // per node: a draw of the diffusion, one column
	col       []float64     // per leaf: a column of C
	obs       []int         // the observed leaves of a column
	x, v, sgn []float64     // per observed leaf: position, velocity, side
	variances []float64
}

// layout sets the tree's layout for lcaColumn and the diffusion draw:
// leaves in depth-first post-order (the leaves below a node are
// contiguous), each node's first leaf, times and edge lengths.
func (sc *hmcScratch) layout(tr *pydt.Tree, n int) {
	sc.order = tr.PostOrder(sc.order[:0])
	c := tr.Cap()
	sc.first = grow(sc.first, c)
	sc.leafAt = grow(sc.leafAt, n)
	sc.tval = grow(sc.tval, c)
	sc.edgeSD = grow(sc.edgeSD, c)
	sc.loc = grow(sc.loc, c)
	sc.col = grow(sc.col, n)
	pos := 0
	for _, v := range sc.order {
		if tr.IsLeaf(v) {
			sc.first[v] = pos
			sc.leafAt[pos] = int(v)
			pos++
			sc.tval[v] = 1
		} else {
			sc.first[v] = sc.first[tr.FirstChild(v)]
			sc.tval[v] = tr.Time(v).T()
		}
		sc.edgeSD[v] = math.Sqrt(tr.BranchLength(v))
	}
}

// maxBounces bounds the wall reflections of one column's trajectory; a
// trajectory that reaches it is abandoned and the column keeps its u. The
// reversed trajectory reflects as often, so refusing by the count keeps the
// move reversible, hence exact. On animals a column reflects 16 times on
// average and at most 118 times in 51,000; near a degenerate tree (leaves
// whose common ancestor lies at t ≈ 1, u nearly collinear) the wedges
// between walls are thin and a trajectory can need millions.
const maxBounces = 1000

func (s *probitHMCStep) update(ch *Chain) error {
	t := ch.trees[s.k]
	b, tr, env := t.b, t.Tree, ch.st.Env
	sc := &ch.probit.hmc
	y := env.Values[b.Data.ID]
	n, d := b.N, b.D
	if len(sc.variances) != d {
		sc.variances = make([]float64, d)
	}
	if err := b.Factor.Variances(env, sc.variances); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	sc.layout(tr, n)
	th := b.Threshold()
	t.savedAux = append(t.savedAux[:0], t.aux...)
	for dim := range d {
		s2 := sc.variances[dim]
		sig := math.Sqrt(s2)
		if !(s2 > 0) || math.IsInf(s2, 1) {
			return fmt.Errorf("%s: the diffusion variance of column %d is %v", s.Name(), dim+1, s2)
		}
		sc.obs, sc.x, sc.sgn = sc.obs[:0], sc.x[:0], sc.sgn[:0]
		feasible := true
		for i := range n {
			k := i*d + dim
			if math.IsNaN(y[k]) {
				continue
			}
			sg := th.Side(y[k])
			sc.obs = append(sc.obs, i)
			sc.x = append(sc.x, t.aux[k])
			sc.sgn = append(sc.sgn, sg)
			feasible = feasible && sg*t.aux[k] > 0
		}
		if len(sc.obs) == 0 {
			continue
		}
		if !feasible {
			ch.Skipped++ // a state outside the support: leave the column alone
			continue
		}
		// The initial velocity: the diffusion down the tree plus unit noise.
		for o := len(sc.order) - 1; o >= 0; o-- { // parents before children
			v := sc.order[o]
			p := 0.0
			if pa := tr.Parent(v); pa != pydt.NoNode {
				p = sc.loc[pa]
			}
			sc.loc[v] = p + sig*sc.edgeSD[v]*ch.rng.NormFloat64()
		}
		sc.v = sc.v[:0]
		for _, i := range sc.obs {
			sc.v = append(sc.v, sc.loc[i]+ch.rng.NormFloat64())
		}
		if !s.trajectory(sc, tr, s2) {
			ch.Skipped++
			continue
		}
		for j, i := range sc.obs {
			k := i*d + dim
			t.aux[k] = sc.x[j]
			if err := t.lik.SetEvidence(pydt.NodeID(i), dim, sc.x[j], 1); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
	}
	if treemove.Evaluable(t.lik.LogLik()) {
		return nil
	}
	// Refused: auxiliaries whose evidence float64 cannot evaluate on this
	// tree (as in probit-aux).
	ch.Skipped++
	copy(t.aux, t.savedAux)
	return t.syncEvidence(env, &ch.leafParams)
}

// trajectory moves sc.x with velocity sc.v for time s.duration under the
// harmonic dynamics, reflecting at the walls sgn·x = 0 with K = s2·C + I.
// It reports false, leaving sc.x unusable, when the trajectory needed more
// than maxBounces reflections or ended outside the orthant (rounding).
func (s *probitHMCStep) trajectory(sc *hmcScratch, tr *pydt.Tree, s2 float64) bool {
	x, v, sgn := sc.x, sc.v, sc.sgn
	left := s.duration
	for range maxBounces {
		// The first wall reached: with a = sgn·x > 0 and b = sgn·v, the
		// coordinate sgn·x(τ) = a cos τ + b sin τ reaches 0 first at
		// τ = atan2(b, a) + π/2, which is π/2 or more (beyond the time
		// left) when b ≥ 0, and atan(a/(−b)) when b < 0: the first wall
		// is the one with the smallest a/(−b), and one arctangent serves.
		// A coordinate a rounding step outside (a < 0) and moving out is
		// reflected at once.
		ratio, wall := math.Inf(1), -1
		for j := range x {
			if b := sgn[j] * v[j]; b < 0 {
				if r := sgn[j] * x[j] / -b; r < ratio {
					ratio, wall = r, j
				}
			}
		}
		hit := left
		if wall >= 0 {
			if h := math.Atan(ratio); h < left {
				hit = max(h, 0)
			} else {
				wall = -1
			}
		}
		cs, sn := math.Cos(hit), math.Sin(hit)
		for j := range x {
			x[j], v[j] = x[j]*cs+v[j]*sn, v[j]*cs-x[j]*sn
		}
		if wall < 0 {
			for j := range x {
				if !(sgn[j]*x[j] > 0) {
					return false
				}
			}
			return true
		}
		left -= hit
		x[wall] = 0
		// Reflect: v ← v − 2 (v_w / K_ww) K_{·w}, K_ww = s2 + 1.
		lcaColumn(sc, tr, sc.obs[wall])
		f := 2 * v[wall] / (s2 + 1)
		for j, i := range sc.obs {
			kw := s2 * sc.col[i]
			if j == wall {
				kw++
			}
			v[j] -= f * kw
		}
	}
	return false
}

// lcaColumn sets sc.col[j] to the time of the lowest common ancestor of
// leaves i and j for every leaf j (1 for j = i), walking up from i: the
// leaves below an ancestor a but not below its child on the path have a as
// their common ancestor with i.
func lcaColumn(sc *hmcScratch, tr *pydt.Tree, i int) {
	sc.col[i] = 1
	c := pydt.NodeID(i)
	for a := tr.Parent(c); a != pydt.NoNode; c, a = a, tr.Parent(a) {
		ta := sc.tval[a]
		lo, hi := sc.first[a], sc.first[a]+tr.Count(a)
		clo, chi := sc.first[c], sc.first[c]+tr.Count(c)
		for p := lo; p < clo; p++ {
			sc.col[sc.leafAt[p]] = ta
		}
		for p := chi; p < hi; p++ {
			sc.col[sc.leafAt[p]] = ta
		}
	}
}

// grow returns buf with length n, reusing its storage when it can.
func grow[T any](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]T, n)
}
