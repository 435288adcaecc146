// Package decimaltext writes decimals as text the way decimal.Decimal's
// String does, without its big.Int conversion when the coefficient fits in
// 18 digits (every amount an answer holds): a validation of a large cart
// writes thousands of amounts, and String was 15% of its CPU.
package decimaltext

import (
	"strconv"

	"github.com/shopspring/decimal"
)

// Format is d.String(): fixed point, trailing zeros of the fraction trimmed.
func Format(d decimal.Decimal) string {
	exp := d.Exponent()
	if exp > 0 || exp < -18 || d.NumDigits() > 18 {
		return d.String()
	}
	// The sign, at most 18 digits, a point and 18 leading zeros of the
	// fraction: 40 bytes, on the stack.
	var buf [40]byte
	c := d.CoefficientInt64()
	if c == 0 {
		return "0"
	}
	out := buf[:0]
	if c < 0 {
		out, c = append(out, '-'), -c
	}
	var digits [20]byte
	ds := strconv.AppendInt(digits[:0], c, 10)
	places := int(-exp)
	for places > 0 && ds[len(ds)-1] == '0' { // trailing zeros of the fraction
		ds, places = ds[:len(ds)-1], places-1
	}
	switch {
	case places == 0:
		out = append(out, ds...)
	case len(ds) > places:
		out = append(append(append(out, ds[:len(ds)-places]...), '.'), ds[len(ds)-places:]...)
	default:
		out = append(out, '0', '.')
		for range places - len(ds) {
			out = append(out, '0')
		}
		out = append(out, ds...)
	}
	return string(out)
}

// Rounded is d.Round(places).String() (places ≥ 0), without rounding when
// d has no more than places decimal places: rounding then only adds zeros,
// which String trims.
func Rounded(d decimal.Decimal, places int32) string {
	if d.Exponent() < -places {
		d = d.Round(places)
	}
	return Format(d)
}
