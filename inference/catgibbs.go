package inference

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pydtlang/pydtlang/graph"
	"github.com/pydtlang/pydtlang/stdlib"
)

// catGibbsStep draws each element of a categorical latent array whose
// elements are conditionally independent given everything else, such as
// the topic assignments of a topic model,
//
//	z[t] ~ Categorical(theta[doc[t]])
//	w[t] ~ Categorical(phi[z[t]])
//
// from its full conditional by enumeration: p(z[t] = k) ∝ the density of
// z[t]'s own element at k times the densities of the reader elements that
// read z[t], each evaluated with z[t] = k. It is chosen from capabilities:
// z's single distribution offers stdlib.CategoryProbs and does not read
// z, and every element of every reader reads exactly one element of z at
// an index fixed by loop indices and data. The elements are then
// independent given the rest, so updating them one after another is
// the exact Gibbs update of the whole array.
//
// It is not collapsed over the probability vectors (theta above): those
// keep their own update (gibbs(theta[m]) when their prior is a Dirichlet),
// so that the step serves any prior of theirs; a collapsed update would
// have to redraw them in the same step.
//
// A categorical reader whose probability vector is a matrix row
// (phi[z[t]]) is evaluated from the row's logarithms, each row checked
// and its logarithms taken once per update; one whose logits are a row
// (Categorical(softmax(eta[z[t]])), stdlib.CategoryLogits) from the
// row's log softmax, its normaliser computed once per update; other
// readers through their node type's density. When a PYDT's leaves are read through z
// (TreeBinding.Indexed), the step conditions on their sampled locations,
// as ffbs does, and gives the leaves their new evidence.
type catGibbsStep struct {
	m   *Model
	v   *graph.Var
	def *graph.Factor
	K   int
	// own[off] is z's own element at offset off; the reader elements that
	// read z[off] are elems[start[off]:start[off+1]].
	own      []factorElem
	elems    []factorElem
	elemRow  []int // per element of elems: its factor's index into rows, or -1
	start    []int
	readers  []*graph.Factor
	rowOf    map[*graph.Factor]int // probability-row readers: index into rows
	rows     []graph.Row           // their probability vectors, or logits
	logits   []bool                // per row: a logit vector (stdlib.CategoryLogits)
	rowVars  []*graph.Var          // the distinct variables of rows
	rowVarOf []int                 // rows[i]'s variable: index into rowVars
	// rowVarLogits[j] reports whether rowVars[j] is read as logits: a
	// variable read both ways has an entry (and a cache) for each.
	rowVarLogits []bool
	trees        []int
	names        []string
}

// catGibbsScratch is a chain's scratch space of a catGibbsStep.
type catGibbsScratch struct {
	lp     []float64
	logs   [][]float64 // per row variable: the logarithms of its values
	status [][]int8    // per row variable and row: 0 unchecked, 1 valid, -1 not a probability vector
}

// newCatGibbs returns the enumeration step for v, or nil and why not.
func newCatGibbs(m *Model, v *graph.Var) (*catGibbsStep, string) {
	if v.Def == nil || len(v.Defs) != 1 {
		return nil, ""
	}
	def := v.Def
	c, ok := def.Type.(stdlib.CategoryProbs)
	if !ok {
		return nil, ""
	}
	if def.Reads(v) {
		return nil, fmt.Sprintf("%s's distribution reads %s: its elements are not independent given the rest", v.Name, v.Name)
	}
	K := v.Categories
	if r, ok := def.Args[c.ProbsParam()].(graph.Row); ok {
		if K > 0 && K != r.Len() {
			return nil, fmt.Sprintf("%s is categorical(%d) but its probabilities %s have length %d", v.Name, K, r, r.Len())
		}
		K = r.Len()
	}
	if K <= 0 {
		return nil, fmt.Sprintf("the number of categories of %s is not known: declare it categorical(K)", v.Name)
	}
	fs, dets := m.G.Readers(v)
	if len(dets) > 0 {
		return nil, fmt.Sprintf("deterministic variables read %s", v.Name)
	}
	s := &catGibbsStep{m: m, v: v, def: def, K: K, rowOf: map[*graph.Factor]int{}}
	env := graph.NewEnv(m.G)
	own, err := plate(def, env)
	if err != nil {
		return nil, err.Error()
	}
	s.own = make([]factorElem, v.Len())
	seen := make([]bool, v.Len())
	for _, e := range own {
		if e.off < 0 || e.off >= v.Len() || seen[e.off] {
			return nil, fmt.Sprintf("%s does not define each element of %s once", def, v.Name)
		}
		seen[e.off] = true
		s.own[e.off] = e
	}
	if slices.Contains(seen, false) {
		return nil, fmt.Sprintf("%s does not define every element of %s", def, v.Name)
	}
	s.addRow(def)
	byOff := make([][]factorElem, v.Len())
	for _, f := range fs {
		if f.IsPYDT() {
			return nil, fmt.Sprintf("%s reads %s", f, v.Name)
		}
		elems, err := plate(f, env)
		if err != nil {
			return nil, err.Error()
		}
		for _, e := range elems {
			t, ok := readsOne(e, v, env)
			if !ok {
				return nil, fmt.Sprintf("%s does not read exactly one element of %s, at an index fixed by loop indices, constants and data", f, v.Name)
			}
			byOff[t] = append(byOff[t], e)
		}
		s.readers = append(s.readers, f)
		s.addRow(f)
		if !slices.Contains(s.names, f.Target.Name) {
			s.names = append(s.names, f.Target.Name)
		}
	}
	s.start = make([]int, v.Len()+1)
	for off, es := range byOff {
		s.elems = append(s.elems, es...)
		s.start[off+1] = len(s.elems)
	}
	s.elemRow = make([]int, len(s.elems))
	for i, e := range s.elems {
		s.elemRow[i] = -1
		if ri, ok := s.rowOf[e.f]; ok {
			s.elemRow[i] = ri
		}
	}
	for k, b := range m.Trees {
		if b.index != nil && graph.Reads(b.index, v) {
			s.trees = append(s.trees, k)
		}
	}
	return s, ""
}

// addRow records f when it is a categorical factor whose probability
// vector is a matrix row and whose other parameters do not read the
// updated variable: it is then evaluated from the row's logarithms.
func (s *catGibbsStep) addRow(f *graph.Factor) {
	param, logits := -1, false
	if c, ok := f.Type.(stdlib.CategoryProbs); ok {
		param = c.ProbsParam()
	} else if c, ok := f.Type.(stdlib.CategoryLogits); ok {
		param, logits = c.LogitsParam(), true
	}
	if param < 0 {
		return
	}
	if _, ok := f.Vector(); !ok {
		return
	}
	r, ok := f.Args[param].(graph.Row)
	if !ok || r.V == s.v || len(r.V.Dims) == 0 {
		return
	}
	for i, a := range f.Args {
		if i != param && graph.Reads(a, s.v) {
			return
		}
	}
	// A variable read both as probabilities and as logits has two caches
	// (log p and log softmax differ).
	i := -1
	for j, v := range s.rowVars {
		if v == r.V && s.rowVarLogits[j] == logits {
			i = j
		}
	}
	if i < 0 {
		i = len(s.rowVars)
		s.rowVars = append(s.rowVars, r.V)
		s.rowVarLogits = append(s.rowVarLogits, logits)
	}
	s.rowOf[f] = len(s.rows)
	s.rows = append(s.rows, r)
	s.logits = append(s.logits, logits)
	s.rowVarOf = append(s.rowVarOf, i)
}

func (s *catGibbsStep) Name() string { return "gibbs(" + s.v.Name + ")" }

func (s *catGibbsStep) Explain() string {
	out := fmt.Sprintf("Gibbs by enumeration: each element of %s from its %d categories, with probabilities its %s density", s.v.Name, s.K, s.def.TypeName())
	if len(s.names) > 0 {
		out += " times that of the elements of " + strings.Join(s.names, ", ") + " reading it"
	}
	out += " (the elements are independent given the rest; not collapsed)"
	for _, k := range s.trees {
		out += fmt.Sprintf("; given the sampled leaf locations %s, which then get the evidence of the data each category is assigned", s.m.Trees[k].Leaves.Name)
	}
	return out
}

func (s *catGibbsStep) targets() []siteTarget {
	terms := []term{{F: s.def, Elem: -1}}
	for _, f := range s.readers {
		terms = append(terms, term{F: f, Elem: -1})
	}
	out := make([]siteTarget, s.v.Len())
	for off := range out {
		out[off] = siteTarget{V: s.v, Off: off, Terms: terms}
	}
	return out
}

// logCat is the log density of the categorical element e, whose
// probability vector (or logit vector: its log softmax) is rows[ri], at
// the category x (NaN: missing, 0).
func (s *catGibbsStep) logCat(ch *Chain, sc *catGibbsScratch, e factorElem, ri int, x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	env := ch.st.Env
	for k, l := range e.f.Loops {
		env.Loop[l.Slot] = e.loop[k]
	}
	r := s.rows[ri]
	off, err := r.Offset(env)
	if err != nil {
		return math.NaN() // the error is recorded in env
	}
	n := r.Len()
	vi := s.rowVarOf[ri]
	row := off / n
	switch sc.status[vi][row] {
	case 0:
		vals := env.Values[r.V.ID][off : off+n]
		if s.logits[ri] {
			// log softmax(η)_j = η_j − log Σ exp(η): the normaliser once.
			lse := stdlib.LogSoftmaxNorm(vals)
			if math.IsNaN(lse) || math.IsInf(lse, 0) {
				sc.status[vi][row] = -1
				return math.Inf(-1)
			}
			for j, x := range vals {
				sc.logs[vi][off+j] = x - lse
			}
		} else {
			if stdlib.CheckProbs(vals, n) != nil {
				sc.status[vi][row] = -1
				return math.Inf(-1)
			}
			for j, p := range vals {
				sc.logs[vi][off+j] = math.Log(p)
			}
		}
		sc.status[vi][row] = 1
	case -1:
		return math.Inf(-1)
	}
	if x != math.Trunc(x) || x < 1 || x > float64(n) {
		return math.Inf(-1)
	}
	return sc.logs[vi][off+int(x)-1]
}

// scratch returns the chain's scratch space of s, its rows marked
// unchecked.
func (s *catGibbsStep) scratch(ch *Chain) *catGibbsScratch {
	sc := scratchOf(ch, s, func() *catGibbsScratch {
		sc := &catGibbsScratch{lp: make([]float64, s.K)}
		for _, v := range s.rowVars {
			n := v.Dims[len(v.Dims)-1]
			sc.logs = append(sc.logs, make([]float64, v.Len()))
			sc.status = append(sc.status, make([]int8, v.Len()/n))
		}
		return sc
	})
	for _, st := range sc.status {
		clear(st)
	}
	return sc
}

func (s *catGibbsStep) update(ch *Chain) error {
	env := ch.st.Env
	sc := s.scratch(ch)
	for _, k := range s.trees {
		t := ch.trees[k]
		copy(env.Values[t.b.Leaves.ID], t.locs[:t.b.N*t.b.D])
	}
	z := env.Values[s.v.ID]
	for off := range z {
		saved := z[off]
		s.weights(ch, sc, off)
		z[off] = saved
		if err := env.Err(); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
		k, err := drawLogCategory(ch, sc.lp)
		if err != nil {
			return fmt.Errorf("%s: element %d: %w", s.Name(), off+1, err)
		}
		z[off] = float64(k)
	}
	for _, k := range s.trees {
		if err := ch.trees[k].syncEvidence(env, &ch.leafParams); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	return nil
}

// weights sets sc.lp[k] to the log of the unnormalised conditional
// probability of z[off] = k + 1: its own element's log density plus those
// of the reader elements that read it. It leaves z[off] at K.
func (s *catGibbsStep) weights(ch *Chain, sc *catGibbsScratch, off int) {
	env := ch.st.Env
	z := env.Values[s.v.ID]
	ownRow, ownFast := s.rowOf[s.def]
	for k := range s.K {
		z[off] = float64(k + 1)
		var lp float64
		if ownFast {
			lp = s.logCat(ch, sc, s.own[off], ownRow, z[off])
		} else {
			lp = ch.logElem(s.own[off])
		}
		for i := s.start[off]; i < s.start[off+1]; i++ {
			if lp == math.Inf(-1) {
				break
			}
			e := s.elems[i]
			if ri := s.elemRow[i]; ri >= 0 {
				lp += s.logCat(ch, sc, e, ri, env.Values[e.f.Target.ID][e.off])
			} else {
				lp += ch.logElem(e)
			}
		}
		sc.lp[k] = lp
	}
}

// drawLogCategory draws a category 1..len(lp) with probabilities
// proportional to exp(lp), overwriting lp. It refuses log weights that
// are NaN or +Inf, or all -Inf.
func drawLogCategory(ch *Chain, lp []float64) (int, error) {
	hi := math.Inf(-1)
	for k, x := range lp {
		if math.IsNaN(x) || math.IsInf(x, 1) {
			return 0, fmt.Errorf("the log density of category %d is %v", k+1, x)
		}
		hi = max(hi, x)
	}
	if math.IsInf(hi, -1) {
		return 0, fmt.Errorf("no category has positive probability")
	}
	for k, x := range lp {
		lp[k] = math.Exp(x - hi)
	}
	return stdlib.DrawCategory(ch.rng, lp), nil
}
