package eligibility

import (
	"math"
	"math/bits"

	"github.com/shopspring/decimal"
)

// The fast path computes amounts of money as whole numbers of units of
// 10^-places, in uint64s never above MaxInt64, with exact 128-bit
// intermediates and rounding half away from zero as decimal's Round and
// DivRound do. What does not fit is left to the decimal arithmetic. Either
// way the results are the same, down to their scale: every amount the fast
// path computes, the decimal arithmetic gives with exactly places decimal
// places too.

// pow10 holds every power of ten a uint64 holds.
var pow10 = [...]uint64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// coefficient returns |d| as m × 10^exp and whether d is negative. m has no
// trailing zeros, so that values stored with 8 places, and products of them,
// need small powers of ten. ok is false when d's coefficient has more than
// 18 digits.
func coefficient(d decimal.Decimal) (m uint64, exp int64, neg, ok bool) {
	if d.NumDigits() > 18 {
		return 0, 0, false, false
	}
	v := d.CoefficientInt64()
	if v == 0 {
		return 0, 0, false, true
	}
	m, exp, neg = uint64(v), int64(d.Exponent()), v < 0
	if neg {
		m = -m
	}
	for m%10 == 0 {
		m /= 10
		exp++
	}
	return m, exp, neg, true
}

// toUnits returns x × 10^exp, for the 128-bit x = hi:lo, rounded half away
// from zero to whole units. ok is false when the units exceed MaxInt64 or
// 10^exp is too large or too small a factor to compute with.
func toUnits(hi, lo uint64, exp int64) (uint64, bool) {
	switch k := exp + places; {
	case k >= 0 && k < int64(len(pow10)):
		h, u := bits.Mul64(lo, pow10[k])
		return u, hi == 0 && h == 0 && u <= math.MaxInt64
	case k < 0 && -k < int64(len(pow10)):
		d := pow10[-k]
		if hi >= d {
			return 0, false // the quotient needs more than 64 bits
		}
		u, r := bits.Div64(hi, lo, d)
		if u >= math.MaxInt64 {
			return 0, false
		}
		if r >= d-r {
			u++
		}
		return u, true
	}
	return 0, false
}

// lineUnits is lineTotal in units.
func lineUnits(it *Item) (uint64, bool) {
	p, pexp, pneg, ok := coefficient(it.UnitPrice)
	q, qexp, qneg, ok2 := coefficient(it.Quantity)
	switch e := int64(it.UnitPrice.Exponent()) + int64(it.Quantity.Exponent()); {
	case !ok || !ok2 || e != int64(int32(e)):
		return 0, false // lineTotal's Mul panics on an exponent out of range, as ever
	case p == 0 || q == 0 || pneg != qneg:
		return 0, true // zero, or negative and so counted as zero
	}
	hi, lo := bits.Mul64(p, q)
	return toUnits(hi, lo, pexp+qexp)
}

// moneyUnits is money in units, for a campaign of mode Percentage or
// FixedAmount: it writes the shares to out and returns their sum. ok is false
// when the campaign's value does not fit, or when the shares of a fixed amount
// need the adjustment of split; then money must compute them.
func moneyUnits(c *Campaign, lines []uint64, applicable []int, out []uint64) (uint64, bool) {
	if c.DiscountMode == Percentage {
		m, exp, ok := percent(c.DiscountValue)
		if !ok {
			return 0, false
		}
		var sum uint64
		for k, i := range applicable {
			hi, lo := bits.Mul64(lines[i], m)
			if out[k], ok = toUnits(hi, lo, exp-2-places); !ok {
				return 0, false
			}
			sum += out[k] // at most the sum of the lines, which fits
		}
		return sum, true
	}

	var total uint64
	for _, i := range applicable {
		total += lines[i]
	}
	// money rounds min(value, total); as total is a whole number of units,
	// that is min(the value rounded, total).
	m, exp, neg, ok := coefficient(c.DiscountValue)
	if !ok {
		return 0, false
	}
	var amount uint64
	if !neg {
		if amount, ok = toUnits(0, m, exp); !ok {
			return 0, false
		}
		amount = min(amount, total)
	}
	last := len(applicable) - 1
	var allocated uint64
	for k, i := range applicable[:last] {
		// amount <= total, so the quotient is at most lines[i].
		hi, lo := bits.Mul64(amount, lines[i])
		q, r := bits.Div64(hi, lo, total)
		if r >= total-r {
			q++
		}
		out[k] = q
		allocated += q
	}
	if allocated > amount || amount-allocated > lines[applicable[last]] {
		return 0, false
	}
	out[last] = amount - allocated
	return amount, true
}

// percent is v clamped to [0, 100], as money clamps it, as m × 10^exp; ok as
// for coefficient.
func percent(v decimal.Decimal) (m uint64, exp int64, ok bool) {
	m, exp, neg, ok := coefficient(v)
	switch {
	case neg:
		return 0, 0, ok
	case exp >= 2 || (exp > -18 && m >= pow10[2-exp]): // m × 10^exp >= 100
		return 1, 2, ok
	}
	return m, exp, ok
}

// earnedUnits is earned for a line of line units > 0 at a rate of
// m × 10^exp > 0. ok is false when 10^exp is too small a factor.
func earnedUnits(line, m uint64, exp int64) (int64, bool) {
	hi, lo := bits.Mul64(line, m)
	switch k := exp - places; {
	case k >= 0:
		if k >= int64(len(pow10)) || hi != 0 {
			return math.MaxInt64, true // at least 10^20 or 2^64
		}
		h, p := bits.Mul64(lo, pow10[k])
		if h != 0 || p > math.MaxInt64 {
			return math.MaxInt64, true
		}
		return int64(p), true
	case -k < int64(len(pow10)):
		d := pow10[-k]
		if hi >= d {
			return math.MaxInt64, true // at least 2^64
		}
		p, _ := bits.Div64(hi, lo, d)
		return int64(min(p, math.MaxInt64)), true
	}
	return 0, false
}
