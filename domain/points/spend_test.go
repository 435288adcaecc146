package points_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/points"
)

func TestSpendRules(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString
	rules := points.SpendRules{Value: d("0.01"), Min: 500, MaxShare: d("0.5")}
	for _, c := range []struct {
		name      string
		amount    string
		points    int64
		available int64
		total     string // "" no cart
		most      string
	}{
		{"whole points", "20.00", 2000, 3000, "", "30"},
		{"a part of a point rounds up", "20.005", 2001, 3000, "100.00", "30"},
		{"the sale's share bounds the most", "1.00", 100, 3000, "40.00", "20"},
		{"below the fewest points: nothing", "4.99", 499, 499, "", "0"},
		{"the share below the fewest points: nothing", "1.00", 100, 3000, "9.00", "0"},
		{"no points", "0.01", 1, 0, "", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.points, rules.PointsFor(d(c.amount)))
			var total *decimal.Decimal
			if c.total != "" {
				total = new(d(c.total))
			}
			require.Equal(t, d(c.most).String(), rules.MaxAmount(c.available, total).String())
		})
	}
	require.Equal(t, "12.34", points.SpendRules{Value: d("0.01")}.Worth(1234).StringFixed(2))
	require.Zero(t, points.SpendRules{}.PointsFor(d("1")), "no value: no points")
}
