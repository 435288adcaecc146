// Package eligibility decides which campaigns a customer's cart qualifies for
// and estimates what each one gives, item by item. It is the rule behind
// POST /v1/campaigns/validate and the point-of-sale discount authorization.
// It touches no database: callers load the campaigns and the customer's
// redemption counts and pass them in.
//
// Money is decimal and rounded half-up to 8 decimal places; a line total is
// UnitPrice × Quantity.
package eligibility

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/points"
)

// places is the number of decimal places of every amount of money.
const places = 8

// Type is the kind of benefit a campaign gives.
type Type string

// Campaign types.
const (
	Discount    Type = "discount"
	Cashback    Type = "cashback"
	BonusPoints Type = "bonus_points"
	Gift        Type = "gift"
)

// Mode is how a discount or cashback campaign computes its value.
type Mode string

// Discount modes. The empty mode gives no money.
const (
	Percentage   Mode = "percentage"    // DiscountValue percent (0–100) of each applicable line
	FixedAmount  Mode = "fixed_amount"  // DiscountValue R$, split over the applicable lines
	FreeShipping Mode = "free_shipping" // no money on the items; shipping is free
)

// Status is a campaign's lifecycle status.
type Status string

// Campaign statuses.
const (
	Scheduled Status = "scheduled"
	Active    Status = "active"
	Paused    Status = "paused"
	Ended     Status = "ended"
)

// Campaign is what the eligibility rules need of a campaign.
type Campaign struct {
	ID, Name, Description string
	Type                  Type
	Status                Status // stored status; see EffectiveStatus
	StartsAt, EndsAt      time.Time
	SegmentID             string           // "" = every customer
	Channels              []string         // empty = every channel
	Stores, StoreGroups   []string         // store codes and store groups; both empty = every store
	DiscountMode          Mode             // discount and cashback campaigns
	DiscountValue         decimal.Decimal  // percentage 0–100 or fixed R$
	CreditAfterDays       int              // cashback: days until it is credited, 0 = at once
	Multiplier            decimal.Decimal  // bonus_points: > 1
	GiftSKU               string           // gift
	MinSubtotal           *decimal.Decimal // nil = no minimum cart subtotal
	SKUs, Categories      []string         // applicable items; with Brands, all empty = every item
	Brands                []string         // applicable brands (of the tenant's catalogue)
	LimitTotal            *int             // nil = no limit on all redemptions
	LimitPerCustomer      *int             // nil = no limit per customer
	RedemptionsCount      int              // redemptions so far, of every customer
	Budget                Budget           // money budgets; none when its amounts are nil
	Stacking              Stacking         // "" is Combinable
	Priority              int              // higher first: breaks ties between combinations
	RequiresCode          bool             // only with one of its coupon codes (Context.Coupon)
}

// Stacking says whether a campaign's benefit adds to other campaigns' on one
// order.
type Stacking string

// Stacking rules.
const (
	Combinable Stacking = "combinable" // with every other combinable campaign
	Exclusive  Stacking = "exclusive"  // alone
)

// Budget is what a campaign may give in R$ (discounts and cashback), in all,
// in each store and in each period, with what it gave so far.
type Budget struct {
	Total, PerStore, PerPeriod *decimal.Decimal // nil: no such budget
	Period                     string           // day, week or month (of PerPeriod)
	Spent                      decimal.Decimal  // in all
	SpentBy                    map[string]decimal.Decimal
}

// Any tells whether there is a budget at all.
func (b Budget) Any() bool { return b.Total != nil || b.PerStore != nil || b.PerPeriod != nil }

// StoreBudgetKey is the key of Budget.SpentBy of a store's spending.
func StoreBudgetKey(store string) string { return "store:" + store }

// PeriodBudgetKey names the period (day, week from Monday, or month) of t in
// loc by its first day: "day:2026-11-26", "week:2026-11-23", "month:2026-11-01".
func PeriodBudgetKey(period string, t time.Time, loc *time.Location) string {
	t = t.In(loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	switch period {
	case "week":
		day = day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	case "month":
		day = day.AddDate(0, 0, 1-day.Day())
	}
	return period + ":" + day.Format(time.DateOnly)
}

// Exhausted tells whether a budget has nothing left at store (its code, ""
// for none) at now in loc: in all, in the store, or in the period.
func (b Budget) Exhausted(store string, now time.Time, loc *time.Location) bool {
	switch {
	case b.Total != nil && b.Spent.GreaterThanOrEqual(*b.Total):
		return true
	case b.PerStore != nil && store != "" && b.SpentBy[StoreBudgetKey(store)].GreaterThanOrEqual(*b.PerStore):
		return true
	case b.PerPeriod != nil && b.SpentBy[PeriodBudgetKey(b.Period, now, loc)].GreaterThanOrEqual(*b.PerPeriod):
		return true
	}
	return false
}

// EffectiveStatus is the campaign's status at now: ended if its stored status
// is ended or now >= EndsAt; else paused if stored paused; else scheduled if
// now < StartsAt; else active. Reads use it so a status is never stale.
func EffectiveStatus(c Campaign, now time.Time) Status {
	return effectiveStatus(&c, now)
}

func effectiveStatus(c *Campaign, now time.Time) Status {
	switch {
	case c.Status == Ended || !now.Before(c.EndsAt):
		return Ended
	case c.Status == Paused:
		return Paused
	case now.Before(c.StartsAt):
		return Scheduled
	}
	return Active
}

// Item is a cart line. Quantity may be fractional (kg at the point of sale).
type Item struct {
	SKU, GTIN, Category string
	Brand               string
	Quantity, UnitPrice decimal.Decimal
}

// Cart is what the customer is buying. A zero Subtotal means the sum of the
// line totals.
type Cart struct {
	Subtotal decimal.Decimal
	Items    []Item
}

// Context is who is buying, where and when.
type Context struct {
	Now                 time.Time
	Channel             string          // "" matches only campaigns for every channel
	Store               string          // the store's code; "" matches only campaigns for every store
	StoreGroups         []string        // the store's groups (regions)
	Zone                *time.Location  // the tenant's time zone, for budgets per period (nil: UTC)
	Segments            []string        // the customer's segment ids
	CustomerRedemptions map[string]int  // campaign id → redemptions by this customer
	PointsPerReal       decimal.Decimal // the tenant's earning rate for bonus points; 0 earns none
	Coupon              string          // the id of the campaign whose coupon code came with the cart
}

// ItemBenefit is what one applicable cart item receives.
type ItemBenefit struct {
	Index          int    // position in Cart.Items
	SKU            string // the item's SKU, or its GTIN when SKU is empty
	Quantity       decimal.Decimal
	DiscountAmount decimal.Decimal // discount campaigns
	CashbackAmount decimal.Decimal // cashback campaigns
	BonusPoints    int64           // bonus_points campaigns
}

// Benefit is the estimated benefit of an eligible campaign. The per-type
// fields are set only for their type; Items always add up to the totals.
type Benefit struct {
	Amount          decimal.Decimal  // R$ value: the discount or the cashback; 0 for points, free shipping and gifts
	DiscountAmount  *decimal.Decimal // discount
	CashbackAmount  *decimal.Decimal // cashback
	CreditAfterDays *int             // cashback
	BonusPoints     *int64           // bonus_points
	Multiplier      *decimal.Decimal // bonus_points
	FreeShipping    bool             // mode free_shipping
	GiftSKU         *string          // gift
	Items           []ItemBenefit    // one per applicable item, in cart order
}

// Eligible is a campaign the cart qualifies for, with the indexes of its
// applicable items in Cart.Items and its estimated benefit.
type Eligible struct {
	Campaign        Campaign
	ApplicableItems []int
	Benefit         Benefit
}

// Reason is why a campaign does not apply.
type Reason string

// Reasons, in the order the rules are checked.
const (
	NotActive         Reason = "not_active"           // effective status is not active
	ChannelMismatch   Reason = "channel_mismatch"     // the campaign is not for this channel
	StoreMismatch     Reason = "store_mismatch"       // the campaign is not for this store (or no store was given)
	SegmentMismatch   Reason = "segment_mismatch"     // the customer is not in the campaign's segment
	LimitReached      Reason = "limit_reached"        // total or per-customer limit exhausted
	BudgetExhausted   Reason = "budget_exhausted"     // nothing left of a money budget (in all, the store's, the period's)
	NoApplicableItems Reason = "no_applicable_items"  // no item with a positive line total applies
	MinSubtotalNotMet Reason = "min_subtotal_not_met" // the cart subtotal is below MinSubtotal
	CouponRequired    Reason = "coupon_required"      // the campaign needs one of its coupon codes
	StackingExcluded  Reason = "excluded_by_stacking" // another campaign, exclusive or more valuable, applies instead
)

// Ineligible is a campaign the cart does not qualify for and the first rule
// it fails. Missing is the R$ still needed for min_subtotal_not_met.
type Ineligible struct {
	Campaign   Campaign
	Reason     Reason
	ExcludedBy string // StackingExcluded: the campaign that applies instead
	Missing    *decimal.Decimal
}

// Applies tells whether it is an applicable item of c: its SKU or GTIN is in
// SKUs, its Category is in Categories or under one of them, or its Brand is
// in Brands; with none of the lists, every item is. Empty strings never
// match.
func (c Campaign) Applies(it Item) bool {
	m := newMatcher(&c)
	return m.applies(&it)
}

// Evaluate checks every campaign against the cart and context. Both results
// keep the order of campaigns and are never nil. The rules, in order, the
// first failing giving the reason: active now, channel, segment, limits, at
// least one applicable item with a positive line total, minimum subtotal.
//
// Items with a zero (or negative) line total are never applicable: they have
// nothing to discount.
func Evaluate(campaigns []Campaign, cart Cart, ctx Context) ([]Eligible, []Ineligible) {
	eligible := make([]Eligible, 0, len(campaigns))
	ineligible := make([]Ineligible, 0)
	if len(campaigns) == 0 {
		return eligible, ineligible
	}

	lines := newCartLines(cart.Items)
	subtotal := cart.Subtotal
	if subtotal.IsZero() {
		subtotal = lines.sum()
	}

	scratch := make([]int, 0, len(cart.Items))
	for i := range campaigns {
		c := &campaigns[i]
		reason := check(c, &ctx)
		var applicable []int
		if reason == "" {
			applicable = lines.applicable(c, scratch[:0])
			if len(applicable) == 0 {
				reason = NoApplicableItems
			}
		}
		if reason == "" && c.MinSubtotal != nil && subtotal.LessThan(*c.MinSubtotal) {
			// Rounded up, so paying Missing more always meets the minimum.
			missing := c.MinSubtotal.Sub(subtotal).RoundCeil(places)
			ineligible = append(ineligible, Ineligible{Campaign: *c, Reason: MinSubtotalNotMet, Missing: &missing})
			continue
		}
		if reason != "" {
			ineligible = append(ineligible, Ineligible{Campaign: *c, Reason: reason})
			continue
		}
		applicable = slices.Clone(applicable)
		eligible = append(eligible, Eligible{
			Campaign:        *c,
			ApplicableItems: applicable,
			Benefit:         lines.benefit(c, applicable, &ctx),
		})
	}
	return eligible, ineligible
}

// check applies the rules that need no cart, returning the first failing.
func check(c *Campaign, ctx *Context) Reason {
	if effectiveStatus(c, ctx.Now) != Active {
		return NotActive
	}
	if len(c.Channels) > 0 && (ctx.Channel == "" || !slices.Contains(c.Channels, ctx.Channel)) {
		return ChannelMismatch
	}
	if !forStore(c, ctx) {
		return StoreMismatch
	}
	if c.SegmentID != "" && !slices.Contains(ctx.Segments, c.SegmentID) {
		return SegmentMismatch
	}
	if c.RequiresCode && ctx.Coupon != c.ID {
		return CouponRequired
	}
	if c.LimitTotal != nil && c.RedemptionsCount >= *c.LimitTotal {
		return LimitReached
	}
	if c.LimitPerCustomer != nil && ctx.CustomerRedemptions[c.ID] >= *c.LimitPerCustomer {
		return LimitReached
	}
	if zone := ctx.Zone; c.Budget.Exhausted(ctx.Store, ctx.Now, cmp.Or(zone, time.UTC)) {
		return BudgetExhausted
	}
	return ""
}

// forStore tells whether c applies at the store of ctx: every store when it
// lists none, else a store it lists by code or by one of its groups.
func forStore(c *Campaign, ctx *Context) bool {
	if len(c.Stores) == 0 && len(c.StoreGroups) == 0 {
		return true
	}
	if ctx.Store != "" && slices.Contains(c.Stores, ctx.Store) {
		return true
	}
	return slices.ContainsFunc(ctx.StoreGroups, func(g string) bool { return slices.Contains(c.StoreGroups, g) })
}

// TargetsStores tells whether any of campaigns is for some stores only: only
// then is the store's groups worth reading.
func TargetsStores(campaigns []Campaign) bool {
	return slices.ContainsFunc(campaigns, func(c Campaign) bool { return len(c.Stores) > 0 || len(c.StoreGroups) > 0 })
}

// cartLines are the line totals of a cart, computed once for all campaigns,
// with what computing the campaigns' benefits from them needs.
type cartLines struct {
	items []Item
	// units are the line totals in units when every one of them and their
	// sum fit the fast path of fixed.go, else nil.
	units    []uint64
	sumUnits uint64
	// dec are the line totals as decimals: when units is set, made only if
	// something is left to the decimal arithmetic.
	dec []decimal.Decimal
	// shares and amounts are scratch space for money.
	shares  []uint64
	amounts []decimal.Decimal
	// decimals holds the amounts made from units, to share equal ones.
	decimals map[uint64]decimal.Decimal
}

func newCartLines(items []Item) *cartLines {
	units := make([]uint64, len(items))
	var sum uint64
	for i := range items {
		u, ok := lineUnits(&items[i])
		sum += u // both at most MaxInt64: it cannot wrap
		if !ok || sum > math.MaxInt64 {
			dec := make([]decimal.Decimal, len(items))
			for j := range items {
				dec[j] = lineTotal(&items[j])
			}
			return &cartLines{items: items, dec: dec}
		}
		units[i] = u
	}
	return &cartLines{items: items, units: units, sumUnits: sum}
}

// lineDecimals are the line totals as decimals.
func (l *cartLines) lineDecimals() []decimal.Decimal {
	if l.dec == nil {
		l.dec = make([]decimal.Decimal, len(l.units))
		for i, u := range l.units {
			l.dec[i] = decimal.New(int64(u), -places)
		}
	}
	return l.dec
}

// sum is the sum of the line totals.
func (l *cartLines) sum() decimal.Decimal {
	if l.units != nil {
		return decimal.New(int64(l.sumUnits), -places)
	}
	sum := decimal.Zero
	for _, t := range l.dec {
		sum = sum.Add(t)
	}
	return sum
}

// positive tells whether line i is above zero.
func (l *cartLines) positive(i int) bool {
	if l.units != nil {
		return l.units[i] > 0
	}
	return l.dec[i].IsPositive()
}

// lineTotal is round8(UnitPrice × Quantity), never below zero.
func lineTotal(it *Item) decimal.Decimal {
	t := it.UnitPrice.Mul(it.Quantity).Round(places)
	if t.IsNegative() {
		return decimal.Zero
	}
	return t
}

// itemSKU is the item's SKU, or its GTIN when it has none.
func itemSKU(it *Item) string {
	if it.SKU != "" {
		return it.SKU
	}
	return it.GTIN
}

// mapThreshold is the list length above which matching builds a set.
const mapThreshold = 16

// matcher decides whether items apply to one campaign.
type matcher struct {
	all                      bool
	skus, categories, brands []string
	skuSet, catSet           map[string]struct{}
}

func newMatcher(c *Campaign) matcher {
	m := matcher{
		all:  len(c.SKUs) == 0 && len(c.Categories) == 0 && len(c.Brands) == 0,
		skus: c.SKUs, categories: c.Categories, brands: c.Brands,
	}
	if len(c.SKUs) > mapThreshold {
		m.skuSet = toSet(c.SKUs)
	}
	if len(c.Categories) > mapThreshold {
		m.catSet = toSet(c.Categories)
	}
	return m
}

func toSet(list []string) map[string]struct{} {
	s := make(map[string]struct{}, len(list))
	for _, v := range list {
		s[v] = struct{}{}
	}
	return s
}

func (m *matcher) applies(it *Item) bool {
	if m.all {
		return true
	}
	return in(it.SKU, m.skus, m.skuSet) || in(it.GTIN, m.skus, m.skuSet) || m.inCategory(it.Category) ||
		(it.Brand != "" && slices.Contains(m.brands, it.Brand))
}

// CategorySeparator separates the levels of a category path, such as
// "Bebidas > Cervejas".
const CategorySeparator = " > "

// inCategory tells whether a category (path) is one of the campaign's or
// under one of them: "Bebidas" takes "Bebidas > Cervejas".
func (m *matcher) inCategory(category string) bool {
	if category == "" || len(m.categories) == 0 {
		return false
	}
	for {
		if in(category, m.categories, m.catSet) {
			return true
		}
		i := strings.LastIndex(category, CategorySeparator)
		if i < 0 {
			return false
		}
		category = category[:i]
	}
}

func in(v string, list []string, set map[string]struct{}) bool {
	if v == "" {
		return false
	}
	if set != nil {
		_, ok := set[v]
		return ok
	}
	return slices.Contains(list, v)
}

// applicable appends to dst the indexes of the items that apply to c and
// have a positive line total.
func (l *cartLines) applicable(c *Campaign, dst []int) []int {
	m := newMatcher(c)
	for i := range l.items {
		if l.positive(i) && m.applies(&l.items[i]) {
			dst = append(dst, i)
		}
	}
	return dst
}

// benefit computes the estimated benefit of an eligible campaign.
func (l *cartLines) benefit(c *Campaign, applicable []int, ctx *Context) Benefit {
	items := l.items
	b := Benefit{Amount: decimal.Zero, Items: make([]ItemBenefit, len(applicable))}
	for k, i := range applicable {
		// Field by field, leaving the amounts zero (decimal.Zero is the zero
		// Decimal): cheaper than storing a whole ItemBenefit.
		ib := &b.Items[k]
		ib.Index, ib.SKU, ib.Quantity = i, itemSKU(&items[i]), items[i].Quantity
	}
	switch c.Type {
	case Discount, Cashback:
		amounts, amount := l.money(c, applicable)
		b.Amount = amount
		b.FreeShipping = c.DiscountMode == FreeShipping
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
		total := l.bonusPoints(b.Items, ctx.PointsPerReal.Mul(c.Multiplier.Sub(one)))
		b.BonusPoints = &total
	case Gift:
		sku := c.GiftSKU
		b.GiftSKU = &sku
	}
	return b
}

// bonusPoints sets the points each item earns at rate and returns their sum,
// saturating the points so that the sum stays exact.
func (l *cartLines) bonusPoints(items []ItemBenefit, rate decimal.Decimal) int64 {
	if !rate.IsPositive() {
		return 0 // nothing is earned
	}
	m, exp, _, fast := coefficient(rate)
	fast = fast && l.units != nil
	var total int64
	for k := range items {
		i := items[k].Index
		p, ok := int64(0), false
		if fast {
			p, ok = earnedUnits(l.units[i], m, exp)
		}
		if !ok {
			p = earned(l.lineDecimals()[i], rate)
		}
		p = min(p, math.MaxInt64-total)
		items[k].BonusPoints = p
		total += p
	}
	return total
}

// money is the discount or cashback of each applicable item, in scratch
// space valid until the next call, and their sum; nil and zero when the mode
// gives no money.
func (l *cartLines) money(c *Campaign, applicable []int) ([]decimal.Decimal, decimal.Decimal) {
	if c.DiscountMode != Percentage && c.DiscountMode != FixedAmount {
		return nil, decimal.Zero
	}
	if l.units != nil {
		if l.shares == nil {
			l.shares = make([]uint64, len(l.items))
			l.amounts = make([]decimal.Decimal, len(l.items))
		}
		shares, amounts := l.shares[:len(applicable)], l.amounts[:len(applicable)]
		if sum, ok := moneyUnits(c, l.units, applicable, shares); ok {
			for k, u := range shares {
				amounts[k] = l.amount(u)
			}
			return amounts, l.amount(sum)
		}
	}
	amounts := money(c, l.lineDecimals(), applicable)
	sum := decimal.Zero
	for _, a := range amounts {
		sum = sum.Add(a)
	}
	return amounts, sum
}

// amount is u units as a decimal, with the places decimal places the decimal
// arithmetic gives every amount. Equal amounts share one decimal (decimals
// are immutable): they recur, as when campaigns of the same percentage apply
// to the same items, and each saves allocations.
func (l *cartLines) amount(u uint64) decimal.Decimal {
	d, ok := l.decimals[u]
	if !ok {
		if l.decimals == nil {
			l.decimals = make(map[uint64]decimal.Decimal, 4*len(l.items)) // spares most rehashing
		}
		d = decimal.New(int64(u), -places)
		l.decimals[u] = d
	}
	return d
}

// money is the discount or cashback of each applicable item for a campaign
// of mode Percentage or FixedAmount, in decimal arithmetic.
func money(c *Campaign, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	if c.DiscountMode == Percentage {
		pct := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, hundred))
		out := make([]decimal.Decimal, len(applicable))
		for k, i := range applicable {
			// Shift, not Div: dividing by 100 is exact, so rounding happens once.
			out[k] = lines[i].Mul(pct).Shift(-2).Round(places)
		}
		return out
	}
	total := decimal.Zero
	for _, i := range applicable {
		total = total.Add(lines[i])
	}
	amount := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, total)).Round(places)
	return split(amount, total, lines, applicable)
}

// split shares amount (0 <= amount <= total, total > 0) over the applicable
// items in proportion to their line totals: each share rounded to 8 places,
// the last item taking the remainder so the shares add up to amount exactly.
// When rounding would leave the last item below zero or above its line total,
// the difference is moved to the items before it, from the last backwards.
func split(amount, total decimal.Decimal, lines []decimal.Decimal, applicable []int) []decimal.Decimal {
	out := make([]decimal.Decimal, len(applicable))
	last := len(applicable) - 1
	allocated := decimal.Zero
	for k := range last {
		out[k] = amount.Mul(lines[applicable[k]]).DivRound(total, places)
		allocated = allocated.Add(out[k])
	}
	out[last] = amount.Sub(allocated)

	// Each share before the last lies in [0, its line total]; only the last
	// can fall outside by the accumulated rounding.
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

// earned is points.Earned(line, rate), capped at math.MaxInt64 instead of
// overflowing.
func earned(line, rate decimal.Decimal) int64 {
	if !rate.IsPositive() {
		return 0
	}
	// Integer digits of a product are at most the sum of the factors'; 18
	// digits always fit in an int64.
	if intDigits(line)+intDigits(rate) > 18 && line.Mul(rate).GreaterThanOrEqual(maxInt64) {
		return math.MaxInt64
	}
	return points.Earned(line, rate)
}

var (
	one      = decimal.NewFromInt(1)
	hundred  = decimal.NewFromInt(100)
	maxInt64 = decimal.NewFromInt(math.MaxInt64)
)

func intDigits(d decimal.Decimal) int {
	return d.NumDigits() + int(d.Exponent())
}

// Estimate computes c's benefit for cart without checking whether c is
// eligible: what redeem gives for a campaign a validation found eligible,
// from the cart it kept. ok is false when no item applies.
func Estimate(c Campaign, cart Cart, pointsPerReal decimal.Decimal) (b Benefit, ok bool) {
	lines := newCartLines(cart.Items)
	applicable := lines.applicable(&c, nil)
	if len(applicable) == 0 {
		return Benefit{}, false
	}
	return lines.benefit(&c, applicable, &Context{PointsPerReal: pointsPerReal}), true
}

// Stack keeps of the eligible campaigns of one order the best combination
// their stacking rules allow: every combinable campaign together, or one
// exclusive campaign alone, whichever gives the most R$ (discount and
// cashback); on a tie the combination holding the highest priority wins,
// then the combinable campaigns, then the exclusive listed first. The others are returned as ineligible,
// StackingExcluded by the combination's first campaign of highest priority.
// Both results keep the order of eligible; without exclusive campaigns
// every eligible campaign is kept.
func Stack(eligible []Eligible) ([]Eligible, []Ineligible) {
	const combined = -1 // best: the combinable campaigns together
	best, value, priority := combined, decimal.Zero, math.MinInt
	for i := range eligible {
		if c := &eligible[i].Campaign; c.Stacking != Exclusive {
			value = value.Add(eligible[i].Benefit.Amount)
			priority = max(priority, c.Priority)
		}
	}
	for i := range eligible {
		c, v := &eligible[i].Campaign, eligible[i].Benefit.Amount
		if c.Stacking == Exclusive && (v.GreaterThan(value) || v.Equal(value) && c.Priority > priority) {
			best, value, priority = i, v, c.Priority
		}
	}
	chosen := func(i int) bool {
		if best == combined {
			return eligible[i].Campaign.Stacking != Exclusive
		}
		return i == best
	}
	lead := ""
	for i := range eligible {
		if chosen(i) && eligible[i].Campaign.Priority == priority {
			lead = eligible[i].Campaign.ID
			break
		}
	}
	kept := make([]Eligible, 0, len(eligible))
	var excluded []Ineligible
	for i := range eligible {
		if chosen(i) {
			kept = append(kept, eligible[i])
			continue
		}
		excluded = append(excluded, Ineligible{Campaign: eligible[i].Campaign, Reason: StackingExcluded, ExcludedBy: lead})
	}
	return kept, excluded
}
