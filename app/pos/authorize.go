package pos

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
)

// POSDiscount is a discount on a cart item. A discount of the service has a
// PromotionID; an external one (PartnerPromotionID "0") has none and is kept
// as it came. It is also the stored form of a sale item's discounts: the
// JSON names are fixed by tags (the Go names they had when rows were first
// stored), so renaming a field cannot make stored sales unreadable.
type POSDiscount struct {
	PromotionID           *string          `json:"PromotionID"`
	PartnerPromotionID    *string          `json:"PartnerPromotionID"`
	UnitDiscount          *decimal.Decimal `json:"UnitDiscount"`
	UnitPriceWithDiscount *decimal.Decimal `json:"UnitPriceWithDiscount"`
	Quantity              *decimal.Decimal `json:"Quantity"`
}

// flaggedExternal says the point of sale marked the discount as its own
// (partnerPromotionId "0").
func (d POSDiscount) flaggedExternal() bool {
	return d.PartnerPromotionID != nil && *d.PartnerPromotionID == "0"
}

// external says the discount is not the service's: flagged external, or
// without a promotion id. Only the service's discounts are redemptions.
func (d POSDiscount) external() bool { return d.PromotionID == nil || d.flaggedExternal() }

// POSItem is a cart item of authorize.
type POSItem struct {
	ID, GTIN, UnitMeasure string
	UnitPrice, Quantity   *decimal.Decimal
	IgnoreDiscount        bool
	GiftCard              bool // the line sells a gift card: no campaign's discount applies to it
	Discounts             []POSDiscount
	Increases             json.RawMessage
}

// AuthorizeInput is a till's cart asking which discounts its lines get.
type AuthorizeInput struct {
	SessionID      string
	Protocol       string
	Customer       *POSCustomer
	StoreID        string
	Date           *time.Time
	IgnoreDiscount bool
	CouponCode     string // unlocks the campaign of the code, when it requires one
	Items          []POSItem
}

// Authorization is the cart with the service's discounts added.
type Authorization struct {
	Document string
	Items    []POSItem
	Applied  int                  // discounts the service added
	Points   *loyalty.PointsOffer // what the customer may pay with points on the cart; nil when the programme takes none at the till
	Wallets  *WalletsOffer        // what its cashback and gift cards may pay on the cart; nil when nothing
}

// AuthorizeDiscounts adds to each item the best discount the customer's pdv
// campaigns give, on the price after external discounts: the one best
// campaign's, or those of the campaigns marked combinable together when
// they give more. It stores nothing.
func (a *Service) AuthorizeDiscounts(ctx context.Context, in AuthorizeInput) (*Authorization, error) {
	if err := Rules.AuthorizeDiscounts.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" {
		p.Add("sessionId", "is required")
	}
	checkProtocol(&p, in.Protocol, protocolPartner, false)
	var doc string
	if in.Customer != nil {
		doc, _ = in.Customer.parse(&p, false, false)
	}
	if strings.TrimSpace(in.StoreID) == "" {
		p.Add("sale.store.id", "is required")
	}
	if in.Date == nil {
		p.Add("sale.date", "is required (ISO 8601 with offset)")
	}
	if len(in.CouponCode) > 64 {
		p.Add("sale.couponCode", "must be at most 64 characters")
	}
	switch n := len(in.Items); {
	case n == 0:
		p.Add("sale.items", "must hold at least one item")
	case n > maxPOSItems:
		p.Add("sale.items", "must hold at most %d items", maxPOSItems)
	}
	for i, it := range in.Items {
		f := func(name string) string { return "sale.items[" + strconv.Itoa(i) + "]." + name }
		if strings.TrimSpace(it.GTIN) == "" {
			p.Add(f("gtin"), "is required")
		}
		if strings.TrimSpace(it.UnitMeasure) == "" {
			p.Add(f("unitMeasure"), "is required")
		}
		if it.UnitPrice == nil || it.UnitPrice.IsNegative() {
			p.Add(f("unitPrice"), "is required and must not be negative")
		}
		if it.Quantity == nil || !it.Quantity.IsPositive() {
			p.Add(f("quantity"), "is required and must be positive")
		}
	}
	if err := p.Malformed(); err != nil {
		return nil, err
	}
	out := &Authorization{Document: doc, Items: in.Items}
	for i := range out.Items { // external discounts come back with promotionId null
		for j := range out.Items[i].Discounts {
			if d := &out.Items[i].Discounts[j]; d.flaggedExternal() {
				d.PromotionID = nil
			}
		}
	}
	if doc == "" || in.IgnoreDiscount {
		return out, nil
	}
	live, err := a.k.LiveCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	discounts := live.Discounts.Campaigns() // what authorize evaluates: the segments read are theirs
	cust, segments, err := a.Checkout.CustomerFor(ctx, customers.CustomerWithDocument(doc), discounts,
		spendingFields(tenant, customer.FieldName)...) // POSStatus of a pre-registration
	if ent.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if customers.POSStatus(cust) == customers.POSStatusPreRegister {
		return out, nil
	}
	var couponCampaign string
	if in.CouponCode != "" {
		code, err := a.Campaigns.CouponOf(ctx, in.CouponCode, cust.ID)
		if err != nil {
			return nil, err
		}
		couponCampaign = code.CampaignID
	}
	used, err := a.Checkout.CustomerRedemptions(ctx, cust.ID, discounts)
	if err != nil {
		return nil, err
	}
	// The engine sees each discountable item at its price after external
	// discounts; index maps its items back to the cart.
	var cart eligibility.Cart
	var index []int
	for i, it := range out.Items {
		if it.IgnoreDiscount || it.GiftCard || hasServiceDiscount(it) {
			continue
		}
		price := *it.UnitPrice
		for _, d := range it.Discounts {
			if d.UnitDiscount != nil {
				price = price.Sub(*d.UnitDiscount)
			}
		}
		if !price.IsPositive() {
			continue
		}
		cart.Items = append(cart.Items, eligibility.Item{GTIN: it.GTIN, SKU: it.GTIN, Quantity: *it.Quantity, UnitPrice: price})
		index = append(index, i)
	}
	if len(cart.Items) == 0 {
		return a.withPaymentOffers(ctx, tenant, cust, out)
	}
	if err := a.Campaigns.EnrichFromCatalogue(ctx, a.k.DB.Ent, cart.Items, discounts); err != nil {
		return nil, err
	}
	groups, err := a.k.StoreGroupsAt(ctx, discounts, in.StoreID)
	if err != nil {
		return nil, err
	}
	zone, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	// Only the discounts chosen need their counters read: the best of an
	// item does not change when a campaign not chosen is taken away.
	var chosen [][]itemDiscount
	_, _, err = campaignrules.EvaluateChosen(ctx, a.k.DB.Ent, live.Discounts, cart, eligibility.Context{
		Now: a.k.Now().UTC(), Channel: channelPOS, Store: in.StoreID, StoreGroups: groups, Zone: zone, Segments: segments,
		CustomerRedemptions: used, PointsPerReal: tenant.PointsPerReal, Coupon: couponCampaign, CustomerID: cust.ID,
	}, func(eligible []eligibility.Eligible) []string {
		chosen = itemDiscounts(eligible, len(cart.Items))
		var ids []string
		for _, picks := range chosen {
			for _, pick := range picks {
				if !slices.Contains(ids, pick.campaign) {
					ids = append(ids, pick.campaign)
				}
			}
		}
		return ids
	})
	if err != nil {
		return nil, err
	}
	for k, picks := range chosen {
		it := &out.Items[index[k]]
		qty := cart.Items[k].Quantity
		price := cart.Items[k].UnitPrice
		for _, pick := range picks {
			unit := pick.amount.DivRound(qty, 8)
			after := price.Sub(unit)
			if after.IsNegative() {
				unit, after = price, decimal.Zero
			}
			id := pick.campaign
			it.Discounts = append(it.Discounts, POSDiscount{
				PromotionID: &id, UnitDiscount: &unit, UnitPriceWithDiscount: &after, Quantity: &qty,
			})
			out.Applied++
			if price = after; price.IsZero() {
				break
			}
		}
	}
	return a.withPaymentOffers(ctx, tenant, cust, out)
}

// withPaymentOffers adds to an authorization what the customer may pay with
// points, cashback and gift cards on the cart, at its value after every
// discount.
func (a *Service) withPaymentOffers(ctx context.Context, t *ent.Tenant, cust *ent.Customer, out *Authorization) (*Authorization, error) {
	total := decimal.Zero
	for _, it := range out.Items {
		total = total.Add(it.UnitPrice.Mul(*it.Quantity))
		for _, d := range it.Discounts {
			if d.UnitDiscount != nil && d.Quantity != nil {
				total = total.Sub(d.UnitDiscount.Mul(*d.Quantity))
			}
		}
	}
	var err error
	if out.Points, err = a.pointsOffer(ctx, t, cust, &total); err != nil {
		return nil, err
	}
	if cust != nil {
		out.Wallets, err = a.walletsOffer(ctx, t, cust.ID, &total)
	}
	return out, err
}

// itemDiscount is a campaign's discount on one cart item.
type itemDiscount struct {
	campaign string
	amount   decimal.Decimal
}

// itemDiscounts chooses the discounts of each of n cart items: the best one
// campaign's, or, when they give more together, every campaign marked
// combinable (the default of campaigns that say nothing is one discount per
// item, as before stacking rules).
func itemDiscounts(eligible []eligibility.Eligible, n int) [][]itemDiscount {
	best := make([]*itemDiscount, n)
	combined := make([][]itemDiscount, n)
	sums := make([]decimal.Decimal, n)
	for _, e := range eligible {
		for _, ib := range e.Benefit.Items {
			if !ib.DiscountAmount.IsPositive() {
				continue
			}
			if b := best[ib.Index]; b == nil || ib.DiscountAmount.GreaterThan(b.amount) {
				best[ib.Index] = &itemDiscount{campaign: e.Campaign.ID, amount: ib.DiscountAmount}
			}
			if e.Campaign.Stacking == eligibility.Combinable {
				combined[ib.Index] = append(combined[ib.Index], itemDiscount{campaign: e.Campaign.ID, amount: ib.DiscountAmount})
				sums[ib.Index] = sums[ib.Index].Add(ib.DiscountAmount)
			}
		}
	}
	picks := make([][]itemDiscount, n)
	for k, b := range best {
		switch {
		case b == nil:
		case len(combined[k]) > 1 && sums[k].GreaterThan(b.amount):
			picks[k] = combined[k]
		default:
			picks[k] = []itemDiscount{*b}
		}
	}
	return picks
}

func hasServiceDiscount(it POSItem) bool {
	for _, d := range it.Discounts {
		if !d.external() {
			return true
		}
	}
	return false
}
