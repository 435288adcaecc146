package eligibility

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/points"
)

// cartLines are the line totals of a cart, computed once for all campaigns,
// with what computing the campaigns' benefits from them needs.
type cartLines struct {
	items []Item
	// units are the line totals in units when every one of them and their
	// sum fit the fast path of fixed.go, else nil.
	units    []uint64
	sumUnits uint64
	// dec are the line totals as decimals: when units is set, made only if
	// something is left to the decimal arithmetic.
	dec []decimal.Decimal
	// shares and amounts are scratch space for money.
	shares  []uint64
	amounts []decimal.Decimal
	// decimals holds the amounts made from units, to share equal ones.
	decimals map[uint64]decimal.Decimal
}

func newCartLines(items []Item) *cartLines {
	units := make([]uint64, len(items))
	var sum uint64
	for i := range items {
		u, ok := lineUnits(&items[i])
		sum += u // both at most MaxInt64: it cannot wrap
		if !ok || sum > math.MaxInt64 {
			dec := make([]decimal.Decimal, len(items))
			for j := range items {
				dec[j] = lineTotal(&items[j])
			}
			return &cartLines{items: items, dec: dec}
		}
		units[i] = u
	}
	return &cartLines{items: items, units: units, sumUnits: sum}
}

// lineDecimals are the line totals as decimals.
func (l *cartLines) lineDecimals() []decimal.Decimal {
	if l.dec == nil {
		l.dec = make([]decimal.Decimal, len(l.units))
		for i, u := range l.units {
			l.dec[i] = decimal.New(int64(u), -places)
		}
	}
	return l.dec
}

// sum is the sum of the line totals.
func (l *cartLines) sum() decimal.Decimal {
	if l.units != nil {
		return decimal.New(int64(l.sumUnits), -places)
	}
	sum := decimal.Zero
	for _, t := range l.dec {
		sum = sum.Add(t)
	}
	return sum
}

// positive tells whether line i is above zero.
func (l *cartLines) positive(i int) bool {
	if l.units != nil {
		return l.units[i] > 0
	}
	return l.dec[i].IsPositive()
}

// lineTotal is round8(UnitPrice × Quantity), never below zero.
func lineTotal(it *Item) decimal.Decimal {
	t := it.UnitPrice.Mul(it.Quantity).Round(places)
	if t.IsNegative() {
		return decimal.Zero
	}
	return t
}

// itemSKU is the item's SKU, or its GTIN when it has none.
func itemSKU(it *Item) string {
	if it.SKU != "" {
		return it.SKU
	}
	return it.GTIN
}

// applicable appends to dst the indexes of the items that apply to c and
// have a positive line total.
func (l *cartLines) applicable(c *Campaign, dst []int) []int {
	m := newMatcher(c)
	for i := range l.items {
		if l.positive(i) && m.applies(&l.items[i]) {
			dst = append(dst, i)
		}
	}
	return dst
}

// benefit computes the estimated benefit of an eligible campaign.
func (l *cartLines) benefit(c *Campaign, applicable []int, ctx *Context) Benefit {
	items := l.items
	b := Benefit{Amount: decimal.Zero, Items: make([]ItemBenefit, len(applicable))}
	for k, i := range applicable {
		// Field by field, leaving the amounts zero (decimal.Zero is the zero
		// Decimal): cheaper than storing a whole ItemBenefit.
		ib := &b.Items[k]
		ib.Index, ib.SKU, ib.Quantity = i, itemSKU(&items[i]), items[i].Quantity
	}
	switch c.Type {
	case Discount, Cashback:
		amounts, amount := l.money(c, applicable)
		b.Amount = amount
		b.FreeShipping = c.DiscountMode == FreeShipping
		if c.Type == Discount {
			b.DiscountAmount = &amount
			for k := range amounts {
				b.Items[k].DiscountAmount = amounts[k]
			}
		} else {
			days := c.CreditAfterDays
			b.CashbackAmount = &amount
			b.CreditAfterDays = &days
			for k := range amounts {
				b.Items[k].CashbackAmount = amounts[k]
			}
		}
	case BonusPoints:
		multiplier := c.Multiplier
		b.Multiplier = &multiplier
		total := l.bonusPoints(b.Items, ctx.PointsPerReal.Mul(c.Multiplier.Sub(one)))
		b.BonusPoints = &total
	case Gift:
		sku := c.GiftSKU
		b.GiftSKU = &sku
	}
	return b
}

// bonusPoints sets the points each item earns at rate and returns their sum,
// saturating the points so that the sum stays exact.
func (l *cartLines) bonusPoints(items []ItemBenefit, rate decimal.Decimal) int64 {
	if !rate.IsPositive() {
		return 0 // nothing is earned
	}
	m, exp, _, fast := coefficient(rate)
	fast = fast && l.units != nil
	var total int64
	for k := range items {
		i := items[k].Index
		p, ok := int64(0), false
		if fast {
			p, ok = earnedUnits(l.units[i], m, exp)
		}
		if !ok {
			p = earned(l.lineDecimals()[i], rate)
		}
		p = min(p, math.MaxInt64-total)
		items[k].BonusPoints = p
		total += p
	}
	return total
}

// money is the discount or cashback of each applicable item, in scratch
// space valid until the next call, and their sum; nil and zero when the mode
// gives no money.
func (l *cartLines) money(c *Campaign, applicable []int) ([]decimal.Decimal, decimal.Decimal) {
	if c.DiscountMode != Percentage && c.DiscountMode != FixedAmount {
		return nil, decimal.Zero
	}
	if l.units != nil {
		if l.shares == nil {
			l.shares = make([]uint64, len(l.items))
			l.amounts = make([]decimal.Decimal, len(l.items))
		}
		shares, amounts := l.shares[:len(applicable)], l.amounts[:len(applicable)]
		if sum, ok := moneyUnits(c, l.units, applicable, shares); ok {
			for k, u := range shares {
				amounts[k] = l.amount(u)
			}
			return amounts, l.amount(sum)
		}
	}
	amounts := money(c, l.lineDecimals(), applicable)
	sum := decimal.Zero
	for _, a := range amounts {
		sum = sum.Add(a)
	}
	return amounts, sum
}

// amount is u units as a decimal, with the places decimal places the decimal
// arithmetic gives every amount. Equal amounts share one decimal (decimals
// are immutable): they recur, as when campaigns of the same percentage apply
// to the same items, and each saves allocations.
func (l *cartLines) amount(u uint64) decimal.Decimal {
	d, ok := l.decimals[u]
	if !ok {
		if l.decimals == nil {
			l.decimals = make(map[uint64]decimal.Decimal, 4*len(l.items)) // spares most rehashing
		}
		d = decimal.New(int64(u), -places)
		l.decimals[u] = d
	}
	return d
}

// money is the discount or cashback of each applicable item for a campaign
// of mode Percentage or FixedAmount, in decimal arithmetic.
func money(c *Campaign, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	if c.DiscountMode == Percentage {
		pct := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, hundred))
		out := make([]decimal.Decimal, len(applicable))
		for k, i := range applicable {
			// Shift, not Div: dividing by 100 is exact, so rounding happens once.
			out[k] = lines[i].Mul(pct).Shift(-2).Round(places)
		}
		return out
	}
	total := decimal.Zero
	for _, i := range applicable {
		total = total.Add(lines[i])
	}
	amount := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, total)).Round(places)
	return split(amount, total, lines, applicable)
}

// split shares amount (0 <= amount <= total, total > 0) over the applicable
// items in proportion to their line totals: each share rounded to 8 places,
// the last item taking the remainder so the shares add up to amount exactly.
// When rounding would leave the last item below zero or above its line total,
// the difference is moved to the items before it, from the last backwards.
func split(amount, total decimal.Decimal, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	out := make([]decimal.Decimal, len(applicable))
	last := len(applicable) - 1
	allocated := decimal.Zero
	for k := range last {
		out[k] = amount.Mul(lines[applicable[k]]).DivRound(total, places)
		allocated = allocated.Add(out[k])
	}
	out[last] = amount.Sub(allocated)

	// Each share before the last lies in [0, its line total]; only the last
	// can fall outside by the accumulated rounding.
	if out[last].IsNegative() {
		deficit := out[last].Neg()
		out[last] = decimal.Zero
		for k := last - 1; k >= 0 && deficit.IsPositive(); k-- {
			take := decimal.Min(deficit, out[k])
			out[k] = out[k].Sub(take)
			deficit = deficit.Sub(take)
		}
	} else if line := lines[applicable[last]]; out[last].GreaterThan(line) {
		excess := out[last].Sub(line)
		out[last] = line
		for k := last - 1; k >= 0 && excess.IsPositive(); k-- {
			give := decimal.Min(excess, lines[applicable[k]].Sub(out[k]))
			out[k] = out[k].Add(give)
			excess = excess.Sub(give)
		}
	}
	return out
}

// earned is points.Earned(line, rate), capped at math.MaxInt64 instead of
// overflowing.
func earned(line, rate decimal.Decimal) int64 {
	if !rate.IsPositive() {
		return 0
	}
	// Integer digits of a product are at most the sum of the factors'; 18
	// digits always fit in an int64.
	if intDigits(line)+intDigits(rate) > 18 && line.Mul(rate).GreaterThanOrEqual(maxInt64) {
		return math.MaxInt64
	}
	return points.Earned(line, rate)
}

var (
	one      = decimal.NewFromInt(1)
	hundred  = decimal.NewFromInt(100)
	maxInt64 = decimal.NewFromInt(math.MaxInt64)
)

func intDigits(d decimal.Decimal) int {
	return d.NumDigits() + int(d.Exponent())
}

// Estimate computes c's benefit for cart without checking whether c is
// eligible: what redeem gives for a campaign a validation found eligible,
// from the cart it kept. ok is false when no item applies.
func Estimate(c Campaign, cart Cart, pointsPerReal decimal.Decimal) (b Benefit, ok bool) {
	lines := newCartLines(cart.Items)
	applicable := lines.applicable(&c, nil)
	if len(applicable) == 0 {
		return Benefit{}, false
	}
	return lines.benefit(&c, applicable, &Context{PointsPerReal: pointsPerReal}), true
}
