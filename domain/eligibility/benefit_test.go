package eligibility

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

type line struct{ qty, price string }

func cartOf(lines ...line) Cart {
	c := Cart{}
	for i, l := range lines {
		c.Items = append(c.Items, item("SKU-"+strconv.Itoa(i), "cat", l.qty, l.price))
	}
	return c
}

func TestPercentage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		value  string
		lines  []line
		items  []string
		amount string
	}{
		{"10% of one line", "10", []line{{"2", "10.00"}}, []string{"2"}, "2"},
		{"33.33333333% of three 10.00 items", "33.33333333", []line{{"1", "10.00"}, {"1", "10.00"}, {"1", "10.00"}},
			[]string{"3.33333333", "3.33333333", "3.33333333"}, "9.99999999"},
		{"33.33333333% of 10.00 in three items", "33.33333333", []line{{"1", "3.33"}, {"1", "3.33"}, {"1", "3.34"}},
			[]string{"1.11", "1.11", "1.11333333"}, "3.33333333"},
		{"fractional kg", "10", []line{{"0.755", "12.99"}}, []string{"0.980745"}, "0.980745"},
		{"fractional kg, rounded", "15", []line{{"0.333", "9.99"}}, []string{"0.4990005"}, "0.4990005"},
		{"fractional kg, 9th place", "12.34", []line{{"1.237", "3.97"}}, []string{"0.60600383"}, "0.60600383"}, // 0.606003826 of 4.91089
		{"half-up at the 9th place", "50", []line{{"1", "1.00000005"}}, []string{"0.50000003"}, "0.50000003"},
		{"half-up, not banker's", "50", []line{{"1", "1.00000001"}}, []string{"0.50000001"}, "0.50000001"},
		{"below half rounds down", "10", []line{{"1", "0.00000004"}}, []string{"0"}, "0"},
		{"unit price over 8 places", "100", []line{{"3", "0.123456789"}}, []string{"0.37037037"}, "0.37037037"},
		{"100% is the line", "100", []line{{"3", "3.33333333"}, {"1", "0.00000001"}}, []string{"9.99999999", "0.00000001"}, "10"},
		{"above 100% is capped at the line", "150", []line{{"1", "7.77"}}, []string{"7.77"}, "7.77"},
		{"0%", "0", []line{{"1", "7.77"}}, []string{"0"}, "0"},
		{"negative is 0", "-5", []line{{"1", "7.77"}}, []string{"0"}, "0"},
		{"fractional percent", "12.5", []line{{"1", "19.99"}, {"2", "0.99"}}, []string{"2.49875", "0.2475"}, "2.74625"},
	}
	for _, typ := range []Type{Discount, Cashback} {
		for _, tc := range cases {
			t.Run(string(typ)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := running(Campaign{Type: typ, DiscountMode: Percentage, DiscountValue: d(tc.value)})
				e := mustEligible(t, c, cartOf(tc.lines...), Context{Now: now})
				requireDec(t, tc.amount, e.Benefit.Amount)
				require.Len(t, e.Benefit.Items, len(tc.items))
				for k, want := range tc.items {
					got := e.Benefit.Items[k].DiscountAmount
					if typ == Cashback {
						got = e.Benefit.Items[k].CashbackAmount
					}
					requireDec(t, want, got, "item ", k)
				}
			})
		}
	}
}

func TestFixedAmount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		value  string
		skus   []string
		lines  []line
		items  []string
		amount string
	}{
		{"R$10 over three lines of 3 × 3.33333333", "10", nil, []line{{"3", "3.33333333"}, {"3", "3.33333333"}, {"3", "3.33333333"}},
			[]string{"3.33333333", "3.33333333", "3.33333334"}, "10"},
		{"R$10 capped at three lines of 3.33333333", "10", nil, []line{{"1", "3.33333333"}, {"1", "3.33333333"}, {"1", "3.33333333"}},
			[]string{"3.33333333", "3.33333333", "3.33333333"}, "9.99999999"},
		{"proportional", "10", nil, []line{{"1", "20"}, {"3", "10"}, {"1", "50"}}, []string{"2", "3", "5"}, "10"},
		{"capped at the only line", "50", nil, []line{{"2", "10"}}, []string{"20"}, "20"},
		{"equal to the applicable total", "25.50", nil, []line{{"2", "10"}, {"1", "5.50"}}, []string{"20", "5.50"}, "25.50"},
		{"fractional kg", "5", nil, []line{{"0.755", "12.99"}, {"1", "10"}}, []string{"2.47569728", "2.52430272"}, "5"},
		{"value over 8 places, half-up", "1.234567895", nil, []line{{"1", "10"}}, []string{"1.2345679"}, "1.2345679"},
		{"only applicable lines share", "6", []string{"SKU-0", "SKU-2"}, []line{{"1", "10"}, {"1", "100"}, {"1", "20"}},
			[]string{"2", "4"}, "6"},
		{"capped at the applicable total, not the cart", "50", []string{"SKU-1"}, []line{{"1", "100"}, {"1", "7.25"}},
			[]string{"7.25"}, "7.25"},
		{"one cent over seven lines", "0.01", nil,
			[]line{{"1", "1"}, {"1", "1"}, {"1", "1"}, {"1", "1"}, {"1", "1"}, {"1", "1"}, {"1", "1"}},
			[]string{"0.00142857", "0.00142857", "0.00142857", "0.00142857", "0.00142857", "0.00142857", "0.00142858"}, "0.01"},
		// Rounding would leave the last share negative: it is taken back from the items before.
		{"rounding shortfall moved back", "0.00000002", nil, []line{{"1", "1"}, {"1", "1"}, {"1", "1"}, {"1", "1"}},
			[]string{"0.00000001", "0.00000001", "0", "0"}, "0.00000002"},
		// Rounding would put the last share above its line: the excess goes to the items before.
		{"rounding excess moved back", "0.00000005", nil,
			[]line{{"1", "0.00000002"}, {"1", "0.00000002"}, {"1", "0.00000002"}, {"1", "0.00000001"}},
			[]string{"0.00000001", "0.00000001", "0.00000002", "0.00000001"}, "0.00000005"},
		{"zero value", "0", nil, []line{{"1", "10"}}, []string{"0"}, "0"},
		{"negative value", "-3", nil, []line{{"1", "10"}}, []string{"0"}, "0"},
	}
	for _, typ := range []Type{Discount, Cashback} {
		for _, tc := range cases {
			t.Run(string(typ)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := running(Campaign{Type: typ, DiscountMode: FixedAmount, DiscountValue: d(tc.value), SKUs: tc.skus})
				e := mustEligible(t, c, cartOf(tc.lines...), Context{Now: now})
				requireDec(t, tc.amount, e.Benefit.Amount)
				require.Len(t, e.Benefit.Items, len(tc.items))
				for k, want := range tc.items {
					got := e.Benefit.Items[k].DiscountAmount
					if typ == Cashback {
						got = e.Benefit.Items[k].CashbackAmount
					}
					requireDec(t, want, got, "item ", k)
				}
			})
		}
	}
}

func TestDiscountAndCashbackFields(t *testing.T) {
	t.Parallel()
	cart := Cart{Items: []Item{
		item("A", "bebidas", "2", "10.00"),
		gtinItem("7891000100103", "mercearia", "0.5", "5.00"),
	}}

	t.Run("discount", func(t *testing.T) {
		t.Parallel()
		e := mustEligible(t, running(Campaign{Type: Discount, DiscountMode: Percentage, DiscountValue: d("10")}), cart, Context{Now: now})
		b := e.Benefit
		requireDec(t, "2.25", b.Amount)
		require.NotNil(t, b.DiscountAmount)
		requireDec(t, "2.25", *b.DiscountAmount)
		require.Nil(t, b.CashbackAmount)
		require.Nil(t, b.CreditAfterDays)
		require.Nil(t, b.BonusPoints)
		require.Nil(t, b.Multiplier)
		require.Nil(t, b.GiftSKU)
		require.False(t, b.FreeShipping)
		require.Equal(t, []int{0, 1}, e.ApplicableItems)
		require.Equal(t, "A", b.Items[0].SKU)
		require.Equal(t, "7891000100103", b.Items[1].SKU, "GTIN when no SKU")
		require.Equal(t, 1, b.Items[1].Index)
		requireDec(t, "0.5", b.Items[1].Quantity)
		requireDec(t, "2", b.Items[0].DiscountAmount)
		requireDec(t, "0.25", b.Items[1].DiscountAmount)
		requireDec(t, "0", b.Items[1].CashbackAmount)
	})

	for _, days := range []int{0, 1, 30} {
		t.Run("cashback after "+strconv.Itoa(days)+" days", func(t *testing.T) {
			t.Parallel()
			c := running(Campaign{Type: Cashback, DiscountMode: FixedAmount, DiscountValue: d("4.5"), CreditAfterDays: days})
			b := mustEligible(t, c, cart, Context{Now: now}).Benefit
			requireDec(t, "4.5", b.Amount)
			require.NotNil(t, b.CashbackAmount)
			requireDec(t, "4.5", *b.CashbackAmount)
			require.NotNil(t, b.CreditAfterDays, "0 days is set, not omitted")
			require.Equal(t, days, *b.CreditAfterDays)
			require.Nil(t, b.DiscountAmount)
			requireDec(t, "4", b.Items[0].CashbackAmount)
			requireDec(t, "0.5", b.Items[1].CashbackAmount)
			requireDec(t, "0", b.Items[0].DiscountAmount)
		})
	}

	for _, typ := range []Type{Discount, Cashback} {
		t.Run(string(typ)+" free shipping", func(t *testing.T) {
			t.Parallel()
			c := running(Campaign{Type: typ, DiscountMode: FreeShipping, DiscountValue: d("10")})
			b := mustEligible(t, c, cart, Context{Now: now}).Benefit
			require.True(t, b.FreeShipping)
			requireDec(t, "0", b.Amount)
			require.Len(t, b.Items, 2)
			for _, ib := range b.Items {
				requireDec(t, "0", ib.DiscountAmount)
				requireDec(t, "0", ib.CashbackAmount)
			}
			if typ == Discount {
				require.NotNil(t, b.DiscountAmount)
				requireDec(t, "0", *b.DiscountAmount)
			} else {
				require.NotNil(t, b.CashbackAmount)
				requireDec(t, "0", *b.CashbackAmount)
			}
		})
	}

	t.Run("no mode gives nothing", func(t *testing.T) {
		t.Parallel()
		b := mustEligible(t, running(Campaign{Type: Discount, DiscountValue: d("10")}), cart, Context{Now: now}).Benefit
		requireDec(t, "0", b.Amount)
		require.False(t, b.FreeShipping)
		require.Len(t, b.Items, 2)
	})
}

func TestBonusPoints(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		rate, multiplier string
		lines            []line
		items            []int64
	}{
		{"rate 1, multiplier 2", "1", "2", []line{{"1", "100"}}, []int64{100}},
		{"rate 1.5, multiplier 2", "1.5", "2", []line{{"1", "100"}}, []int64{150}},
		{"rate 1, multiplier 1.5", "1", "1.5", []line{{"1", "100"}}, []int64{50}},
		{"rate 1.5, multiplier 1.5", "1.5", "1.5", []line{{"1", "100"}}, []int64{75}},
		{"floor per item", "1", "2", []line{{"1", "10.99"}, {"1", "10.99"}}, []int64{10, 10}},
		{"floor of 10.99 at rate 1.5, multiplier 1.5", "1.5", "1.5", []line{{"1", "10.99"}}, []int64{8}},
		{"fractional kg, multiplier 3", "1", "3", []line{{"0.755", "12.99"}}, []int64{19}},
		{"below one point", "1", "2", []line{{"1", "0.99"}, {"2", "5"}}, []int64{0, 10}},
		{"multiplier 1 adds nothing", "1", "1", []line{{"1", "100"}}, []int64{0}},
		{"multiplier below 1 adds nothing", "1", "0.5", []line{{"1", "100"}}, []int64{0}},
		{"rate 0 adds nothing", "0", "2", []line{{"1", "100"}}, []int64{0}},
		{"saturates, keeping the sum", "100", "3", []line{{"1", "100000000000000000"}, {"1", "100000000000000000"}},
			[]int64{math.MaxInt64, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := running(Campaign{Type: BonusPoints, Multiplier: d(tc.multiplier)})
			b := mustEligible(t, c, cartOf(tc.lines...), Context{Now: now, PointsPerReal: d(tc.rate)}).Benefit
			requireDec(t, "0", b.Amount)
			require.NotNil(t, b.Multiplier)
			requireDec(t, tc.multiplier, *b.Multiplier)
			require.Nil(t, b.DiscountAmount)
			require.Nil(t, b.CashbackAmount)
			require.Nil(t, b.GiftSKU)
			var sum int64
			require.Len(t, b.Items, len(tc.items))
			for k, want := range tc.items {
				require.Equal(t, want, b.Items[k].BonusPoints, "item %d", k)
				sum += want
			}
			require.NotNil(t, b.BonusPoints)
			require.Equal(t, sum, *b.BonusPoints)
		})
	}
}

func TestGift(t *testing.T) {
	t.Parallel()
	c := running(Campaign{Type: Gift, GiftSKU: "CANECA-01", Categories: []string{"bebidas"}})
	cart := Cart{Items: []Item{
		item("A", "limpeza", "1", "10"),
		item("B", "bebidas", "2", "7.50"),
		gtinItem("789", "bebidas", "1", "3"),
	}}
	e := mustEligible(t, c, cart, Context{Now: now})
	require.Equal(t, []int{1, 2}, e.ApplicableItems)
	b := e.Benefit
	require.NotNil(t, b.GiftSKU)
	require.Equal(t, "CANECA-01", *b.GiftSKU)
	requireDec(t, "0", b.Amount)
	require.Nil(t, b.DiscountAmount)
	require.Nil(t, b.CashbackAmount)
	require.Nil(t, b.BonusPoints)
	require.False(t, b.FreeShipping)
	require.Equal(t, "B", b.Items[0].SKU)
	require.Equal(t, "789", b.Items[1].SKU)
	for _, ib := range b.Items {
		requireDec(t, "0", ib.DiscountAmount)
		require.Zero(t, ib.BonusPoints)
	}
}

func TestSubtotal(t *testing.T) {
	t.Parallel()
	cart := cartOf(line{"0.755", "12.99"}, line{"2", "3.50"}) // 9.80745 + 7.00 = 16.80745
	cases := []struct {
		name     string
		subtotal string
		min      string
		missing  string // "" = eligible
	}{
		{"computed, exactly the minimum", "0", "16.80745", ""},
		{"computed, just below the minimum", "0", "16.80746", "0.00001"},
		{"sent subtotal wins over items", "20", "18", ""},
		{"sent subtotal below minimum", "15", "16", "1"},
		{"sent subtotal lower than items", "10", "16.80745", "6.80745"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cart := cart
			cart.Subtotal = d(tc.subtotal)
			c := running(Campaign{Type: Gift, GiftSKU: "G", MinSubtotal: dp(tc.min)})
			e, in := evalOne(t, c, cart, Context{Now: now})
			if tc.missing == "" {
				require.NotNil(t, e)
				return
			}
			require.NotNil(t, in)
			require.Equal(t, MinSubtotalNotMet, in.Reason)
			requireDec(t, tc.missing, *in.Missing)
		})
	}

	t.Run("negative lines count as zero", func(t *testing.T) {
		t.Parallel()
		cart := cartOf(line{"-1", "50"}, line{"1", "10"})
		c := running(Campaign{Type: Discount, DiscountMode: Percentage, DiscountValue: d("10"), MinSubtotal: dp("10")})
		e := mustEligible(t, c, cart, Context{Now: now})
		require.Equal(t, []int{1}, e.ApplicableItems)
		requireDec(t, "1", e.Benefit.Amount)
		c.MinSubtotal = dp("10.01")
		_, in := evalOne(t, c, cart, Context{Now: now})
		require.NotNil(t, in)
		requireDec(t, "0.01", *in.Missing)
	})
}
