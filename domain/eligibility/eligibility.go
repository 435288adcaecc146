// Package eligibility decides which campaigns a customer's cart qualifies for
// and estimates what each one gives, item by item. It is the rule behind
// the validation of a cart online and the point-of-sale discount authorization.
// It touches no database: callers load the campaigns and the customer's
// redemption counts and pass them in.
//
// Money is decimal and rounded half-up to 8 decimal places; a line total is
// UnitPrice × Quantity.
package eligibility

import (
	"cmp"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/experiment"
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
	Holdout               int              // basis points of the target customers held out (experiment.HeldOut)
}

// Stacking says whether a campaign's benefit adds to other campaigns' on one
// order.
type Stacking string

// Stacking rules.
const (
	Combinable Stacking = "combinable" // with every other combinable campaign
	Exclusive  Stacking = "exclusive"  // alone
)

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
	CustomerID          string          // who is buying: the side of campaigns' holdouts
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
	Holdout           Reason = "holdout"              // the customer is in the campaign's control group
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

// Evaluate checks every campaign against the cart and context. Both results
// keep the order of campaigns and are never nil. The rules, in order, the
// first failing giving the reason: active now, channel, segment, holdout, limits, at
// least one applicable item with a positive line total, minimum subtotal.
//
// Items with a zero (or negative) line total are never applicable: they have
// nothing to discount.
func Evaluate(campaigns []Campaign, cart Cart, ctx Context) ([]Eligible, []Ineligible) {
	return Compile(campaigns).Evaluate(cart, ctx)
}

// Evaluate is Evaluate of the indexed campaigns: each item is matched only
// against the campaigns it can apply to.
func (x *Index) Evaluate(cart Cart, ctx Context) ([]Eligible, []Ineligible) {
	campaigns := x.campaigns
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

	applicableTo := x.applicable(lines)
	periods := map[string]string{} // PeriodBudgetKey of each period named
	periodKey := func(period string) string {
		key, ok := periods[period]
		if !ok {
			key = PeriodBudgetKey(period, ctx.Now, cmp.Or(ctx.Zone, time.UTC))
			periods[period] = key
		}
		return key
	}
	for i := range campaigns {
		c := &campaigns[i]
		reason := check(c, &ctx, periodKey)
		applicable := applicableTo[i]
		if reason == "" && len(applicable) == 0 {
			reason = NoApplicableItems
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
		eligible = append(eligible, Eligible{
			Campaign:        *c,
			ApplicableItems: applicable,
			Benefit:         lines.benefit(c, applicable, &ctx),
		})
	}
	return eligible, ineligible
}

// check applies the rules that need no cart, returning the first failing;
// periodKey names the budgets' periods at ctx.Now.
func check(c *Campaign, ctx *Context, periodKey func(period string) string) Reason {
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
	if experiment.HeldOut(ctx.CustomerID, c.ID, c.Holdout) {
		return Holdout
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
	if c.Budget.exhausted(ctx.Store, periodKey) {
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
