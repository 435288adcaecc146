package eligibility

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

var (
	now = time.Date(2026, 5, 10, 12, 0, 0, 0, time.FixedZone("BRT", -3*60*60))
	d   = decimal.RequireFromString
)

func dp(s string) *decimal.Decimal { v := d(s); return &v }
func ip(n int) *int                { return &n }

// requireDec compares decimals by value, so "20" equals "20.00000000".
func requireDec(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	require.True(t, d(want).Equal(got), "want %s, got %s %v", want, got, fmt.Sprint(msgAndArgs...))
}

// running makes c active at now: started a day ago, ending in a day.
func running(c Campaign) Campaign {
	c.Status = Active
	c.StartsAt = now.Add(-24 * time.Hour)
	c.EndsAt = now.Add(24 * time.Hour)
	if c.ID == "" {
		c.ID = "camp-1"
	}
	return c
}

func item(sku, category, qty, price string) Item {
	return Item{SKU: sku, Category: category, Quantity: d(qty), UnitPrice: d(price)}
}

func gtinItem(gtin, category, qty, price string) Item {
	return Item{GTIN: gtin, Category: category, Quantity: d(qty), UnitPrice: d(price)}
}

// evalOne evaluates a single campaign and returns its one result.
func evalOne(t *testing.T, c Campaign, cart Cart, ctx Context) (*Eligible, *Ineligible) {
	t.Helper()
	el, in := Evaluate([]Campaign{c}, cart, ctx)
	require.Equal(t, 1, len(el)+len(in))
	for _, e := range el {
		require.NoError(t, invariants(cart, e))
	}
	if len(el) == 1 {
		return &el[0], nil
	}
	return nil, &in[0]
}

func mustEligible(t *testing.T, c Campaign, cart Cart, ctx Context) Eligible {
	t.Helper()
	e, in := evalOne(t, c, cart, ctx)
	require.Nil(t, in, "ineligible: %+v", in)
	return *e
}

// invariants checks what must hold of every eligible result: items in cart
// order matching ApplicableItems, amounts of 8 places at most, never negative,
// never above the line total, and items adding up to the totals.
func invariants(cart Cart, e Eligible) error {
	b := e.Benefit
	if e.ApplicableItems == nil || b.Items == nil {
		return fmt.Errorf("nil slices")
	}
	if len(e.ApplicableItems) != len(b.Items) || len(b.Items) == 0 {
		return fmt.Errorf("%d applicable items, %d item benefits", len(e.ApplicableItems), len(b.Items))
	}
	if b.Amount.IsNegative() || !b.Amount.Equal(b.Amount.Round(places)) {
		return fmt.Errorf("amount %s", b.Amount)
	}
	sumDiscount, sumCashback, sumPoints := decimal.Zero, decimal.Zero, int64(0)
	for k, ib := range b.Items {
		if ib.Index != e.ApplicableItems[k] || (k > 0 && ib.Index <= b.Items[k-1].Index) {
			return fmt.Errorf("item %d has index %d, applicable %v", k, ib.Index, e.ApplicableItems)
		}
		it := cart.Items[ib.Index]
		line := it.UnitPrice.Mul(it.Quantity).Round(places)
		if !line.IsPositive() {
			return fmt.Errorf("item %d with line total %s is applicable", ib.Index, line)
		}
		if !e.Campaign.Applies(it) {
			return fmt.Errorf("item %d does not apply", ib.Index)
		}
		if want := itemSKU(&it); ib.SKU != want || !ib.Quantity.Equal(it.Quantity) {
			return fmt.Errorf("item %d: sku %q quantity %s", ib.Index, ib.SKU, ib.Quantity)
		}
		for _, m := range []decimal.Decimal{ib.DiscountAmount, ib.CashbackAmount} {
			if m.IsNegative() || m.GreaterThan(line) || !m.Equal(m.Round(places)) {
				return fmt.Errorf("item %d: amount %s, line %s", ib.Index, m, line)
			}
		}
		if ib.BonusPoints < 0 {
			return fmt.Errorf("item %d: %d points", ib.Index, ib.BonusPoints)
		}
		sumDiscount = sumDiscount.Add(ib.DiscountAmount)
		sumCashback = sumCashback.Add(ib.CashbackAmount)
		sumPoints += ib.BonusPoints
	}
	zeroMoney := !b.Amount.IsZero() || !sumDiscount.IsZero() || !sumCashback.IsZero()
	switch e.Campaign.Type {
	case Discount:
		if b.DiscountAmount == nil || !b.DiscountAmount.Equal(b.Amount) || !sumDiscount.Equal(b.Amount) || !sumCashback.IsZero() {
			return fmt.Errorf("discount %v, amount %s, items %s", b.DiscountAmount, b.Amount, sumDiscount)
		}
		if b.CashbackAmount != nil || b.BonusPoints != nil || b.GiftSKU != nil || sumPoints != 0 {
			return fmt.Errorf("fields of other types set")
		}
	case Cashback:
		if b.CashbackAmount == nil || !b.CashbackAmount.Equal(b.Amount) || !sumCashback.Equal(b.Amount) || !sumDiscount.IsZero() {
			return fmt.Errorf("cashback %v, amount %s, items %s", b.CashbackAmount, b.Amount, sumCashback)
		}
		if b.CreditAfterDays == nil || *b.CreditAfterDays != e.Campaign.CreditAfterDays {
			return fmt.Errorf("credit after days %v", b.CreditAfterDays)
		}
		if b.DiscountAmount != nil || b.BonusPoints != nil || b.GiftSKU != nil || sumPoints != 0 {
			return fmt.Errorf("fields of other types set")
		}
	case BonusPoints:
		if b.BonusPoints == nil || *b.BonusPoints != sumPoints || *b.BonusPoints < 0 || zeroMoney {
			return fmt.Errorf("bonus points %v, items %d, amount %s", b.BonusPoints, sumPoints, b.Amount)
		}
		if b.Multiplier == nil || !b.Multiplier.Equal(e.Campaign.Multiplier) {
			return fmt.Errorf("multiplier %v", b.Multiplier)
		}
	case Gift:
		if b.GiftSKU == nil || *b.GiftSKU != e.Campaign.GiftSKU || zeroMoney || sumPoints != 0 {
			return fmt.Errorf("gift %v, amount %s", b.GiftSKU, b.Amount)
		}
	}
	if b.FreeShipping != (e.Campaign.DiscountMode == FreeShipping && (e.Campaign.Type == Discount || e.Campaign.Type == Cashback)) {
		return fmt.Errorf("free shipping %v", b.FreeShipping)
	}
	if b.FreeShipping && zeroMoney {
		return fmt.Errorf("free shipping with amount %s", b.Amount)
	}
	return nil
}

func TestEffectiveStatus(t *testing.T) {
	t.Parallel()
	start, end := now.Add(-time.Hour), now.Add(time.Hour)
	cases := []struct {
		name       string
		stored     Status
		starts     time.Time
		ends       time.Time
		want       Status
		wantBefore Status // at start - 1ns
	}{
		{"active in window", Active, start, end, Active, Scheduled},
		{"stored scheduled but started", Scheduled, start, end, Active, Scheduled},
		{"stored active but not started", Active, now.Add(time.Minute), end, Scheduled, Scheduled},
		{"exactly at start is active", Scheduled, now, end, Active, Scheduled},
		{"one ns before start is scheduled", Active, now.Add(time.Nanosecond), end, Scheduled, Scheduled},
		{"exactly at end is ended", Active, start, now, Ended, Scheduled},
		{"one ns before end is active", Active, start, now.Add(time.Nanosecond), Active, Scheduled},
		{"past end", Active, start.Add(-time.Hour), start, Ended, Scheduled},
		{"stored ended inside window", Ended, start, end, Ended, Ended},
		{"stored ended before start", Ended, now.Add(time.Hour), end.Add(time.Hour), Ended, Ended},
		{"paused inside window", Paused, start, end, Paused, Paused},
		{"paused before start stays paused", Paused, now.Add(time.Minute), end, Paused, Paused},
		{"paused past end is ended", Paused, start, now, Ended, Paused},
		{"empty stored status follows dates", "", start, end, Active, Scheduled},
		{"unknown stored status follows dates", "draft", now.Add(time.Minute), end, Scheduled, Scheduled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Campaign{Status: tc.stored, StartsAt: tc.starts, EndsAt: tc.ends}
			require.Equal(t, tc.want, EffectiveStatus(c, now))
			require.Equal(t, tc.wantBefore, EffectiveStatus(c, tc.starts.Add(-time.Nanosecond)))
			require.Equal(t, Ended, EffectiveStatus(c, tc.ends), "at EndsAt")
			// Another time zone is the same instant.
			require.Equal(t, tc.want, EffectiveStatus(c, now.UTC()))
		})
	}
}

// variants is one campaign of every type and mode.
func variants() []Campaign {
	return []Campaign{
		{Type: Discount, DiscountMode: Percentage, DiscountValue: d("10")},
		{Type: Discount, DiscountMode: FixedAmount, DiscountValue: d("5")},
		{Type: Discount, DiscountMode: FreeShipping},
		{Type: Cashback, DiscountMode: Percentage, DiscountValue: d("5"), CreditAfterDays: 30},
		{Type: Cashback, DiscountMode: FixedAmount, DiscountValue: d("3"), CreditAfterDays: 0},
		{Type: Cashback, DiscountMode: FreeShipping},
		{Type: BonusPoints, Multiplier: d("2")},
		{Type: Gift, GiftSKU: "BRINDE-1"},
	}
}

// ruleCart totals 25.50: 2 × 10.00 (sku A, bebidas) and 1 × 5.50 (GTIN only,
// mercearia).
func ruleCart() Cart {
	return Cart{Items: []Item{
		item("A", "bebidas", "2", "10.00"),
		gtinItem("7891000100103", "mercearia", "1", "5.50"),
	}}
}

func ruleContext() Context {
	return Context{Now: now, Channel: "pdv", Segments: []string{"seg-vip"}, PointsPerReal: d("1")}
}

func TestRules(t *testing.T) {
	t.Parallel()
	type edit func(c *Campaign, cart *Cart, ctx *Context)
	cases := []struct {
		name       string
		edit       edit
		reason     Reason // "" = eligible
		missing    string
		applicable []int
	}{
		{"baseline", nil, "", "", []int{0, 1}},

		{"starts exactly now is active", func(c *Campaign, _ *Cart, _ *Context) { c.StartsAt = now }, "", "", nil},
		{"starts one ns later is not active", func(c *Campaign, _ *Cart, _ *Context) { c.StartsAt = now.Add(time.Nanosecond) }, NotActive, "", nil},
		{"ends exactly now is not active", func(c *Campaign, _ *Cart, _ *Context) { c.EndsAt = now }, NotActive, "", nil},
		{"ends one ns later is active", func(c *Campaign, _ *Cart, _ *Context) { c.EndsAt = now.Add(time.Nanosecond) }, "", "", nil},
		{"stored paused", func(c *Campaign, _ *Cart, _ *Context) { c.Status = Paused }, NotActive, "", nil},
		{"stored ended", func(c *Campaign, _ *Cart, _ *Context) { c.Status = Ended }, NotActive, "", nil},
		{"stored scheduled but started", func(c *Campaign, _ *Cart, _ *Context) { c.Status = Scheduled }, "", "", nil},
		{"stored active but past end", func(c *Campaign, _ *Cart, _ *Context) { c.EndsAt = now.Add(-time.Second) }, NotActive, "", nil},

		{"channel listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{"ecommerce", "pdv"} }, "", "", nil},

		{"store listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{"LJ-2", "LJ-1"}; ctx.Store = "LJ-1" }, "", "", nil},
		{"store not listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{"LJ-2"}; ctx.Store = "LJ-1" }, StoreMismatch, "", nil},
		{"no store, stores listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{"LJ-2"} }, StoreMismatch, "", nil},
		{"no store, empty store code listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{""} }, StoreMismatch, "", nil},
		{"store code is case-sensitive", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{"lj-1"}; ctx.Store = "LJ-1" }, StoreMismatch, "", nil},
		{"store's group listed", func(c *Campaign, _ *Cart, ctx *Context) {
			c.StoreGroups = []string{"sul"}
			ctx.Store, ctx.StoreGroups = "LJ-1", []string{"sudeste", "sul"}
		}, "", "", nil},
		{"store's groups not listed", func(c *Campaign, _ *Cart, ctx *Context) {
			c.StoreGroups = []string{"nordeste"}
			ctx.Store, ctx.StoreGroups = "LJ-1", []string{"sul"}
		}, StoreMismatch, "", nil},
		{"store listed by code, not by group", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Stores, c.StoreGroups = []string{"LJ-1"}, []string{"nordeste"}
			ctx.Store, ctx.StoreGroups = "LJ-1", []string{"sul"}
		}, "", "", nil},
		{"a store's groups do not stand for its code", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Stores = []string{"sul"}
			ctx.Store, ctx.StoreGroups = "LJ-1", []string{"sul"}
		}, StoreMismatch, "", nil},
		{"code required, none given", func(c *Campaign, _ *Cart, _ *Context) { c.RequiresCode = true }, CouponRequired, "", nil},
		{"code required, another campaign's given", func(c *Campaign, _ *Cart, ctx *Context) {
			c.RequiresCode, ctx.Coupon = true, "cmp_other"
		}, CouponRequired, "", nil},
		{"code required, its own given", func(c *Campaign, _ *Cart, ctx *Context) { c.RequiresCode, ctx.Coupon = true, c.ID }, "", "", nil},
		{"code given, none required", func(c *Campaign, _ *Cart, ctx *Context) { ctx.Coupon = "cmp_other" }, "", "", nil},
		{"segment beats code", func(c *Campaign, _ *Cart, _ *Context) { c.RequiresCode, c.SegmentID = true, "seg_x" }, SegmentMismatch, "", nil},
		{"budget left in all", func(c *Campaign, _ *Cart, _ *Context) { c.Budget = Budget{Total: dp("100"), Spent: d("99.99")} }, "", "", nil},
		{"budget spent in all", func(c *Campaign, _ *Cart, _ *Context) { c.Budget = Budget{Total: dp("100"), Spent: d("100")} }, BudgetExhausted, "", nil},
		{"store's budget spent", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Budget = Budget{PerStore: dp("50"), SpentBy: map[string]decimal.Decimal{"store:LJ-1": d("50")}}
			ctx.Store = "LJ-1"
		}, BudgetExhausted, "", nil},
		{"another store's budget spent", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Budget = Budget{PerStore: dp("50"), SpentBy: map[string]decimal.Decimal{"store:LJ-2": d("50")}}
			ctx.Store = "LJ-1"
		}, "", "", nil},
		{"today's budget spent", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Budget = Budget{Period: "day", PerPeriod: dp("10"), SpentBy: map[string]decimal.Decimal{PeriodBudgetKey("day", now, time.UTC): d("10")}}
		}, BudgetExhausted, "", nil},
		{"yesterday's budget spent", func(c *Campaign, _ *Cart, ctx *Context) {
			c.Budget = Budget{Period: "day", PerPeriod: dp("10"), SpentBy: map[string]decimal.Decimal{PeriodBudgetKey("day", now.AddDate(0, 0, -1), time.UTC): d("10")}}
		}, "", "", nil},
		{"limit beats budget", func(c *Campaign, _ *Cart, _ *Context) {
			c.LimitTotal = ip(0)
			c.Budget = Budget{Total: dp("1"), Spent: d("1")}
		}, LimitReached, "", nil},
		{"budget beats items", func(c *Campaign, _ *Cart, _ *Context) {
			c.SKUs = []string{"Z"}
			c.Budget = Budget{Total: dp("1"), Spent: d("1")}
		}, BudgetExhausted, "", nil},
		{"channel beats store", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{"app"}; c.Stores = []string{"LJ-2"} }, ChannelMismatch, "", nil},
		{"store beats segment", func(c *Campaign, _ *Cart, ctx *Context) { c.Stores = []string{"LJ-2"}; c.SegmentID = "x" }, StoreMismatch, "", nil},
		{"channel not listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{"ecommerce", "app"} }, ChannelMismatch, "", nil},
		{"channel is case-sensitive", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{"PDV"} }, ChannelMismatch, "", nil},
		{"no context channel, channels listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{"pdv"}; ctx.Channel = "" }, ChannelMismatch, "", nil},
		{"no context channel, empty string listed", func(c *Campaign, _ *Cart, ctx *Context) { c.Channels = []string{""}; ctx.Channel = "" }, ChannelMismatch, "", nil},
		{"no context channel, every channel", func(c *Campaign, _ *Cart, ctx *Context) { ctx.Channel = "" }, "", "", nil},
		{"unknown channel, every channel", func(c *Campaign, _ *Cart, ctx *Context) { ctx.Channel = "kiosk" }, "", "", nil},

		{"segment member", func(c *Campaign, _ *Cart, ctx *Context) { c.SegmentID = "seg-vip" }, "", "", nil},
		{"segment member among several", func(c *Campaign, _ *Cart, ctx *Context) {
			c.SegmentID = "seg-2"
			ctx.Segments = []string{"seg-1", "seg-2", "seg-3"}
		}, "", "", nil},
		{"segment non-member", func(c *Campaign, _ *Cart, ctx *Context) { c.SegmentID = "seg-new" }, SegmentMismatch, "", nil},
		{"segment, customer in none", func(c *Campaign, _ *Cart, ctx *Context) { c.SegmentID = "seg-vip"; ctx.Segments = nil }, SegmentMismatch, "", nil},
		{"every customer, customer in none", func(c *Campaign, _ *Cart, ctx *Context) { ctx.Segments = nil }, "", "", nil},

		// Draws of camp-1 (experiment.Draw): cus_0 821, cus_4 13, cus_3 6092.
		{"holdout, customer drawn inside", func(c *Campaign, _ *Cart, ctx *Context) { c.Holdout = 1000; ctx.CustomerID = "cus_0" }, Holdout, "", nil},
		{"holdout, customer drawn just inside", func(c *Campaign, _ *Cart, ctx *Context) { c.Holdout = 14; ctx.CustomerID = "cus_4" }, Holdout, "", nil},
		{"holdout, customer drawn on its edge", func(c *Campaign, _ *Cart, ctx *Context) { c.Holdout = 13; ctx.CustomerID = "cus_4" }, "", "", nil},
		{"holdout, customer drawn outside", func(c *Campaign, _ *Cart, ctx *Context) { c.Holdout = 5000; ctx.CustomerID = "cus_3" }, "", "", nil},
		{"no holdout", func(c *Campaign, _ *Cart, ctx *Context) { ctx.CustomerID = "cus_4" }, "", "", nil},
		{"holdout, no customer", func(c *Campaign, _ *Cart, ctx *Context) { c.Holdout = 5000; ctx.CustomerID = "" }, "", "", nil},

		{"total one below limit", func(c *Campaign, _ *Cart, _ *Context) { c.LimitTotal = ip(10); c.RedemptionsCount = 9 }, "", "", nil},
		{"total equal to limit", func(c *Campaign, _ *Cart, _ *Context) { c.LimitTotal = ip(10); c.RedemptionsCount = 10 }, LimitReached, "", nil},
		{"total above limit", func(c *Campaign, _ *Cart, _ *Context) { c.LimitTotal = ip(10); c.RedemptionsCount = 11 }, LimitReached, "", nil},
		{"total limit zero", func(c *Campaign, _ *Cart, _ *Context) { c.LimitTotal = ip(0) }, LimitReached, "", nil},
		{"per customer one below", func(c *Campaign, _ *Cart, ctx *Context) {
			c.LimitPerCustomer = ip(2)
			ctx.CustomerRedemptions = map[string]int{"camp-1": 1}
		}, "", "", nil},
		{"per customer equal", func(c *Campaign, _ *Cart, ctx *Context) {
			c.LimitPerCustomer = ip(2)
			ctx.CustomerRedemptions = map[string]int{"camp-1": 2}
		}, LimitReached, "", nil},
		{"per customer counts only this campaign", func(c *Campaign, _ *Cart, ctx *Context) {
			c.LimitPerCustomer = ip(1)
			ctx.CustomerRedemptions = map[string]int{"camp-other": 5}
		}, "", "", nil},
		{"per customer, no redemptions map", func(c *Campaign, _ *Cart, ctx *Context) { c.LimitPerCustomer = ip(1) }, "", "", nil},
		{"per customer zero", func(c *Campaign, _ *Cart, ctx *Context) { c.LimitPerCustomer = ip(0) }, LimitReached, "", nil},
		{"both limits open", func(c *Campaign, _ *Cart, ctx *Context) {
			c.LimitTotal, c.LimitPerCustomer, c.RedemptionsCount = ip(100), ip(3), 50
			ctx.CustomerRedemptions = map[string]int{"camp-1": 2}
		}, "", "", nil},

		{"sku listed", func(c *Campaign, _ *Cart, _ *Context) { c.SKUs = []string{"A"} }, "", "", []int{0}},
		{"gtin in sku list", func(c *Campaign, _ *Cart, _ *Context) { c.SKUs = []string{"7891000100103"} }, "", "", []int{1}},
		{"category listed", func(c *Campaign, _ *Cart, _ *Context) { c.Categories = []string{"mercearia"} }, "", "", []int{1}},
		{"sku or category", func(c *Campaign, _ *Cart, _ *Context) {
			c.SKUs = []string{"A"}
			c.Categories = []string{"mercearia"}
		}, "", "", []int{0, 1}},
		{"nothing listed matches", func(c *Campaign, _ *Cart, _ *Context) {
			c.SKUs = []string{"Z"}
			c.Categories = []string{"limpeza"}
		}, NoApplicableItems, "", nil},
		{"empty cart", func(_ *Campaign, cart *Cart, _ *Context) { cart.Items = nil }, NoApplicableItems, "", nil},
		{"only applicable item is free", func(c *Campaign, cart *Cart, _ *Context) {
			c.SKUs = []string{"A"}
			cart.Items[0].UnitPrice = d("0")
		}, NoApplicableItems, "", nil},
		{"only applicable item has quantity zero", func(c *Campaign, cart *Cart, _ *Context) {
			c.Categories = []string{"mercearia"}
			cart.Items[1].Quantity = d("0")
		}, NoApplicableItems, "", nil},
		{"every line total zero", func(_ *Campaign, cart *Cart, _ *Context) {
			cart.Items[0].UnitPrice = d("0")
			cart.Items[1].Quantity = d("0")
		}, NoApplicableItems, "", nil},
		{"free item is not applicable, others are", func(_ *Campaign, cart *Cart, _ *Context) { cart.Items[0].UnitPrice = d("0") }, "", "", []int{1}},
		{"line rounding to zero is not applicable", func(_ *Campaign, cart *Cart, _ *Context) {
			cart.Items[0].UnitPrice = d("0.000000001")
		}, "", "", []int{1}},

		{"min subtotal below cart", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("25.49") }, "", "", nil},
		{"min subtotal exactly the subtotal", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("25.50") }, "", "", nil},
		{"min subtotal one cent above", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("25.51") }, MinSubtotalNotMet, "0.01", nil},
		{"min subtotal far above", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("100") }, MinSubtotalNotMet, "74.50", nil},
		{"min subtotal above by less than 8 places", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("25.500000001") }, MinSubtotalNotMet, "0.00000001", nil},
		{"min subtotal uses the sent subtotal", func(c *Campaign, cart *Cart, _ *Context) {
			cart.Subtotal = d("20")
			c.MinSubtotal = dp("25")
		}, MinSubtotalNotMet, "5", nil},
		{"min subtotal counts the whole cart", func(c *Campaign, _ *Cart, _ *Context) {
			c.SKUs = []string{"A"} // 20.00 applicable, 25.50 in the cart
			c.MinSubtotal = dp("25.50")
		}, "", "", []int{0}},
		{"min subtotal zero", func(c *Campaign, _ *Cart, _ *Context) { c.MinSubtotal = dp("0") }, "", "", nil},

		// The first failing rule gives the reason.
		{"paused beats channel", func(c *Campaign, _ *Cart, _ *Context) { c.Status = Paused; c.Channels = []string{"app"} }, NotActive, "", nil},
		{"channel beats segment", func(c *Campaign, _ *Cart, _ *Context) { c.Channels = []string{"app"}; c.SegmentID = "x" }, ChannelMismatch, "", nil},
		{"segment beats holdout", func(c *Campaign, _ *Cart, ctx *Context) {
			c.SegmentID = "x"
			c.Holdout = 1000
			ctx.CustomerID = "cus_0"
		}, SegmentMismatch, "", nil},
		{"holdout beats code", func(c *Campaign, _ *Cart, ctx *Context) {
			c.RequiresCode, c.Holdout, ctx.CustomerID = true, 1000, "cus_0"
		}, Holdout, "", nil},
		{"holdout beats limit", func(c *Campaign, _ *Cart, ctx *Context) {
			c.LimitTotal = ip(0)
			c.Holdout = 1000
			ctx.CustomerID = "cus_0"
		}, Holdout, "", nil},
		{"segment beats limit", func(c *Campaign, _ *Cart, _ *Context) { c.SegmentID = "x"; c.LimitTotal = ip(0) }, SegmentMismatch, "", nil},
		{"limit beats items", func(c *Campaign, _ *Cart, _ *Context) { c.LimitTotal = ip(0); c.SKUs = []string{"Z"} }, LimitReached, "", nil},
		{"items beat min subtotal", func(c *Campaign, _ *Cart, _ *Context) { c.SKUs = []string{"Z"}; c.MinSubtotal = dp("1000") }, NoApplicableItems, "", nil},
		{"all failing", func(c *Campaign, _ *Cart, ctx *Context) {
			c.EndsAt = now
			c.Channels = []string{"app"}
			c.SegmentID = "x"
			c.LimitPerCustomer = ip(1)
			ctx.CustomerRedemptions = map[string]int{"camp-1": 1}
			c.SKUs = []string{"Z"}
			c.MinSubtotal = dp("1000")
		}, NotActive, "", nil},
	}
	for _, v := range variants() {
		for _, tc := range cases {
			name := string(v.Type) + "/" + string(v.DiscountMode) + "/" + tc.name
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c, cart, ctx := running(v), ruleCart(), ruleContext()
				if tc.edit != nil {
					tc.edit(&c, &cart, &ctx)
				}
				e, in := evalOne(t, c, cart, ctx)
				if tc.reason == "" {
					require.Nil(t, in, "ineligible: %+v", in)
					require.Equal(t, c.ID, e.Campaign.ID)
					if tc.applicable != nil {
						require.Equal(t, tc.applicable, e.ApplicableItems)
					}
					return
				}
				require.Nil(t, e, "eligible: %+v", e)
				require.Equal(t, tc.reason, in.Reason)
				require.Equal(t, c.ID, in.Campaign.ID)
				if tc.missing == "" {
					require.Nil(t, in.Missing)
				} else {
					require.NotNil(t, in.Missing)
					requireDec(t, tc.missing, *in.Missing)
				}
			})
		}
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()

	t.Run("no campaigns", func(t *testing.T) {
		t.Parallel()
		el, in := Evaluate(nil, ruleCart(), ruleContext())
		require.NotNil(t, el)
		require.NotNil(t, in)
		require.Empty(t, el)
		require.Empty(t, in)
	})

	t.Run("results keep campaign order and are never nil", func(t *testing.T) {
		t.Parallel()
		var campaigns []Campaign
		for i, v := range variants() {
			v.ID = "ok-" + strconv.Itoa(i)
			campaigns = append(campaigns, running(v))
			v.ID = "paused-" + strconv.Itoa(i)
			v = running(v)
			v.Status = Paused
			campaigns = append(campaigns, v)
		}
		el, in := Evaluate(campaigns, ruleCart(), ruleContext())
		require.Len(t, el, len(variants()))
		require.Len(t, in, len(variants()))
		for i := range el {
			require.Equal(t, "ok-"+strconv.Itoa(i), el[i].Campaign.ID)
			require.Equal(t, "paused-"+strconv.Itoa(i), in[i].Campaign.ID)
			require.Equal(t, NotActive, in[i].Reason)
		}

		el, in = Evaluate(campaigns[:1], ruleCart(), ruleContext())
		require.Len(t, el, 1)
		require.NotNil(t, in)
		el, in = Evaluate(campaigns[1:2], ruleCart(), ruleContext())
		require.NotNil(t, el)
		require.Len(t, in, 1)
	})

	t.Run("results do not share the scratch buffer", func(t *testing.T) {
		t.Parallel()
		a := running(Campaign{ID: "a", Type: Gift, SKUs: []string{"A"}})
		b := running(Campaign{ID: "b", Type: Gift, Categories: []string{"mercearia"}})
		el, _ := Evaluate([]Campaign{a, b}, ruleCart(), ruleContext())
		require.Len(t, el, 2)
		require.Equal(t, []int{0}, el[0].ApplicableItems)
		require.Equal(t, []int{1}, el[1].ApplicableItems)
	})

	t.Run("does not change its input", func(t *testing.T) {
		t.Parallel()
		c := running(Campaign{Type: Cashback, DiscountMode: FixedAmount, DiscountValue: d("3"), CreditAfterDays: 7})
		cart := ruleCart()
		el, _ := Evaluate([]Campaign{c}, cart, ruleContext())
		*el[0].Benefit.CreditAfterDays = 99
		*el[0].Benefit.CashbackAmount = d("99")
		el2, _ := Evaluate([]Campaign{c}, cart, ruleContext())
		require.Equal(t, 7, *el2[0].Benefit.CreditAfterDays)
		requireDec(t, "3", el2[0].Benefit.Amount)
		requireDec(t, "10.00", cart.Items[0].UnitPrice)
	})
}

// TestEstimateMatchesEvaluate: what redeem recomputes from the kept cart is
// what validate promised.
func TestEstimateMatchesEvaluate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	pct := decimal.RequireFromString("12.5")
	campaigns := []Campaign{
		{ID: "cmp_a", Type: Discount, Status: Active, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour), DiscountMode: Percentage, DiscountValue: pct},
		{ID: "cmp_b", Type: BonusPoints, Status: Active, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour), Multiplier: decimal.NewFromInt(2), Categories: []string{"food"}},
		{ID: "cmp_c", Type: Cashback, Status: Active, StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour), DiscountMode: FixedAmount, DiscountValue: decimal.NewFromInt(7)},
	}
	cart := Cart{Items: []Item{
		{SKU: "A", Category: "food", Quantity: decimal.RequireFromString("0.755"), UnitPrice: decimal.RequireFromString("12.99")},
		{SKU: "B", Category: "drinks", Quantity: decimal.NewFromInt(3), UnitPrice: decimal.RequireFromString("3.33333333")},
	}}
	rate := decimal.RequireFromString("1.5")
	eligible, _ := Evaluate(campaigns, cart, Context{Now: now, PointsPerReal: rate})
	require.Len(t, eligible, 3)
	for _, e := range eligible {
		got, ok := Estimate(e.Campaign, cart, rate)
		require.True(t, ok)
		require.Equal(t, e.Benefit, got, e.Campaign.ID)
	}
	_, ok := Estimate(Campaign{Type: Discount, SKUs: []string{"Z"}}, cart, rate)
	require.False(t, ok)
}
