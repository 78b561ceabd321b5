package graph

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/pydtlang/pydtlang/stdlib"
)

// Shape prints v's shape: "scalar" or "[33, 102]", with "?" for unbound
// dimensions.
func (v *Var) Shape() string {
	if v.Scalar() {
		return "scalar"
	}
	parts := make([]string, len(v.Dims))
	for i, d := range v.Dims {
		if d < 0 {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// String prints the factor in model syntax, e.g. "X ~ PYDT(alpha, beta,
// DivInv(c), 1 / prec)" or "Y[i, d] ~ Probit(Z[i, d]) for i in 1:33, d in 1:102".
func (f *Factor) String() string {
	var b strings.Builder
	b.WriteString(f.Target.Name)
	vectorised := len(f.Loops) > 0 && strings.HasPrefix(f.Loops[0].Name, "_")
	if len(f.Index) > 0 && !vectorised {
		parts := make([]string, len(f.Index))
		for i, x := range f.Index {
			parts[i] = x.String()
		}
		fmt.Fprintf(&b, "[%s]", strings.Join(parts, ", "))
	}
	b.WriteString(" ~ ")
	b.WriteString(f.TypeName())
	b.WriteString("(")
	for i, a := range f.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a == nil && f.Divergence != nil {
			b.WriteString(f.Divergence.String())
			continue
		}
		if ff, ok := f.Type.(stdlib.FusedFunc); ok && ff.FuncOf(i) != nil {
			fmt.Fprintf(&b, "%s(%s)", ff.FuncOf(i).Name, a)
			continue
		}
		b.WriteString(a.String())
	}
	b.WriteString(")")
	if vectorised {
		b.WriteString(" elementwise")
	} else if len(f.Loops) > 0 {
		parts := make([]string, len(f.Loops))
		for i, l := range f.Loops {
			if l.Hi < l.Lo {
				parts[i] = fmt.Sprintf("%s in (unbound range)", l.Name)
				continue
			}
			parts[i] = fmt.Sprintf("%s in %d:%d", l.Name, l.Lo, l.Hi)
		}
		b.WriteString(" for " + strings.Join(parts, ", "))
	}
	return b.String()
}

// String prints the divergence function, e.g. "DivInv(c)".
func (d *DivergenceExpr) String() string {
	parts := make([]string, len(d.Args))
	for i, a := range d.Args {
		parts[i] = a.String()
	}
	return d.Type.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Summary writes a readable description of the graph: dimensions,
// variables with their roles, shapes and supports, and the factors.
func (g *Graph) Summary(w io.Writer) error {
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model %s\n", g.File.Name)
	if len(g.Dims) > 0 {
		parts := make([]string, len(g.Dims))
		for i, d := range g.Dims {
			val := "unbound"
			if d.Value != nil {
				val = fmt.Sprint(d.Value[0])
			}
			parts[i] = fmt.Sprintf("%s = %s", d.Name, val)
		}
		fmt.Fprintf(tw, "dimensions: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(tw, "\nvariables:")
	fmt.Fprintln(tw, "  name\trole\tshape\tsupport\tdetail")
	for _, v := range g.Vars {
		if v.Role == Constant && v.Kind == "int" && v.Scalar() && isDimVar(g, v) {
			continue
		}
		detail := ""
		switch {
		case v.Role == Constant && v.Value != nil:
			detail = fmt.Sprintf("= %g", v.Value[0])
		case v.Role == Clamped && v.Def != nil && v.Def.Omitted:
			detail = fmt.Sprintf("= %g (--set; outside %s's support, so its factor is left out)", v.Value[0], v.Def.TypeName())
		case v.Role == Clamped:
			detail = fmt.Sprintf("= %g (--set)", v.Value[0])
		case v.Role == Observed && v.Data != nil:
			missing := 0
			for _, x := range v.Value {
				if math.IsNaN(x) {
					missing++
				}
			}
			detail = fmt.Sprintf("from %s, %d missing", v.Data.Source, missing)
		case v.Role == Observed && v.Value != nil:
			detail = fmt.Sprintf("= %g (--set)", v.Value[0])
		case v.Role == Deterministic && v.Expr != nil:
			detail = "= " + v.Expr.String()
		}
		if v.Def != nil && v.Def.IsPYDT() {
			if detail != "" {
				detail += "; "
			}
			detail += "with a latent tree"
		}
		if v.Categories > 0 {
			if detail != "" {
				detail += "; "
			}
			detail += fmt.Sprintf("categories 1..%d", v.Categories)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", v.Name, v.Role, v.Shape(), v.Support, detail)
	}
	fmt.Fprintln(tw, "\nfactors:")
	for _, f := range g.Factors {
		if f.Omitted {
			fmt.Fprintf(tw, "  %s (left out: %s = %g)\n", f, f.Target.Name, f.Target.Value[0])
			continue
		}
		fmt.Fprintf(tw, "  %s\n", f)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func isDimVar(g *Graph, v *Var) bool {
	for _, d := range g.Dims {
		if d == v {
			return true
		}
	}
	return false
}
