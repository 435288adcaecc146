package experiment

import (
	"math"

	"github.com/shopspring/decimal"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of the lift's intervals.
const Confidence = 0.95

// Rounding of the lift's figures: shares to 6 places, money to the cent.
const (
	sharePlaces = 6
	moneyPlaces = 2
)

// Group is what the customers of one side of an experiment did in its
// period: how many they are, how many bought, and the sums of their revenue
// and of its squares (a customer who did not buy has revenue 0). Sums are
// exact; Add them customer by customer.
type Group struct {
	Customers, Buyers int
	Revenue, Squares  decimal.Decimal
}

// Add counts one customer, who bought (at least one purchase in the period)
// or not, with the revenue of the period.
func (g *Group) Add(bought bool, revenue decimal.Decimal) {
	g.Customers++
	if bought {
		g.Buyers++
	}
	g.Revenue = g.Revenue.Add(revenue)
	g.Squares = g.Squares.Add(revenue.Mul(revenue))
}

// Metric is one measure of the two groups: each one's mean, their
// difference (treated less held out) and its Confidence interval by Welch's
// t; Low and High are nil when a group has fewer than two customers (for
// the revenue per buyer, two buyers).
type Metric struct {
	Treated, HeldOut, Difference decimal.Decimal
	Low, High                    *decimal.Decimal
	// Significant says the interval excludes 0: the campaign changed the
	// measure, at the Confidence level.
	Significant bool
}

// Lift is what a campaign changed, treated against held out.
type Lift struct {
	Treated, HeldOut Group
	// BuyerShare is the share of the customers who bought (0 to 1).
	BuyerShare Metric
	// RevenuePerCustomer and RevenuePerBuyer are in R$.
	RevenuePerCustomer, RevenuePerBuyer Metric
	// Discounts is what the campaign gave (discounts and cashback, R$).
	Discounts decimal.Decimal
	// IncrementalRevenue is the revenue the treated customers brought
	// beyond what they would have without the campaign, as the held out
	// did: RevenuePerCustomer's difference times the treated customers.
	IncrementalRevenue decimal.Decimal
	// NetRevenue is IncrementalRevenue less Discounts.
	NetRevenue decimal.Decimal
	// Verdict is what the lift tells, in a word; Summary, in a sentence.
	Verdict Verdict
}

// Measure compares the groups: the share of buyers, the revenue per
// customer and per buyer, and the incremental revenue less the discounts
// given; gave says the campaign gave any benefit in the period (else the
// Verdict is NoBenefit).
func Measure(treated, heldOut Group, discounts decimal.Decimal, gave bool) Lift {
	l := Lift{Treated: treated, HeldOut: heldOut, Discounts: discounts}
	l.BuyerShare = welch(
		sample{n: treated.Customers, sum: decimal.NewFromInt(int64(treated.Buyers)), squares: decimal.NewFromInt(int64(treated.Buyers))},
		sample{n: heldOut.Customers, sum: decimal.NewFromInt(int64(heldOut.Buyers)), squares: decimal.NewFromInt(int64(heldOut.Buyers))},
		sharePlaces)
	l.RevenuePerCustomer = welch(
		sample{n: treated.Customers, sum: treated.Revenue, squares: treated.Squares},
		sample{n: heldOut.Customers, sum: heldOut.Revenue, squares: heldOut.Squares}, moneyPlaces)
	l.RevenuePerBuyer = welch(
		sample{n: treated.Buyers, sum: treated.Revenue, squares: treated.Squares},
		sample{n: heldOut.Buyers, sum: heldOut.Revenue, squares: heldOut.Squares}, moneyPlaces)
	if treated.Customers > 0 && heldOut.Customers > 0 {
		perCustomer := treated.Revenue.Div(decimal.NewFromInt(int64(treated.Customers))).
			Sub(heldOut.Revenue.Div(decimal.NewFromInt(int64(heldOut.Customers))))
		l.IncrementalRevenue = perCustomer.Mul(decimal.NewFromInt(int64(treated.Customers))).Round(moneyPlaces)
	}
	l.NetRevenue = l.IncrementalRevenue.Sub(discounts)
	l.Verdict = l.verdict(gave)
	return l
}

// sample is n observations by their sum and the sum of their squares.
type sample struct {
	n            int
	sum, squares decimal.Decimal
}

// mean is the sample's mean, 0 when empty.
func (s sample) mean() decimal.Decimal {
	if s.n == 0 {
		return decimal.Zero
	}
	return s.sum.Div(decimal.NewFromInt(int64(s.n)))
}

// variance is the sample's unbiased variance (n ≥ 2), computed exactly
// before it becomes a float.
func (s sample) variance() float64 {
	n := decimal.NewFromInt(int64(s.n))
	ss := s.squares.Sub(s.sum.Mul(s.sum).DivRound(n, 16))
	v := ss.DivRound(n.Sub(decimal.NewFromInt(1)), 16).InexactFloat64()
	return math.Max(v, 0)
}

// welch is the difference of the means of a and b with its Confidence
// interval by Welch's t-test (unequal variances, Welch–Satterthwaite
// degrees of freedom), rounded to places.
func welch(a, b sample, places int32) Metric {
	ma, mb := a.mean(), b.mean()
	m := Metric{Treated: ma.Round(places), HeldOut: mb.Round(places), Difference: ma.Sub(mb).Round(places)}
	if a.n < 2 || b.n < 2 {
		return m
	}
	diff := ma.Sub(mb).InexactFloat64()
	va, vb := a.variance()/float64(a.n), b.variance()/float64(b.n)
	half := 0.0
	if se2 := va + vb; se2 > 0 {
		df := se2 * se2 / (va*va/float64(a.n-1) + vb*vb/float64(b.n-1))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Confidence)/2)
		half = t * math.Sqrt(se2)
	}
	low, high := decimal.NewFromFloat(diff-half).Round(places), decimal.NewFromFloat(diff+half).Round(places)
	m.Low, m.High = &low, &high
	m.Significant = diff-half > 0 || diff+half < 0
	return m
}
