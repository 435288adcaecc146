package checkout

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/segment"
)

// ValidationTTL is how long a validation token can be redeemed.
const ValidationTTL = 5 * time.Minute

// maxCartItems bounds a cart.
const maxCartItems = 500

// ValidateInput is a customer's cart at a checkout.
type ValidateInput struct {
	CustomerID string
	StoreID    string
	Channel    string
	CouponCode string // unlocks the campaign of the code, when it requires one
	Cart       eligibility.Cart
}

// Validation is the answer of validate: the campaigns the cart qualifies
// for, the token that redeems them, and why the others do not apply.
type Validation struct {
	CustomerID string
	Token      string
	ExpiresAt  time.Time
	Eligible   []eligibility.Eligible
	Ineligible []eligibility.Ineligible
	Cart       eligibility.Cart
	// Points is what the customer may pay with points on the cart after its
	// campaigns' discounts; nil when the programme takes no points online.
	Points *loyalty.PointsOffer
}

func (in ValidateInput) validate() error {
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	if len(in.Channel) > 50 {
		p.Add("channel", "must be at most 50 characters")
	}
	if len(in.StoreID) > 128 {
		p.Add("store_id", "must be at most 128 characters")
	}
	if len(in.CouponCode) > 64 {
		p.Add("coupon_code", "must be at most 64 characters")
	}
	if in.Cart.Subtotal.IsNegative() {
		p.Add("cart.subtotal", "must not be negative")
	}
	switch n := len(in.Cart.Items); {
	case n == 0:
		p.Add("cart.items", "must hold at least one item")
	case n > maxCartItems:
		p.Add("cart.items", "must hold at most %d items", maxCartItems)
	}
	for i, it := range in.Cart.Items {
		if strings.TrimSpace(it.SKU) == "" && strings.TrimSpace(it.GTIN) == "" {
			p.Add(itemField(i, "sku"), "is required")
		}
		if !it.Quantity.IsPositive() {
			p.Add(itemField(i, "quantity"), "must be positive")
		}
		if it.UnitPrice.IsNegative() {
			p.Add(itemField(i, "unit_price"), "must not be negative")
		}
	}
	return p.Err()
}

func itemField(i int, name string) string {
	return "cart.items[" + strconv.Itoa(i) + "]." + name
}

// ValidateCart evaluates a cart against the live campaigns and answers
// the result with a signed token that carries it, redeemable for
// ValidationTTL; it writes nothing.
func (a *Service) ValidateCart(ctx context.Context, in ValidateInput) (*Validation, error) {
	if err := Rules.ValidateCart.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	live, err := a.k.LiveCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	campaigns := live.All.Campaigns()
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	payWithPoints := slices.Contains(tenant.PointsSpendChannels, loyalty.ChannelEcommerce)
	var fields []string
	if payWithPoints { // the balance comes with the customer: no query more
		fields = loyalty.OfferFields()
	}
	cust, segments, err := a.CustomerFor(ctx, customer.ID(in.CustomerID), campaigns, fields...)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("customer")
	}
	if err != nil {
		return nil, err
	}
	var code *ent.Coupon
	if in.CouponCode != "" {
		if code, err = a.Campaigns.CouponOf(ctx, in.CouponCode, cust.ID); err != nil {
			return nil, err
		}
	}
	used, err := a.CustomerRedemptions(ctx, cust.ID, campaigns)
	if err != nil {
		return nil, err
	}
	groups, err := a.k.StoreGroupsAt(ctx, campaigns, in.StoreID)
	if err != nil {
		return nil, err
	}
	zone, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	if err := a.Campaigns.EnrichFromCatalogue(ctx, a.k.DB.Ent, in.Cart.Items, campaigns); err != nil {
		return nil, err
	}
	now := a.k.Stamp()
	evaluation := eligibility.Context{
		Now: now, Channel: in.Channel, Store: in.StoreID, StoreGroups: groups, Zone: zone, Segments: segments,
		CustomerRedemptions: used, PointsPerReal: tenant.PointsPerReal, CustomerID: cust.ID,
	}
	var couponID string
	if code != nil {
		evaluation.Coupon, couponID = code.CampaignID, code.ID
	}
	eligible, ineligible, err := campaignrules.Evaluate(ctx, a.k.DB.Ent, live.All, in.Cart, evaluation)
	if err != nil {
		return nil, err
	}
	eligible, excluded := eligibility.Stack(eligible)
	ineligible = append(ineligible, excluded...)
	expires := now.Add(ValidationTTL)
	tok := validationToken{
		ID: pid.New(pid.Validation), CustomerID: cust.ID, Channel: in.Channel, StoreID: in.StoreID,
		CouponID: couponID, ExpiresAt: expires, PointsPerReal: tenant.PointsPerReal, Cart: in.Cart,
		Campaigns: make([]string, len(eligible)),
	}
	for i, e := range eligible {
		tok.Campaigns[i] = e.Campaign.ID
	}
	for _, ex := range excluded {
		if tok.Excluded == nil {
			tok.Excluded = map[string]string{}
		}
		tok.Excluded[ex.Campaign.ID] = ex.ExcludedBy
	}
	token, err := tok.seal(ctx)
	if err != nil {
		return nil, err
	}
	out := &Validation{
		CustomerID: cust.ID, Token: token, ExpiresAt: expires,
		Eligible: eligible, Ineligible: ineligible, Cart: in.Cart,
	}
	if payWithPoints {
		total := in.Cart.Subtotal
		for _, e := range eligible {
			if e.Benefit.DiscountAmount != nil {
				total = total.Sub(*e.Benefit.DiscountAmount)
			}
		}
		total = decimal.Max(total, decimal.Zero)
		if out.Points, err = a.Loyalty.Offer(ctx, a.k.DB.Ent, tenant, cust, loyalty.ChannelEcommerce, &total); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// customerFor reads the customer pred selects, its id and fields only, with
// the ids of its segments, which only a campaign targeting a segment asks
// about: without one the segments are not read.
func (a *Service) CustomerFor(ctx context.Context, pred predicate.Customer, campaigns []eligibility.Campaign, fields ...string) (*ent.Customer, []string, error) {
	q := a.k.DB.Ent.Customer.Query().Where(pred).Select(append(fields, customer.FieldID)...)
	if slices.ContainsFunc(campaigns, func(c eligibility.Campaign) bool { return c.SegmentID != "" }) {
		q.WithSegments(func(q *ent.SegmentQuery) { q.Select(segment.FieldID) })
	}
	if slices.ContainsFunc(campaigns, func(c eligibility.Campaign) bool {
		return strings.HasPrefix(c.SegmentID, campaignrules.PredictivePrefix)
	}) {
		q.WithScore()
	}
	cust, err := q.Only(ctx)
	if err != nil {
		return nil, nil, err
	}
	return cust, CustomerSegments(cust), nil
}

// customerSegments are the ids of the segments a customer (loaded with its
// segments, and its score when campaigns target predictive segments)
// belongs to, its predictive segments as campaignrules.PredictivePrefix and
// their key.
func CustomerSegments(cust *ent.Customer) []string {
	segments := make([]string, 0, len(cust.Edges.Segments)+2)
	for _, s := range cust.Edges.Segments {
		segments = append(segments, s.ID)
	}
	if sc := cust.Edges.Score; sc != nil && sc.Risk != customerscore.RiskUnknown {
		segments = append(segments, campaignrules.PredictivePrefix+"churn_risk_"+string(sc.Risk))
		if sc.HighValue && sc.Risk != customerscore.RiskLow {
			segments = append(segments, campaignrules.PredictivePrefix+"at_risk_high_value")
		}
	}
	return segments
}

// customerRedemptions counts the customer's redemptions of the campaigns
// that have a per-customer limit.
func (a *Service) CustomerRedemptions(ctx context.Context, customerID string, campaigns []eligibility.Campaign) (map[string]int, error) {
	var limited []string
	for _, c := range campaigns {
		if c.LimitPerCustomer != nil {
			limited = append(limited, c.ID)
		}
	}
	used := map[string]int{}
	if len(limited) == 0 {
		return used, nil
	}
	var rows []struct {
		CampaignID string `json:"campaign_id"`
		Count      int    `json:"count"`
	}
	err := a.k.DB.Ent.Redemption.Query().
		Where(redemption.CustomerID(customerID), redemption.CampaignIDIn(limited...), redemption.RolledBackAtIsNil()).
		GroupBy(redemption.FieldCampaignID).Aggregate(ent.Count()).Scan(ctx, &rows)
	for _, r := range rows {
		used[r.CampaignID] = r.Count
	}
	return used, err
}
