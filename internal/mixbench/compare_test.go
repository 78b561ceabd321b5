package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// compareTraces reads the trace files at paths whole and returns compare's
// table of them.
func compareTraces(t *testing.T, paths ...string) string {
	t.Helper()
	var ts []traceData
	for _, p := range paths {
		td, err := readTrace(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, td)
	}
	var w strings.Builder
	compare(&w, ts)
	return w.String()
}

// writeTrace writes a trace file of the columns compare reads (and a
// scalar it does not), with cpu_s growing by 0.5 per row, and returns its
// path; tail is appended as is (an incomplete last row). Its sum_s column
// is rt+1 when withSum is set, absent otherwise (as in traces written
// before it existed).
func writeTrace(t *testing.T, ll, c, rt []float64, tail string, withSum bool) string {
	t.Helper()
	var b strings.Builder
	if withSum {
		b.WriteString("sweep,log_lik,c,root_t,sum_s,prec,cpu_s\n")
	} else {
		b.WriteString("sweep,log_lik,c,root_t,prec,cpu_s\n")
	}
	for i := range ll {
		if withSum {
			fmt.Fprintf(&b, "%d,%g,%g,%g,%g,1,%g\n", i+1, ll[i], c[i], rt[i], rt[i]+1, 0.5*float64(i+1))
		} else {
			fmt.Fprintf(&b, "%d,%g,%g,%g,1,%g\n", i+1, ll[i], c[i], rt[i], 0.5*float64(i+1))
		}
	}
	b.WriteString(tail)
	path := filepath.Join(t.TempDir(), "tr.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ar1 returns n draws of a stationary AR(1) process of coefficient phi
// about mean mu.
func ar1(n int, phi, mu float64, seed uint64) []float64 {
	rng := newRand(seed)
	x := make([]float64, n)
	v := rng.NormFloat64() / math.Sqrt(1-phi*phi)
	for i := range x {
		v = phi*v + rng.NormFloat64()
		x[i] = mu + v
	}
	return x
}

// TestCompare: two stationary chains about the same mean have small
// half-to-half z and an R-hat near 1; a chain whose second half sits 3
// marginal sds higher has a large z, and with a stationary chain an R-hat
// far above 1. readTrace drops the first skip rows (and their CPU) and an
// incomplete last row.
func TestCompare(t *testing.T) {
	const n = 4000
	a := writeTrace(t, ar1(n, 0.9, -100, 1), ar1(n, 0.5, 2, 2), ar1(n, 0.5, 0.3, 3), "4001,-99.5,2.", true)
	b := writeTrace(t, ar1(n, 0.9, -100, 4), ar1(n, 0.5, 2, 5), ar1(n, 0.5, 0.3, 6), "", false)
	shifted := ar1(n, 0.9, -100, 7)
	for i := n / 2; i < n; i++ {
		shifted[i] += 3 / math.Sqrt(1-0.81)
	}
	s := writeTrace(t, shifted, ar1(n, 0.5, 2, 8), ar1(n, 0.5, 0.3, 9), "", false)

	ta, err := readTrace(a, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ta.cols[0]) != n-1000 || len(ta.cols[3]) != n-1000 || !(math.Abs(ta.cpu-0.5*(n-1000)) <= 1e-9) {
		t.Fatalf("after skipping 1000 rows: %d rows (%d of sum_s), %v CPU s", len(ta.cols[0]), len(ta.cols[3]), ta.cpu)
	}
	if d := ta.cols[3][0] - ta.cols[2][0]; d != 1 {
		t.Errorf("sum_s read as root_t %+v", d)
	}
	table := func(paths ...string) map[string][]string {
		rows := map[string][]string{}
		for _, line := range strings.Split(compareTraces(t, paths...), "\n") {
			f := strings.Split(line, "|")
			if len(f) > 3 {
				for i := range f {
					f[i] = strings.TrimSpace(f[i])
				}
				key := f[1]
				if len(f) > 5 {
					key = filepath.Base(filepath.Dir(f[1])) + " " + f[4]
				}
				rows[key] = f[1 : len(f)-1]
			}
		}
		return rows
	}
	num := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	ok := table(a, b)
	for _, p := range []string{a, b} {
		for _, name := range compareCols[:3] {
			r := ok[filepath.Base(filepath.Dir(p))+" "+name]
			if r == nil {
				t.Fatalf("no row for %s %s", p, name)
			}
			if z := num(r[6]); !(math.Abs(z) <= 4) {
				t.Errorf("stationary %s: z = %v", name, z)
			}
		}
	}
	if ok[filepath.Base(filepath.Dir(a))+" sum_s"] == nil || ok[filepath.Base(filepath.Dir(b))+" sum_s"] != nil || ok["sum_s"] != nil {
		t.Error("sum_s: want a row for the trace that has it only, and no R-hat row")
	}
	if r := num(ok["log_lik"][1]); r > 1.05 {
		t.Errorf("R-hat of two stationary chains %v", r)
	}
	bad := table(a, s)
	if z := num(bad[filepath.Base(filepath.Dir(s))+" log_lik"][6]); z < 10 {
		t.Errorf("shifted chain: z = %v", z)
	}
	if r := num(bad["log_lik"][1]); r < 1.2 {
		t.Errorf("R-hat with a shifted chain %v", r)
	}
	if _, err := readTrace(a, n); err == nil {
		t.Error("skipping every row: no error")
	}
}

// TestCompareConstant: a column constant in every trace (a clamped c) is
// reported as "constant", not as NaN, in its per-trace rows and in the
// R-hat table; the other columns are unaffected.
func TestCompareConstant(t *testing.T) {
	const n = 400
	c := make([]float64, n)
	for i := range c {
		c[i] = 2.5
	}
	a := writeTrace(t, ar1(n, 0.5, -100, 1), c, ar1(n, 0.5, 0.3, 2), "", true)
	b := writeTrace(t, ar1(n, 0.5, -100, 3), c, ar1(n, 0.5, 0.3, 4), "", true)
	out := compareTraces(t, a, b)
	if strings.Contains(strings.ToLower(out), "nan") {
		t.Errorf("NaN in the table:\n%s", out)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		switch {
		case len(f) == 12 && f[4] == "c":
			rows++
			if f[5] != "2.5" || f[7] != "constant" || f[8] != "constant" || f[10] != "constant" {
				t.Errorf("constant column's row %q", line)
			}
		case len(f) == 5 && f[1] == "c":
			rows++
			if f[2] != "constant" || f[3] != "constant" {
				t.Errorf("constant column's R-hat row %q", line)
			}
		case len(f) == 5 && f[1] == "log_lik":
			if _, err := strconv.ParseFloat(f[2], 64); err != nil {
				t.Errorf("log_lik's R-hat row %q", line)
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows for c, want 3:\n%s", rows, out)
	}
}
