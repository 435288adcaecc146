// Package churn implements the BG/NBD model of Fader, Hardie & Lee,
// "Counting Your Customers the Easy Way: An Alternative to the Pareto/NBD
// Model" (Marketing Science 24(2), 2005): from a customer's repeat
// purchases x, the time of the last one t_x and the time observed T, the
// probability that the customer is still active and the purchases to
// expect. Its four parameters are fitted per tenant by maximum likelihood.
package churn

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/optimize"
)

// History is what the model reads of a customer: X repeat purchases (days
// with a purchase after the first), the last at Tx, observed for T since the
// first purchase; Tx and T in the model's time unit (weeks here).
type History struct {
	X     int
	Tx, T float64
}

// Params are the model's parameters: r and Alpha shape the purchase rates
// (gamma), A and B the chance of dropping out after a purchase (beta).
type Params struct {
	R, Alpha, A, B float64
}

// ErrNoFit is a fit that did not converge or had too little data.
var ErrNoFit = errors.New("the BG/NBD model could not be fitted")

// logLikelihood is customer h's log-likelihood under p (equation 6 of the
// paper), computed in log space.
func logLikelihood(p Params, h History) float64 {
	x := float64(h.X)
	lgR, _ := math.Lgamma(p.R)
	lgRX, _ := math.Lgamma(p.R + x)
	lbAB := lbeta(p.A, p.B)
	common := lgRX - lgR + p.R*math.Log(p.Alpha)
	stayed := lbeta(p.A, p.B+x) - lbAB - (p.R+x)*math.Log(p.Alpha+h.T)
	if h.X == 0 {
		return common + stayed
	}
	left := lbeta(p.A+1, p.B+x-1) - lbAB - (p.R+x)*math.Log(p.Alpha+h.Tx)
	return common + logSumExp(stayed, left)
}

// LogLikelihood is the log-likelihood of the histories under p.
func LogLikelihood(p Params, hs []History) float64 {
	var sum float64
	for _, h := range hs {
		sum += logLikelihood(p, h)
	}
	return sum
}

// Fit finds the parameters of maximum likelihood for the histories, each
// count of identical histories weighted once per customer. It searches
// over the logarithms of the parameters (which keeps them positive) with
// BFGS and finite-difference gradients, from the start the paper's
// implementations use (1, 1, 1, 1).
func Fit(hs []History) (Params, float64, error) {
	if len(hs) < 2 {
		return Params{}, 0, ErrNoFit
	}
	// Customers with the same history contribute the same term: fold them.
	counts := map[History]float64{}
	for _, h := range hs {
		counts[h]++
	}
	uniq := make([]History, 0, len(counts))
	weight := make([]float64, 0, len(counts))
	for h, n := range counts {
		uniq = append(uniq, h)
		weight = append(weight, n)
	}
	negLL := func(v []float64) float64 {
		p := Params{R: math.Exp(v[0]), Alpha: math.Exp(v[1]), A: math.Exp(v[2]), B: math.Exp(v[3])}
		var sum float64
		for i, h := range uniq {
			sum += weight[i] * logLikelihood(p, h)
		}
		if math.IsNaN(sum) || math.IsInf(sum, 0) {
			return math.Inf(1)
		}
		return -sum
	}
	problem := optimize.Problem{
		Func: negLL,
		Grad: func(grad, v []float64) { fd.Gradient(grad, negLL, v, &fd.Settings{Formula: fd.Central}) },
	}
	res, err := optimize.Minimize(problem, []float64{0, 0, 0, 0}, &optimize.Settings{GradientThreshold: 1e-6}, &optimize.BFGS{})
	if err != nil && res == nil {
		return Params{}, 0, errors.Join(ErrNoFit, err)
	}
	v := res.X
	p := Params{R: math.Exp(v[0]), Alpha: math.Exp(v[1]), A: math.Exp(v[2]), B: math.Exp(v[3])}
	if math.IsInf(res.F, 0) || math.IsNaN(res.F) {
		return Params{}, 0, ErrNoFit
	}
	return p, -res.F, nil
}

// PAlive is the probability that a customer with history h is still active
// (equation 13 of the paper's technical note).
func (p Params) PAlive(h History) float64 {
	if h.X == 0 {
		return 1
	}
	x := float64(h.X)
	return 1 / (1 + p.A/(p.B+x-1)*math.Exp((p.R+x)*(math.Log(p.Alpha+h.T)-math.Log(p.Alpha+h.Tx))))
}

// ExpectedPurchases is the number of purchases a customer with history h is
// expected to make in the next t (equation 10 of the paper).
func (p Params) ExpectedPurchases(h History, t float64) float64 {
	x := float64(h.X)
	z := t / (p.Alpha + h.T + t)
	tail := math.Exp((p.R+x)*math.Log((p.Alpha+h.T)/(p.Alpha+h.T+t))) * hyp2f1(p.R+x, p.B+x, p.A+p.B+x-1, z)
	num := (p.A + p.B + x - 1) / (p.A - 1) * (1 - tail)
	den := 1.0
	if h.X > 0 {
		den += p.A / (p.B + x - 1) * math.Exp((p.R+x)*(math.Log(p.Alpha+h.T)-math.Log(p.Alpha+h.Tx)))
	}
	return num / den
}

// ExpectedPurchasesFromNew is E[X(t)], the purchases a customer makes in t
// after the first (equation 7 of the paper).
func (p Params) ExpectedPurchasesFromNew(t float64) float64 {
	z := t / (p.Alpha + t)
	return (p.A + p.B - 1) / (p.A - 1) * (1 - math.Exp(p.R*math.Log(p.Alpha/(p.Alpha+t)))*hyp2f1(p.R, p.B, p.A+p.B-1, z))
}

// hyp2f1 is Gauss's hypergeometric function 2F1(a, b; c; z) for 0 ≤ z < 1,
// summed as its series: each term is the last times
// (a+k)(b+k)/((c+k)(k+1)) z, accumulated until it no longer changes the
// sum. The ratio is taken in log space so large a, b and c (many purchases)
// neither overflow nor lose precision.
func hyp2f1(a, b, c, z float64) float64 {
	if z == 0 {
		return 1
	}
	sum, term := 1.0, 1.0
	logZ := math.Log(z)
	for k := 0.0; k < 100000; k++ {
		term *= math.Exp(math.Log(a+k) + math.Log(b+k) - math.Log(c+k) - math.Log(k+1) + logZ)
		sum += term
		if term < sum*1e-15 {
			break
		}
	}
	return sum
}

func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

func logSumExp(a, b float64) float64 {
	m := math.Max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}
