package eligibility

import (
	"math"
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// u128 is hi:lo as a big.Int.
func u128(hi, lo uint64) *big.Int {
	x := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	return x.Or(x, new(big.Int).SetUint64(lo))
}

// split128 is x as hi:lo.
func split128(x *big.Int) (hi, lo uint64) {
	return new(big.Int).Rsh(x, 64).Uint64(), new(big.Int).And(x, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
}

// TestToUnits checks toUnits at the edges of its range against decimal's
// Round: what it returns must be exact, and what it refuses must not fit
// (only a result of exactly MaxInt64 may be refused besides) or need a
// power of ten beyond 10^19.
func TestToUnits(t *testing.T) {
	t.Parallel()
	maxTimes10Plus := func(r int64) *big.Int {
		x := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(10))
		return x.Add(x, big.NewInt(r))
	}
	cases := []struct {
		x   *big.Int
		exp int64
	}{
		{big.NewInt(5), -9}, {big.NewInt(4), -9}, {big.NewInt(15), -9}, {big.NewInt(0), -9},
		{big.NewInt(math.MaxInt64), -8}, {big.NewInt(1), 10}, {big.NewInt(1), 11}, {big.NewInt(92), 9}, {big.NewInt(93), 9},
		{maxTimes10Plus(4), -9}, {maxTimes10Plus(5), -9}, {maxTimes10Plus(-6), -9}, {maxTimes10Plus(-5), -9},
		{u128(0, math.MaxUint64), -9}, {u128(9, math.MaxUint64), -9}, {u128(10, 0), -9}, {u128(1, 0), -8},
		{u128(1, 0), -27}, {u128(math.MaxUint64, math.MaxUint64), -27}, {big.NewInt(12345), -27}, {big.NewInt(1), -28},
	}
	for _, tc := range cases {
		want := decimal.NewFromBigInt(tc.x, int32(tc.exp)).Round(places).Coefficient()
		hi, lo := split128(tc.x)
		got, ok := toUnits(hi, lo, tc.exp)
		if ok {
			require.LessOrEqual(t, got, uint64(math.MaxInt64), "%s e%d", tc.x, tc.exp)
			require.Equal(t, want.String(), new(big.Int).SetUint64(got).String(), "%s e%d", tc.x, tc.exp)
			continue
		}
		k := tc.exp + places
		require.True(t, want.Cmp(big.NewInt(math.MaxInt64)) >= 0 || k <= -20 || k >= 20,
			"%s e%d refused, rounds to %s", tc.x, tc.exp, want)
	}
}

// TestEarnedUnits checks earnedUnits at the edges of its range against
// earned.
func TestEarnedUnits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line, m uint64
		exp     int64
	}{
		{1, 1, 0}, {99999999, 1, 0}, {100000000, 1, 0}, {1, 1, 8}, {1, 1, 27}, {1, 1, 28},
		{math.MaxInt64, 1, 8}, {math.MaxInt64, 2, 8}, {math.MaxInt64, 1, 9}, {1e15, 12345, 8}, {1e15, 18446, 8}, {1e15, 18447, 8},
		{math.MaxInt64, math.MaxUint64, -11}, {math.MaxInt64, math.MaxUint64, -12}, {1e10, 1e9, -11},
		{math.MaxInt64, 10, 0}, {math.MaxInt64, 9, -1}, {1, 1, -11}, {1, 1, -12},
	}
	for _, tc := range cases {
		line := decimal.New(int64(tc.line), -places)
		rate := decimal.NewFromBigInt(new(big.Int).SetUint64(tc.m), int32(tc.exp))
		got, ok := earnedUnits(tc.line, tc.m, tc.exp)
		if !ok {
			require.LessOrEqual(t, tc.exp-places, int64(-20), "%d at %s refused", tc.line, rate)
			continue
		}
		require.Equal(t, earned(line, rate), got, "%d at %s", tc.line, rate)
	}
}
