package checkout

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/storage"
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

// ValidateCart evaluates a cart against the live campaigns and keeps the
// result under a random token for ValidationTTL.
func (a *Service) ValidateCart(ctx context.Context, in ValidateInput) (*Validation, error) {
	if err := Policy.Allow(ctx, "ValidateCart"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	live, err := a.LiveCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	campaigns := live.All.Campaigns()
	tenant, err := a.TenantSettings(ctx)
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
	groups, err := a.StoreGroupsAt(ctx, campaigns, in.StoreID)
	if err != nil {
		return nil, err
	}
	zone, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	if err := a.Campaigns.EnrichFromCatalogue(ctx, a.DB.Ent, in.Cart.Items, campaigns); err != nil {
		return nil, err
	}
	now := a.Stamp()
	evaluation := eligibility.Context{
		Now: now, Channel: in.Channel, Store: in.StoreID, StoreGroups: groups, Zone: zone, Segments: segments,
		CustomerRedemptions: used, PointsPerReal: tenant.PointsPerReal, CustomerID: cust.ID,
	}
	var couponID *string
	if code != nil {
		evaluation.Coupon, couponID = code.CampaignID, &code.ID
	}
	eligible, ineligible, err := campaignrules.Evaluate(ctx, a.DB.Ent, live.All, in.Cart, evaluation)
	if err != nil {
		return nil, err
	}
	eligible, excluded := eligibility.Stack(eligible)
	ineligible = append(ineligible, excluded...)
	token, hash := newValidationToken()
	cart, err := json.Marshal(in.Cart)
	if err != nil {
		return nil, err
	}
	kept := keptBenefits{PointsPerReal: tenant.PointsPerReal, Campaigns: make([]keptBenefit, len(eligible))}
	for _, ex := range excluded {
		if kept.Excluded == nil {
			kept.Excluded = map[string]string{}
		}
		kept.Excluded[ex.Campaign.ID] = ex.ExcludedBy
	}
	for i, e := range eligible {
		kept.Campaigns[i] = keptBenefit{CampaignID: e.Campaign.ID, Amount: e.Benefit.Amount}
		if e.Benefit.BonusPoints != nil {
			kept.Campaigns[i].BonusPoints = *e.Benefit.BonusPoints
		}
	}
	benefits, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(eligible))
	for i, e := range eligible {
		ids[i] = e.Campaign.ID
	}
	expires := now.Add(ValidationTTL)
	err = a.storeToken(ctx, func(c *ent.Client) *ent.ValidationTokenCreate {
		return c.ValidationToken.Create().
			SetTokenHash(hash).SetCustomerID(cust.ID).SetChannel(in.Channel).SetStoreID(in.StoreID).
			SetCart(cart).SetBenefits(benefits).SetCampaignIds(ids).SetCreatedAt(now).SetExpiresAt(expires).
			SetNillableCouponID(couponID)
	})
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
		if out.Points, err = a.Loyalty.Offer(ctx, a.DB.Ent, tenant, cust, loyalty.ChannelEcommerce, &total); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxTokenGroup bounds the validation tokens one transaction writes.
const maxTokenGroup = 128

// tokenWrite is a validation token waiting for its group (kernel.GroupCommit):
// the tokens of concurrent validations are written in one transaction, one
// insert, instead of a transaction each on the database's one writer
// (SQLite) or a commit each (PostgreSQL).
type tokenWrite struct {
	ctx   context.Context
	build func(*ent.Client) *ent.ValidationTokenCreate
	done  chan error
}

// storeToken writes the token build makes, in its tenant's next group, and
// answers once that group committed.
func (a *Service) storeToken(ctx context.Context, build func(*ent.Client) *ent.ValidationTokenCreate) error {
	v, _ := viewer.FromContext(ctx)
	w := &tokenWrite{ctx: ctx, build: build, done: make(chan error, 1)}
	a.tokenGroups.Add(v.TenantID, w, maxTokenGroup, a.writeTokens)
	return <-w.done
}

// writeTokens writes a group of tokens and answers each; a group that
// fails is written again one token per transaction, so an error is only its
// own token's.
func (a *Service) writeTokens(group []*tokenWrite) {
	err := a.writeTokenGroup(group)
	for _, w := range group {
		if err != nil && len(group) > 1 {
			w.done <- a.writeTokenGroup([]*tokenWrite{w})
			continue
		}
		w.done <- err
	}
}

func (a *Service) writeTokenGroup(group []*tokenWrite) error {
	// The transaction is the group's: a client hanging up does not cancel
	// the others' tokens.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(group[0].ctx), kernel.GroupTimeout)
	defer cancel()
	return a.DB.InTx(ctx, func(tx storage.Tx) error {
		creates := make([]*ent.ValidationTokenCreate, len(group))
		for i, w := range group {
			creates[i] = w.build(tx.Ent)
		}
		return tx.Ent.ValidationToken.CreateBulk(creates...).Exec(ctx)
	})
}

// keptBenefits is what a validation token keeps of the eligible benefits:
// their totals and the earning rate they were computed with. Redeem
// recomputes the per-item detail from the kept cart (campaign rules do not
// change once created), so a validation of a large cart against many
// campaigns stores kilobytes, not megabytes.
type keptBenefits struct {
	PointsPerReal decimal.Decimal   `json:"points_per_real"`
	Campaigns     []keptBenefit     `json:"campaigns"`
	Excluded      map[string]string `json:"excluded,omitempty"` // campaign → the campaign the stacking rules applied instead
}

type keptBenefit struct {
	CampaignID  string          `json:"campaign_id"`
	Amount      decimal.Decimal `json:"amount"`
	BonusPoints int64           `json:"bonus_points,omitempty"`
}

// customerFor reads the customer pred selects, its id and fields only, with
// the ids of its segments, which only a campaign targeting a segment asks
// about: without one the segments are not read.
func (a *Service) CustomerFor(ctx context.Context, pred predicate.Customer, campaigns []eligibility.Campaign, fields ...string) (*ent.Customer, []string, error) {
	q := a.DB.Ent.Customer.Query().Where(pred).Select(append(fields, customer.FieldID)...)
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
	err := a.DB.Ent.Redemption.Query().
		Where(redemption.CustomerID(customerID), redemption.CampaignIDIn(limited...), redemption.RolledBackAtIsNil()).
		GroupBy(redemption.FieldCampaignID).Aggregate(ent.Count()).Scan(ctx, &rows)
	for _, r := range rows {
		used[r.CampaignID] = r.Count
	}
	return used, err
}

// newValidationToken returns a random token and the hash that is stored.
func newValidationToken() (token, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	token = "vtk_" + base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
