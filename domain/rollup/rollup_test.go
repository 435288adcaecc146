package rollup

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestMoney: the one-allocation decimal is the sum of the cents and the
// rest, with the same digits and exponent, up to and past its bounds.
func TestMoney(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cents, sub int64
		want       string
	}{
		{0, 0, "0"},
		{1250, 0, "12.5"},
		{1250, 345_678, "12.50345678"},
		{-1250, -345678, "-12.50345678"},
		{0, 1, "0.00000001"},
		{3, 2_500_000, "0.055"},
		{maxMoneyCents, maxMoneySub, "91000000000"},
		{-maxMoneyCents, -maxMoneySub, "-91000000000"},
		{maxMoneyCents + 1, 5, "90000000000.01000005"},
		{5, maxMoneySub + 1, "1000000000.05000001"},
		{math.MaxInt64, math.MaxInt64, "92233812602268126.61775807"},
	} {
		got := Money(c.cents, c.sub)
		sum := decimal.New(c.cents, -2).Add(decimal.New(c.sub, -8))
		require.Equal(t, c.want, got.String(), "%d cents %d", c.cents, c.sub)
		require.Equal(t, sum.Exponent(), got.Exponent())
		require.Zero(t, sum.Coefficient().Cmp(got.Coefficient()))
	}
}
