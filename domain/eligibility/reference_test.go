package eligibility

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// referenceEvaluate is Evaluate as it was before its fixed-point fast path:
// every amount computed with decimal arithmetic. The differential tests
// require Evaluate and Estimate to give exactly what it gives.
func referenceEvaluate(campaigns []Campaign, cart Cart, ctx Context) ([]Eligible, []Ineligible) {
	eligible := make([]Eligible, 0, len(campaigns))
	ineligible := make([]Ineligible, 0)
	if len(campaigns) == 0 {
		return eligible, ineligible
	}

	lines := make([]decimal.Decimal, len(cart.Items))
	sum := decimal.Zero
	for i := range cart.Items {
		lines[i] = referenceLineTotal(&cart.Items[i])
		sum = sum.Add(lines[i])
	}
	subtotal := cart.Subtotal
	if subtotal.IsZero() {
		subtotal = sum
	}

	for i := range campaigns {
		c := &campaigns[i]
		reason := check(c, &ctx, func(period string) string { return PeriodBudgetKey(period, ctx.Now, cmp.Or(ctx.Zone, time.UTC)) })
		var applicable []int
		if reason == "" {
			m := newMatcher(c)
			for i := range cart.Items {
				if lines[i].IsPositive() && m.applies(&cart.Items[i]) {
					applicable = append(applicable, i)
				}
			}
			if len(applicable) == 0 {
				reason = NoApplicableItems
			}
		}
		if reason == "" && c.MinSubtotal != nil && subtotal.LessThan(*c.MinSubtotal) {
			missing := c.MinSubtotal.Sub(subtotal).RoundCeil(places)
			ineligible = append(ineligible, Ineligible{Campaign: *c, Reason: MinSubtotalNotMet, Missing: &missing})
			continue
		}
		if reason != "" {
			ineligible = append(ineligible, Ineligible{Campaign: *c, Reason: reason})
			continue
		}
		eligible = append(eligible, Eligible{
			Campaign:        *c,
			ApplicableItems: applicable,
			Benefit:         referenceBenefit(c, cart.Items, lines, applicable, &ctx),
		})
	}
	return eligible, ineligible
}

func referenceLineTotal(it *Item) decimal.Decimal {
	t := it.UnitPrice.Mul(it.Quantity).Round(places)
	if t.IsNegative() {
		return decimal.Zero
	}
	return t
}

func referenceBenefit(c *Campaign, items []Item, lines []decimal.Decimal, applicable []int, ctx *Context) Benefit {
	b := Benefit{Amount: decimal.Zero, Items: make([]ItemBenefit, len(applicable))}
	for k, i := range applicable {
		b.Items[k] = ItemBenefit{
			Index:          i,
			SKU:            itemSKU(&items[i]),
			Quantity:       items[i].Quantity,
			DiscountAmount: decimal.Zero,
			CashbackAmount: decimal.Zero,
		}
	}
	switch c.Type {
	case Discount, Cashback:
		amounts := referenceMoney(c, lines, applicable)
		for k := range amounts {
			b.Amount = b.Amount.Add(amounts[k])
		}
		b.FreeShipping = c.DiscountMode == FreeShipping
		amount := b.Amount
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
		rate := ctx.PointsPerReal.Mul(c.Multiplier.Sub(one))
		var total int64
		for k, i := range applicable {
			p := min(earned(lines[i], rate), math.MaxInt64-total)
			b.Items[k].BonusPoints = p
			total += p
		}
		b.BonusPoints = &total
	case Gift:
		sku := c.GiftSKU
		b.GiftSKU = &sku
	}
	return b
}

// referenceMoney is money as it was.
func referenceMoney(c *Campaign, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	switch c.DiscountMode {
	case Percentage:
		pct := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, hundred))
		out := make([]decimal.Decimal, len(applicable))
		for k, i := range applicable {
			out[k] = lines[i].Mul(pct).Shift(-2).Round(places)
		}
		return out
	case FixedAmount:
		total := decimal.Zero
		for _, i := range applicable {
			total = total.Add(lines[i])
		}
		amount := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, total)).Round(places)
		return referenceSplit(amount, total, lines, applicable)
	case FreeShipping: // no money off the items
	}
	return nil
}

// referenceSplit is split as it was.
func referenceSplit(amount, total decimal.Decimal, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	out := make([]decimal.Decimal, len(applicable))
	last := len(applicable) - 1
	allocated := decimal.Zero
	for k := range last {
		out[k] = amount.Mul(lines[applicable[k]]).DivRound(total, places)
		allocated = allocated.Add(out[k])
	}
	out[last] = amount.Sub(allocated)
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

// dumpResults writes out everything Evaluate returns, each decimal as its
// coefficient and exponent: two results dump alike only if they are equal
// with the same scale, so that even String and JSON cannot tell them apart.
func dumpResults(el []Eligible, in []Ineligible) string {
	var s strings.Builder
	fmt.Fprintf(&s, "eligible %v, ineligible %v\n", el != nil, in != nil)
	for _, e := range el {
		fmt.Fprintf(&s, "%s eligible, items %v (nil %v)\n", e.Campaign.ID, e.ApplicableItems, e.ApplicableItems == nil)
		dumpBenefit(&s, e.Benefit)
	}
	for _, x := range in {
		fmt.Fprintf(&s, "%s %s, missing %s\n", x.Campaign.ID, x.Reason, decPtr(x.Missing))
	}
	return s.String()
}

func dumpBenefit(s *strings.Builder, b Benefit) {
	fmt.Fprintf(s, "  amount %s discount %s cashback %s days %s points %s multiplier %s free %v gift %s (nil items %v)\n",
		dec(b.Amount), decPtr(b.DiscountAmount), decPtr(b.CashbackAmount), ptr(b.CreditAfterDays), ptr(b.BonusPoints),
		decPtr(b.Multiplier), b.FreeShipping, ptr(b.GiftSKU), b.Items == nil)
	for _, ib := range b.Items {
		fmt.Fprintf(s, "  %d %q qty %s discount %s cashback %s points %d\n",
			ib.Index, ib.SKU, dec(ib.Quantity), dec(ib.DiscountAmount), dec(ib.CashbackAmount), ib.BonusPoints)
	}
}

func dec(d decimal.Decimal) string { return fmt.Sprintf("%se%d", d.Coefficient(), d.Exponent()) }

func decPtr(d *decimal.Decimal) string {
	if d == nil {
		return "nil"
	}
	return dec(*d)
}

func ptr[T any](p *T) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// sameAsReference fails unless Evaluate, and Estimate for every eligible
// campaign, give exactly what referenceEvaluate gives.
func sameAsReference(campaigns []Campaign, cart Cart, ctx Context) error {
	wantEl, wantIn := referenceEvaluate(campaigns, cart, ctx)
	gotEl, gotIn := Evaluate(campaigns, cart, ctx)
	if want, got := dumpResults(wantEl, wantIn), dumpResults(gotEl, gotIn); got != want {
		return fmt.Errorf("Evaluate differs from the reference:\n%s", lineDiff(want, got))
	}
	for _, e := range wantEl {
		b, ok := Estimate(e.Campaign, cart, ctx.PointsPerReal)
		var want, got strings.Builder
		dumpBenefit(&want, e.Benefit)
		dumpBenefit(&got, b)
		if !ok || got.String() != want.String() {
			return fmt.Errorf("Estimate of %s (ok %v) differs from the reference:\n%s", e.Campaign.ID, ok, lineDiff(want.String(), got.String()))
		}
	}
	return nil
}

// lineDiff lists the lines of want and got that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var s strings.Builder
	for i := range max(len(w), len(g)) {
		wl, gl := "", ""
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&s, "want %s\n got %s\n", wl, gl)
		}
	}
	return s.String()
}

// stored is s as the database returns it from a numeric(20,8): with 8 places.
func stored(s string) decimal.Decimal { return d(s).Round(8) }

// TestMatchesReference runs the edges of the fast path against the
// reference: where values stop fitting, many decimal places, half-unit
// rounding, the adjustments of split, and the decimal scales the database
// and the APIs send.
func TestMatchesReference(t *testing.T) {
	t.Parallel()
	huge := strconv.FormatInt(math.MaxInt64, 10)
	carts := map[string]Cart{
		"pos": cartOf(line{"2", "12.99"}, line{"1", "5.49"}, line{"0.755", "39.90"}, line{"3", "0.01"}),
		"stored scale": {Items: []Item{
			{SKU: "S1", Quantity: stored("2"), UnitPrice: stored("12.99")},
			{SKU: "S2", Quantity: stored("0.755"), UnitPrice: stored("39.9")},
		}},
		"many places": cartOf(line{"0.3333333333333333333333", "3"}, line{"1.000000000000000000000000001", "7"},
			line{"1", "0.000000005"}, line{"1", "0.000000004999999"}, line{"1", "-0.000000005"}),
		"one-unit lines":         cartOf(line{"1", "0.00000001"}, line{"1", "0.00000001"}, line{"1", "0.00000001"}, line{"1", "0.00000001"}),
		"few-unit lines":         cartOf(line{"1", "0.00000002"}, line{"1", "0.00000002"}, line{"1", "0.00000002"}, line{"1", "0.00000001"}),
		"19-digit price":         cartOf(line{"1", huge + "e-8"}),
		"large lines":            cartOf(line{"3", "999999999.99999999"}, line{"2", "1000000000"}),
		"units beyond int64":     cartOf(line{"101", "922337203.685477581"}),
		"product beyond 2^64":    cartOf(line{"99999.9999999999", "99999999.9999999999"}),
		"integers beyond 2^64":   cartOf(line{"9999999999", "9999999999"}),
		"ten million":            cartOf(line{"1", "10000000"}),
		"near the largest units": cartOf(line{"100", "922337203.68547758"}, line{"1", "0.00000007"}),
		"sum beyond the units":   cartOf(line{"1", "50000000000"}, line{"1", "50000000000"}),
		"line beyond the units":  cartOf(line{"1", "1e11"}, line{"1", "10"}),
		"wide coefficients":      cartOf(line{"1.0000000000000000000000", "10.000000000000000000000"}),
		"negative and zero":      cartOf(line{"-1", "10"}, line{"1", "-10"}, line{"0", "10"}, line{"-2", "-5"}),
		"subtotal sent":          {Subtotal: d("50"), Items: cartOf(line{"1", "30"}, line{"1", "10"}).Items},
	}
	values := []string{"0", "-1", "2", "5", "10", "12.5", "33.333333333333333", "33.3333333333333333333", "99.999999995",
		"100", "1e2", "100.00000000000000000", "150", "0.00000002", "0.00000005", "0.000000005", "0.0000000049999", "1.234567895", "25.50",
		"10.00000000", "1e30", "1e-30", huge, huge + "e-8"}
	rates := []string{"0", "-1", "1", "1.5", "1.00000000", "1e12", "1e-20", "0.000000000000000001", "123456789012345.67",
		"1234500000000"}
	for name, cart := range carts {
		for _, rate := range rates {
			campaigns := []Campaign{running(Campaign{ID: "gift", Type: Gift, MinSubtotal: dp("40")})}
			for _, v := range values {
				for _, typ := range []Type{Discount, Cashback} {
					for _, mode := range []Mode{Percentage, FixedAmount} {
						campaigns = append(campaigns, running(Campaign{
							ID: string(typ) + string(mode) + v, Type: typ, DiscountMode: mode, DiscountValue: d(v),
						}))
					}
				}
				campaigns = append(campaigns, running(Campaign{ID: "points" + v, Type: BonusPoints, Multiplier: d(v)}))
			}
			ctx := Context{Now: now, PointsPerReal: stored(rate)}
			if err := sameAsReference(campaigns, cart, ctx); err != nil {
				t.Errorf("cart %s, rate %s: %v", name, rate, err)
			}
			ctx.PointsPerReal = d(rate)
			if err := sameAsReference(campaigns, cart, ctx); err != nil {
				t.Errorf("cart %s, unrounded rate %s: %v", name, rate, err)
			}
		}
	}
}

// TestOverflowingExponentPanics: a line whose exponent overflows panics in
// decimal arithmetic, even when the fast path could tell its value.
func TestOverflowingExponentPanics(t *testing.T) {
	t.Parallel()
	cart := Cart{Items: []Item{{SKU: "A", Quantity: decimal.New(0, math.MaxInt32), UnitPrice: decimal.New(1, 1)}}}
	campaigns := []Campaign{running(Campaign{Type: Gift})}
	want := func() (r any) {
		defer func() { r = recover() }()
		referenceEvaluate(campaigns, cart, Context{Now: now})
		return nil
	}()
	require.NotNil(t, want)
	require.PanicsWithValue(t, want, func() { Evaluate(campaigns, cart, Context{Now: now}) })
}
