package stdlib

import "math"

// Func is a deterministic function that model expressions may call.
type Func struct {
	Name  string
	Arity int // 1 or 2
	Doc   string
	Eval  func(args []float64) float64
}

// stdFuncs are the standard library's deterministic functions.
func stdFuncs() []*Func {
	var funcs []*Func
	registerFunc := func(f *Func) { funcs = append(funcs, f) }
	unary := []struct {
		name, doc string
		f         func(float64) float64
	}{
		{"exp", "e^x", math.Exp},
		{"log", "natural logarithm", math.Log},
		{"sqrt", "square root", math.Sqrt},
		{"abs", "absolute value", math.Abs},
		{"log1p", "log(1 + x), accurate for small x", math.Log1p},
		{"expm1", "e^x - 1, accurate for small x", math.Expm1},
		{"inv_logit", "1/(1 + e^-x)", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
		{"logit", "log(x/(1 - x))", func(x float64) float64 { return math.Log(x / (1 - x)) }},
		{"Phi", "the standard normal distribution function", func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }},
	}
	for _, u := range unary {
		f := u.f
		registerFunc(&Func{Name: u.name, Arity: 1, Doc: u.doc, Eval: func(a []float64) float64 { return f(a[0]) }})
	}
	registerFunc(&Func{Name: "pow", Arity: 2, Doc: "x^y", Eval: func(a []float64) float64 { return math.Pow(a[0], a[1]) }})
	registerFunc(&Func{Name: "min", Arity: 2, Doc: "the smaller of x and y", Eval: func(a []float64) float64 { return math.Min(a[0], a[1]) }})
	registerFunc(&Func{Name: "max", Arity: 2, Doc: "the larger of x and y", Eval: func(a []float64) float64 { return math.Max(a[0], a[1]) }})
	return funcs
}
