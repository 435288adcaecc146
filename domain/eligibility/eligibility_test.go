package eligibility

import (
	"fmt"
	"math"
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

// TestPeriodBudgetKey: a period is named by its first day in the zone; a
// week starts on Monday.
func TestPeriodBudgetKey(t *testing.T) {
	t.Parallel()
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 2, 30, 0, 0, time.UTC) // Wednesday 25th, 23:30 in São Paulo
	for _, tc := range []struct{ period, want string }{
		{"day", "day:2026-11-25"}, {"week", "week:2026-11-23"}, {"month", "month:2026-11-01"},
	} {
		if got := PeriodBudgetKey(tc.period, at, sp); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.period, got, tc.want)
		}
	}
	sunday := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if got := PeriodBudgetKey("week", sunday, time.UTC); got != "week:2026-11-23" {
		t.Errorf("a Sunday's week: %s", got)
	}
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

func TestApplies(t *testing.T) {
	t.Parallel()
	many := make([]string, 0, 50)
	for i := range 50 {
		many = append(many, "SKU-"+strconv.Itoa(i))
	}
	cases := []struct {
		name       string
		skus, cats []string
		it         Item
		want       bool
		brands     []string
	}{
		{"brand listed", nil, nil, Item{SKU: "A", Brand: "Ypê"}, true, []string{"Omo", "Ypê"}},
		{"brand not listed", nil, nil, Item{SKU: "A", Brand: "Omo"}, false, []string{"Ypê"}},
		{"brand is case-sensitive", nil, nil, Item{SKU: "A", Brand: "ypê"}, false, []string{"Ypê"}},
		{"no brand never matches", nil, nil, Item{SKU: "A"}, false, []string{""}},
		{"brand or category", nil, []string{"Limpeza"}, Item{SKU: "A", Category: "Limpeza", Brand: "Omo"}, true, []string{"Ypê"}},
		{"category path under a listed category", nil, []string{"Bebidas"}, Item{SKU: "A", Category: "Bebidas > Cervejas > Lata"}, true, nil},
		{"category path, middle level listed", nil, []string{"Bebidas > Cervejas"}, Item{SKU: "A", Category: "Bebidas > Cervejas > Lata"}, true, nil},
		{"category path, deeper level listed", nil, []string{"Bebidas > Cervejas"}, Item{SKU: "A", Category: "Bebidas"}, false, nil},
		{"category prefix of a word is not a level", nil, []string{"Bebida"}, Item{SKU: "A", Category: "Bebidas > Cervejas"}, false, nil},
		{"long category list, path", nil, append([]string{"Bebidas"}, many...), Item{Category: "Bebidas > Sucos"}, true, nil},
		{"no lists: every item", nil, nil, Item{SKU: "A"}, true, nil},
		{"no lists: item without ids", nil, nil, Item{}, true, nil},
		{"sku listed", []string{"A", "B"}, nil, Item{SKU: "B"}, true, nil},
		{"sku not listed", []string{"A"}, nil, Item{SKU: "B", Category: "x"}, false, nil},
		{"gtin in skus, no sku", []string{"789"}, nil, Item{GTIN: "789"}, true, nil},
		{"gtin in skus, other sku", []string{"789"}, nil, Item{SKU: "A", GTIN: "789"}, true, nil},
		{"category listed", nil, []string{"bebidas"}, Item{SKU: "A", Category: "bebidas"}, true, nil},
		{"category not listed", nil, []string{"bebidas"}, Item{SKU: "A", Category: "limpeza"}, false, nil},
		{"sku list only, category ignored", []string{"A"}, nil, Item{SKU: "B", Category: "A"}, false, nil},
		{"category list only, sku ignored", nil, []string{"A"}, Item{SKU: "A", Category: "B"}, false, nil},
		{"either list", []string{"A"}, []string{"bebidas"}, Item{SKU: "B", Category: "bebidas"}, true, nil},
		{"empty sku never matches", []string{""}, nil, Item{}, false, nil},
		{"empty category never matches", nil, []string{""}, Item{SKU: "A"}, false, nil},
		{"case-sensitive", []string{"abc"}, nil, Item{SKU: "ABC"}, false, nil},
		{"long list hit", many, nil, Item{SKU: "SKU-42"}, true, nil},
		{"long list gtin hit", many, nil, Item{SKU: "X", GTIN: "SKU-7"}, true, nil},
		{"long list miss", many, many, Item{SKU: "SKU-50", Category: "c"}, false, nil},
		{"long category list hit", nil, many, Item{Category: "SKU-49"}, true, nil},
		{"long list empty sku", append([]string{""}, many...), nil, Item{}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Campaign{SKUs: tc.skus, Categories: tc.cats, Brands: tc.brands}
			require.Equal(t, tc.want, c.Applies(tc.it))
			// Evaluate agrees with Applies.
			c = running(Campaign{Type: Gift, SKUs: tc.skus, Categories: tc.cats, Brands: tc.brands})
			tc.it.Quantity, tc.it.UnitPrice = d("1"), d("1")
			el, _ := Evaluate([]Campaign{c}, Cart{Items: []Item{tc.it}}, Context{Now: now})
			require.Equal(t, tc.want, len(el) == 1)
		})
	}
}

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
