package diagnostics

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestSummaryJSON(t *testing.T) {
	sums := []Summary{
		{Name: "a", Mean: 1.5, SD: 0.25, Q5: 1, Q50: 1.5, Q95: 2, Rhat: 1.001, ESSBulk: 3900.5, ESSTail: 3500, N: 4000},
		{Name: "c", Mean: 2, SD: 0, Q5: 2, Q50: 2, Q95: 2, Rhat: math.NaN(), ESSBulk: math.NaN(), ESSTail: math.Inf(1), N: 10},
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sums); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("invalid JSON:\n%s", buf.String())
	}
	var generic []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	keys := []string{"name", "mean", "sd", "q5", "q50", "q95", "rhat", "ess_bulk", "ess_tail", "n"}
	for _, k := range keys {
		if _, ok := generic[0][k]; !ok {
			t.Errorf("key %q missing from %v", k, generic[0])
		}
	}
	for _, k := range []string{"rhat", "ess_bulk", "ess_tail"} {
		if v, ok := generic[1][k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if generic[0]["ess_bulk"] != 3900.5 || generic[1]["sd"] != 0.0 {
		t.Errorf("values not preserved: %v", generic)
	}
	var back []Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back[0] != sums[0] {
		t.Errorf("round trip %+v, want %+v", back[0], sums[0])
	}
	if !math.IsNaN(back[1].Rhat) || !math.IsNaN(back[1].ESSBulk) || !math.IsNaN(back[1].ESSTail) || back[1].Mean != 2 {
		t.Errorf("round trip of nulls: %+v", back[1])
	}
	var s Summary
	if err := json.Unmarshal([]byte(`{"name": 3}`), &s); err == nil {
		t.Error("bad JSON decoded without error")
	}
	// A pointer and a value both encode through MarshalJSON.
	b, err := json.Marshal(&sums[1])
	if err != nil || !strings.Contains(string(b), `"rhat":null`) {
		t.Errorf("Marshal(&s) = %s, %v", b, err)
	}
	buf.Reset()
	if err := WriteJSON(&buf, nil); err != nil || strings.TrimSpace(buf.String()) != "[]" {
		t.Errorf("WriteJSON(nil) = %q, %v", buf.String(), err)
	}
}

func TestFormatSig(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{4.1834, "4.18"}, {-4.1834, "-4.18"}, {0.012345, "0.0123"}, {12345.6, "12346"},
		{9.996, "10.0"}, {0.0009996, "1.00e-03"}, {0.0009994, "9.99e-04"}, {0.001, "0.00100"}, {1.5e-5, "1.50e-05"},
		{-2e7, "-2.00e+07"}, {999999, "999999"}, {0, "0"}, {100, "100"},
		{math.NaN(), "NA"}, {math.Inf(1), "Inf"}, {math.Inf(-1), "-Inf"},
	} {
		if got := formatSig(tc.v, 3); got != tc.want {
			t.Errorf("formatSig(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	sums := []Summary{
		{Name: "alpha", Mean: 4.1834, SD: 3.3952, Q5: -1.4825, Q50: 4.1641, Q95: 9.3892, Rhat: 1.0234, ESSBulk: 557.6, ESSTail: 321.8, N: 4000},
		{Name: "theta[10]", Mean: 2, SD: 0, Q5: 2, Q50: 2, Q95: 2, Rhat: math.NaN(), ESSBulk: math.NaN(), ESSTail: math.NaN(), N: 4000},
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, sums); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"variable   mean    sd     q5   q50   q95   rhat  ess_bulk  ess_tail\n" +
		"alpha      4.18  3.40  -1.48  4.16  9.39  1.023       558       322\n" +
		"theta[10]  2.00     0   2.00  2.00  2.00     NA        NA        NA\n"
	if buf.String() != want {
		t.Errorf("WriteTable:\n%s\nwant:\n%s", buf.String(), want)
	}
	if err := WriteTable(failWriter{}, sums); err == nil || !errors.Is(err, errFail) {
		t.Errorf("write error not wrapped: %v", err)
	}
}

var errFail = errors.New("fail")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

func TestSummarizeAllocations(t *testing.T) {
	ch := ar1(rand.New(rand.NewPCG(5, 6)), 4, 1000, 0.5)
	Summarize("x", ch) // warm the pool
	allocs := testing.AllocsPerRun(50, func() { Summarize("x", ch) })
	// A garbage collection may empty the sync.Pool once in a while; the
	// steady state allocates nothing.
	if allocs > 1 {
		t.Errorf("Summarize allocates %v times per call", allocs)
	}
}

func BenchmarkSummarize(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		ch := ar1(rand.New(rand.NewPCG(1, 1)), 4, n, 0.5)
		b.Run("4x"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Summarize("x", ch)
			}
		})
	}
}

func BenchmarkESSBulk(b *testing.B) {
	ch := ar1(rand.New(rand.NewPCG(1, 1)), 4, 1000, 0.5)
	b.ReportAllocs()
	for b.Loop() {
		ESSBulk(ch)
	}
}
