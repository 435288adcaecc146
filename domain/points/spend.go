package points

import "github.com/shopspring/decimal"

// SpendRules are a programme's rules for points spent as money: the R$ one
// point pays, the fewest points spent at once, and the largest share of a
// sale payable with points (0 to 1).
type SpendRules struct {
	Value    decimal.Decimal
	Min      int64
	MaxShare decimal.Decimal
}

// cent is the smallest R$ amount points pay.
var cent = decimal.New(1, -2)

// PointsFor is how many points pay amount: the amount over the value of a
// point, rounded up (a point is never split).
func (r SpendRules) PointsFor(amount decimal.Decimal) int64 {
	if !r.Value.IsPositive() || !amount.IsPositive() {
		return 0
	}
	return amount.Div(r.Value).Ceil().IntPart()
}

// Worth is what n points pay, in whole cents down.
func (r SpendRules) Worth(n int64) decimal.Decimal {
	return decimal.NewFromInt(n).Mul(r.Value).Truncate(2)
}

// MaxAmount is the most R$ a customer with available points may pay with
// them on a sale of total (nil: the points' worth alone), in whole cents
// down: within what the points are worth and the programme's share of the
// sale; zero below the fewest points spent at once.
func (r SpendRules) MaxAmount(available int64, total *decimal.Decimal) decimal.Decimal {
	if available <= 0 || available < r.Min || !r.Value.IsPositive() {
		return decimal.Zero
	}
	most := r.Worth(available)
	if total != nil {
		most = decimal.Min(most, total.Mul(r.MaxShare).Truncate(2))
	}
	if r.PointsFor(most) < r.Min || most.LessThan(cent) {
		return decimal.Zero
	}
	return most
}
