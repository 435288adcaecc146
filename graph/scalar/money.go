package scalar

import (
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/shopspring/decimal"
)

// MarshalMoney renders an amount in R$ as a JSON string with exactly two
// decimal places, rounded half away from zero ("911.008" is "911.01",
// "882.8" is "882.80", 0 is "0.00"), the rounding of the lifetime value's
// cents: what a filter in cents compares is what the answer shows.
func MarshalMoney(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(d.StringFixed(2)))
	})
}

// UnmarshalMoney accepts what UnmarshalDecimal accepts ("12.50", "12.5",
// 12.5) with at most two decimal places: an amount of a fraction of a cent
// is refused, not rounded.
func UnmarshalMoney(v any) (decimal.Decimal, error) {
	d, err := UnmarshalDecimal(v)
	if err != nil {
		return d, fmt.Errorf("money: %w", err)
	}
	if !d.Shift(2).IsInteger() {
		return decimal.Zero, fmt.Errorf("money: an amount in R$ has at most two decimal places, got %s", d)
	}
	return d, nil
}
