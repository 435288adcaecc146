package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/decimaltext"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
)

// campaignReach is when a campaign runs and whom and where it reaches, in
// its body and in its answers.
type campaignReach struct {
	StartsAt  string  `json:"starts_at"`
	EndsAt    string  `json:"ends_at"`
	SegmentID *string `json:"segment_id"`
	// PredictiveSegment is a predictive segment's key (v2).
	PredictiveSegment *string  `json:"predictive_segment"`
	Channels          []string `json:"channels"`
	StoreCodes        []string `json:"store_codes"`
	StoreGroups       []string `json:"store_groups"`
}

// campaignBody is POST /v1/campaigns.
type campaignBody struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	campaignReach
	// DiscountValue is the field of 1.0.0 (top level or in discount):
	// refused by name so that an old client learns of the rename.
	DiscountValue json.RawMessage `json:"discount_value"`
	Discount      *struct {
		Mode            string          `json:"mode"`
		Value           *jsonNumber     `json:"value"`
		DiscountValue   json.RawMessage `json:"discount_value"`
		CreditAfterDays *int            `json:"credit_after_days"`
		Multiplier      *jsonNumber     `json:"multiplier"`
		GiftSKU         *string         `json:"gift_sku"`
	} `json:"discount"`
	Eligibility *struct {
		MinSubtotal *jsonNumber `json:"min_subtotal"`
		SKUs        []string    `json:"skus"`
		Categories  []string    `json:"categories"`
		Brands      []string    `json:"brands"`
	} `json:"eligibility"`
	Limits *struct {
		PerCustomer *int `json:"per_customer"`
		Total       *int `json:"total"`
	} `json:"limits"`
	Budget *struct {
		Total     *jsonNumber `json:"total"`
		PerStore  *jsonNumber `json:"per_store"`
		Period    string      `json:"period"`
		PerPeriod *jsonNumber `json:"per_period"`
	} `json:"budget"`
	Stacking           string `json:"stacking"`
	Priority           int    `json:"priority"`
	RequiresCode       bool   `json:"requires_code"`
	HoldoutBasisPoints int    `json:"holdout_basis_points"`
}

func (b campaignBody) input(p *apperr.Problems) campaigns.CampaignInput {
	in := campaigns.CampaignInput{
		Name: b.Name, Description: b.Description, Type: b.Type, SegmentID: b.SegmentID, Channels: b.Channels,
		StoreCodes: b.StoreCodes, StoreGroups: b.StoreGroups, PredictiveSegment: b.PredictiveSegment,
		StartsAt: instant(p, "starts_at", b.StartsAt, dateTime), EndsAt: instant(p, "ends_at", b.EndsAt, dateTime),
		Stacking: b.Stacking, Priority: b.Priority, RequiresCode: b.RequiresCode, HoldoutBasisPoints: b.HoldoutBasisPoints,
	}
	const renamed = "was renamed discount.value in version 1.1.0 of /v1 (2026-03-01): send the percentage as discount.value"
	if sent(b.DiscountValue) {
		p.Add("discount_value", renamed)
	}
	if d := b.Discount; d != nil {
		if sent(d.DiscountValue) {
			p.Add("discount.discount_value", renamed)
		}
		in.Discount = &campaigns.DiscountInput{
			Mode: d.Mode, Value: number(p, "discount.value", d.Value), CreditAfterDays: d.CreditAfterDays,
			Multiplier: number(p, "discount.multiplier", d.Multiplier), GiftSKU: d.GiftSKU,
		}
	}
	if e := b.Eligibility; e != nil {
		in.Eligibility = &campaigns.EligibilityInput{
			MinSubtotal: number(p, "eligibility.min_subtotal", e.MinSubtotal), SKUs: e.SKUs, Categories: e.Categories,
			Brands: e.Brands,
		}
	}
	if l := b.Limits; l != nil {
		in.Limits = &campaigns.LimitsInput{PerCustomer: l.PerCustomer, Total: l.Total}
	}
	if bg := b.Budget; bg != nil {
		in.Budget = &campaigns.BudgetInput{Total: number(p, "budget.total", bg.Total), PerStore: number(p, "budget.per_store", bg.PerStore),
			Period: bg.Period, PerPeriod: number(p, "budget.per_period", bg.PerPeriod)}
	}
	return in
}

// sent says whether a field was given a value (not left out, not null).
func sent(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// campaignJSON is a campaign as the document shows it.
type campaignJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	campaignReach
	Discount     *discountJSON   `json:"discount"`
	Eligibility  eligibilityJSON `json:"eligibility"`
	Limits       limitsJSON      `json:"limits"`
	Budget       *budgetJSON     `json:"budget"`
	Stacking     *string         `json:"stacking"`
	Priority     int             `json:"priority"`
	RequiresCode bool            `json:"requires_code"`
	// HoldoutBasisPoints is the share of the target customers held out.
	HoldoutBasisPoints int    `json:"holdout_basis_points"`
	RedemptionsCount   int    `json:"redemptions_count"`
	RedemptionsLimit   *int   `json:"redemptions_limit"`
	CreatedAt          string `json:"created_at"`
	UpdatedAt          string `json:"updated_at"`
}

type discountJSON struct {
	Mode            *string      `json:"mode,omitempty"`
	Value           *json.Number `json:"value,omitempty"`
	CreditAfterDays *int         `json:"credit_after_days,omitempty"`
	Multiplier      *json.Number `json:"multiplier,omitempty"`
	GiftSKU         *string      `json:"gift_sku,omitempty"`
}

type eligibilityJSON struct {
	MinSubtotal *json.Number `json:"min_subtotal"`
	SKUs        []string     `json:"skus"`
	Categories  []string     `json:"categories"`
	Brands      []string     `json:"brands"`
}

// budgetJSON is a campaign's money budgets and what it gave so far (in all;
// this store's and this period's spending are what validate's explain
// reports as budget_exhausted).
type budgetJSON struct {
	Total     *json.Number `json:"total"`
	PerStore  *json.Number `json:"per_store"`
	Period    *string      `json:"period"`
	PerPeriod *json.Number `json:"per_period"`
	Spent     json.Number  `json:"spent"`
}

type limitsJSON struct {
	PerCustomer *int `json:"per_customer"`
	Total       *int `json:"total"`
}

func decimalJSON(d *decimal.Decimal) *json.Number {
	if d == nil {
		return nil
	}
	n := json.Number(decimaltext.Format(*d))
	return &n
}

// renderBudget is a campaign's budget, nil when it has none.
func renderBudget(c *ent.Campaign) *budgetJSON {
	b := campaignrules.BudgetOf(c)
	if !b.Any() {
		return nil
	}
	out := &budgetJSON{Total: decimalJSON(b.Total), PerStore: decimalJSON(b.PerStore), PerPeriod: decimalJSON(b.PerPeriod),
		Spent: *decimalJSON(&b.Spent)}
	if b.Period != "" {
		out.Period = &b.Period
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func renderCampaign(c *ent.Campaign) campaignJSON {
	out := campaignJSON{
		ID: c.ID, Name: c.Name, Description: c.Description, Type: string(c.Type), Status: string(c.Status),
		campaignReach: campaignReach{
			StartsAt: timestamp(c.StartsAt), EndsAt: timestamp(c.EndsAt), SegmentID: c.SegmentID,
			PredictiveSegment: (*string)(c.PredictiveSegment),
			Channels:          orEmpty(c.Channels), StoreCodes: orEmpty(c.StoreCodes), StoreGroups: orEmpty(c.StoreGroups),
		},
		Eligibility: eligibilityJSON{
			MinSubtotal: decimalJSON(c.MinSubtotal), SKUs: orEmpty(c.EligibleSkus), Categories: orEmpty(c.EligibleCategories),
			Brands: orEmpty(c.EligibleBrands),
		},
		Stacking: (*string)(c.Stacking), Priority: c.Priority, RequiresCode: c.RequiresCode, HoldoutBasisPoints: c.HoldoutBasisPoints,
		Limits:           limitsJSON{PerCustomer: c.LimitPerCustomer, Total: c.LimitTotal},
		Budget:           renderBudget(c),
		RedemptionsCount: c.RedemptionsCount, RedemptionsLimit: c.LimitTotal,
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
	d := &discountJSON{Value: decimalJSON(c.DiscountValue), CreditAfterDays: c.CreditAfterDays,
		Multiplier: decimalJSON(c.Multiplier), GiftSKU: c.GiftSku}
	if c.DiscountMode != nil {
		m := string(*c.DiscountMode)
		d.Mode = &m
	}
	if *d != (discountJSON{}) {
		out.Discount = d
	}
	return out
}

// readCampaign reads POST /v1/campaigns.
func readCampaign(b *binder) campaigns.CampaignInput {
	return jsonBody[campaignBody](b).input(&b.problems)
}

// campaignCreated is the answer of create, at the campaign's Location.
type campaignCreated struct {
	location
	campaignJSON
}

func newCampaignJSON(c *ent.Campaign) campaignCreated {
	return campaignCreated{location: location("/v1/campaigns/" + c.ID), campaignJSON: renderCampaign(c)}
}

// readCampaignPage reads GET /v1/campaigns.
func readCampaignPage(b *binder) paged[campaigns.CampaignFilter] {
	return paged[campaigns.CampaignFilter]{pageRequest: b.page("cmp_"), filter: campaigns.CampaignFilter{
		Status: b.query("status"), Type: b.query("type"), Channel: b.query("channel"),
	}}
}

func campaignPage(conn *ent.CampaignConnection) listJSON[campaignJSON] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.CampaignEdge) campaignJSON { return renderCampaign(e.Node) })
}

// validateBody is POST /v1/campaigns/validate.
type validateBody struct {
	CustomerID string `json:"customer_id"`
	StoreID    string `json:"store_id"`
	Channel    string `json:"channel"`
	CouponCode string `json:"coupon_code"`
	Cart       struct {
		Subtotal *jsonNumber `json:"subtotal"`
		Items    []struct {
			SKU       string      `json:"sku"`
			GTIN      string      `json:"gtin"`
			Category  string      `json:"category"`
			Brand     string      `json:"brand"`
			Quantity  *jsonNumber `json:"quantity"`
			UnitPrice *jsonNumber `json:"unit_price"`
		} `json:"items"`
	} `json:"cart"`
}

type itemBenefitJSON struct {
	SKU            string       `json:"sku"`
	Quantity       json.Number  `json:"quantity"`
	DiscountAmount json.Number  `json:"discount_amount"`
	BonusPoints    int64        `json:"bonus_points"`
	CashbackAmount *json.Number `json:"cashback_amount,omitempty"`
}

type benefitJSON struct {
	Amount          json.Number       `json:"amount"`
	DiscountAmount  *json.Number      `json:"discount_amount,omitempty"`
	CashbackAmount  *json.Number      `json:"cashback_amount,omitempty"`
	CreditAfterDays *int              `json:"credit_after_days,omitempty"`
	BonusPoints     *int64            `json:"bonus_points,omitempty"`
	Multiplier      *json.Number      `json:"multiplier,omitempty"`
	FreeShipping    bool              `json:"free_shipping,omitempty"`
	GiftSKU         *string           `json:"gift_sku,omitempty"`
	Items           []itemBenefitJSON `json:"items"`
}

func renderBenefit(b eligibility.Benefit, cashback bool) benefitJSON {
	out := benefitJSON{
		Amount: json.Number(decimaltext.Format(b.Amount)), DiscountAmount: decimalJSON(b.DiscountAmount),
		CashbackAmount: decimalJSON(b.CashbackAmount), CreditAfterDays: b.CreditAfterDays,
		BonusPoints: b.BonusPoints, Multiplier: decimalJSON(b.Multiplier), FreeShipping: b.FreeShipping,
		GiftSKU: b.GiftSKU, Items: make([]itemBenefitJSON, 0, len(b.Items)),
	}
	for _, it := range b.Items {
		item := itemBenefitJSON{
			SKU: it.SKU, Quantity: json.Number(decimaltext.Format(it.Quantity)),
			DiscountAmount: json.Number(decimaltext.Format(it.DiscountAmount)), BonusPoints: it.BonusPoints,
		}
		if cashback {
			item.CashbackAmount = decimalJSON(&it.CashbackAmount)
		}
		out.Items = append(out.Items, item)
	}
	return out
}

// validateRequest is POST /v1/campaigns/validate; ?explain=true adds the
// campaigns that do not apply and why.
type validateRequest struct {
	in      checkout.ValidateInput
	explain bool
}

func (q validateRequest) input() checkout.ValidateInput { return q.in }

func readValidate(b *binder) validateRequest {
	body := jsonBody[validateBody](b)
	p := &b.problems
	q := validateRequest{explain: b.query("explain") == "true", in: checkout.ValidateInput{
		CustomerID: body.CustomerID, StoreID: body.StoreID, Channel: body.Channel, CouponCode: body.CouponCode,
	}}
	if sub := number(p, "cart.subtotal", body.Cart.Subtotal); sub != nil {
		q.in.Cart.Subtotal = *sub
	}
	for i, it := range body.Cart.Items {
		item := eligibility.Item{SKU: it.SKU, GTIN: it.GTIN, Category: it.Category, Brand: it.Brand}
		if q := number(p, graphItemField(i, "quantity"), it.Quantity); q != nil {
			item.Quantity = *q
		}
		if up := number(p, graphItemField(i, "unit_price"), it.UnitPrice); up != nil {
			item.UnitPrice = *up
		} else if it.UnitPrice == nil {
			p.Add(graphItemField(i, "unit_price"), "is required")
		}
		q.in.Cart.Items = append(q.in.Cart.Items, item)
	}
	return q
}

func (q validateRequest) answer(v *checkout.Validation) validationJSON {
	out := validationJSON{
		CustomerID: v.CustomerID, Eligible: make([]eligibleJSON, 0, len(v.Eligible)),
		ExpiresAt: timestamp(v.ExpiresAt), Token: v.Token,
	}
	for _, e := range v.Eligible {
		skus := make([]string, 0, len(e.Benefit.Items))
		for _, it := range e.Benefit.Items {
			skus = append(skus, it.SKU)
		}
		out.Eligible = append(out.Eligible, eligibleJSON{
			ApplicableItems: skus, CampaignID: e.Campaign.ID, Description: e.Campaign.Description,
			EstimatedBenefit: renderBenefit(e.Benefit, e.Campaign.Type == eligibility.Type("cashback")),
			Name:             e.Campaign.Name, Type: e.Campaign.Type,
		})
	}
	if q.explain {
		ineligible := make([]ineligibleJSON, 0, len(v.Ineligible))
		for _, ie := range v.Ineligible {
			ineligible = append(ineligible, ineligibleJSON{
				CampaignID: ie.Campaign.ID, ExcludedBy: nonEmptyString(ie.ExcludedBy), MissingAmount: decimalJSON(ie.Missing),
				Name: ie.Campaign.Name, Reason: ie.Reason,
			})
		}
		out.Ineligible = &ineligible
	}
	if o := renderOffer(v.Points); o != nil {
		out.Points = &v1PointsOfferJSON{Available: o.Available, Balance: o.Balance, MaxAmount: o.MaxAmount, MinPoints: o.MinPoints,
			Value: o.Value}
	}
	return out
}

// validationJSON is the answer of validate. Its fields, and those of the
// types it holds, are in the order of their names, as a map's would be: the
// answer is typed (encoding/json sorts a map's keys on every request, 14% of
// validate's CPU when it was built of maps) and its bytes stay what they were.
type validationJSON struct {
	CustomerID string             `json:"customer_id"`
	Eligible   []eligibleJSON     `json:"eligible_campaigns"`
	ExpiresAt  string             `json:"expires_at"`
	Ineligible *[]ineligibleJSON  `json:"ineligible_campaigns,omitempty"` // with ?explain=true, even empty
	Points     *v1PointsOfferJSON `json:"points_payment,omitempty"`
	Token      string             `json:"validation_token"`
}

// v1PointsOfferJSON is what the customer may pay with points on the cart,
// beside the campaigns, when the programme takes points online.
type v1PointsOfferJSON struct {
	Available int64       `json:"available_points"`
	Balance   int64       `json:"balance"`
	MaxAmount json.Number `json:"max_amount"`
	MinPoints int64       `json:"min_points"`
	Value     json.Number `json:"point_value"`
}

type eligibleJSON struct {
	ApplicableItems  []string         `json:"applicable_items"`
	CampaignID       string           `json:"campaign_id"`
	Description      string           `json:"description"`
	EstimatedBenefit benefitJSON      `json:"estimated_benefit"`
	Name             string           `json:"name"`
	Type             eligibility.Type `json:"type"`
}

type ineligibleJSON struct {
	CampaignID    string             `json:"campaign_id"`
	ExcludedBy    *string            `json:"excluded_by,omitempty"`
	MissingAmount *json.Number       `json:"missing_amount,omitempty"`
	Name          string             `json:"name"`
	Reason        eligibility.Reason `json:"reason"`
}

// nonEmptyString is s, nil when empty.
func nonEmptyString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func graphItemField(i int, name string) string {
	return "cart.items[" + strconv.Itoa(i) + "]." + name
}

// redeemBody is POST /v1/campaigns/{id}/redeem.
type redeemBody struct {
	CustomerID      string      `json:"customer_id"`
	OrderID         string      `json:"order_id"`
	ValidationToken string      `json:"validation_token"`
	AmountPaid      *jsonNumber `json:"amount_paid"`
}

type redemptionJSON struct {
	RedemptionID   string      `json:"redemption_id"`
	CampaignID     string      `json:"campaign_id"`
	CustomerID     string      `json:"customer_id"`
	OrderID        string      `json:"order_id"`
	BenefitApplied appliedJSON `json:"benefit_applied"`
	RedeemedAt     string      `json:"redeemed_at"`
}

// appliedJSON is the benefit a redemption applied: the estimated benefit of
// validate with the campaign's type. Its fields, and its items', are in the
// order of their names: the order the first version, built of maps, wrote.
type appliedJSON struct {
	Amount          json.Number       `json:"amount"`
	BonusPoints     *int64            `json:"bonus_points,omitempty"`
	CashbackAmount  *json.Number      `json:"cashback_amount,omitempty"`
	CreditAfterDays *int              `json:"credit_after_days,omitempty"`
	DiscountAmount  *json.Number      `json:"discount_amount,omitempty"`
	FreeShipping    bool              `json:"free_shipping,omitempty"`
	GiftSKU         *string           `json:"gift_sku,omitempty"`
	Items           []appliedItemJSON `json:"items"`
	Multiplier      *json.Number      `json:"multiplier,omitempty"`
	Type            string            `json:"type"`
}

type appliedItemJSON struct {
	BonusPoints    int64        `json:"bonus_points"`
	CashbackAmount *json.Number `json:"cashback_amount,omitempty"`
	DiscountAmount json.Number  `json:"discount_amount"`
	Quantity       json.Number  `json:"quantity"`
	SKU            string       `json:"sku"`
}

// renderRedemption is the 201 body of redeem, first made or replayed.
func renderRedemption(red *checkout.Redeemed) ([]byte, error) {
	campaignType := string(red.CampaignType)
	e := renderBenefit(red.Benefit, campaignType == "cashback")
	applied := appliedJSON{
		Amount: e.Amount, BonusPoints: e.BonusPoints, CashbackAmount: e.CashbackAmount, CreditAfterDays: e.CreditAfterDays,
		DiscountAmount: e.DiscountAmount, FreeShipping: e.FreeShipping, GiftSKU: e.GiftSKU,
		Items: make([]appliedItemJSON, len(e.Items)), Multiplier: e.Multiplier, Type: campaignType,
	}
	for i, it := range e.Items {
		applied.Items[i] = appliedItemJSON{BonusPoints: it.BonusPoints, CashbackAmount: it.CashbackAmount,
			DiscountAmount: it.DiscountAmount, Quantity: it.Quantity, SKU: it.SKU}
	}
	return json.Marshal(redemptionJSON{
		RedemptionID: red.RedemptionID, CampaignID: red.CampaignID, CustomerID: red.CustomerID, OrderID: red.OrderID,
		BenefitApplied: applied, RedeemedAt: timestamp(red.RedeemedAt),
	})
}

// readRollback reads POST /v1/redemptions/{id}/rollback: the redemption is
// undone; a second call answers the same.
func readRollback(b *binder) onPath[string] {
	body := jsonBody[struct {
		Reason string `json:"reason"`
	}](b)
	return onPath[string]{id: pathID(b), in: body.Reason}
}

// rollbackJSON is a redemption rolled back; its fields are in the order of
// their names.
type rollbackJSON struct {
	CampaignID     string  `json:"campaign_id"`
	CustomerID     string  `json:"customer_id"`
	OrderID        string  `json:"order_id"`
	RedeemedAt     string  `json:"redeemed_at"`
	RedemptionID   string  `json:"redemption_id"`
	RollbackReason *string `json:"rollback_reason"`
	RolledBackAt   *string `json:"rolled_back_at"`
	Status         string  `json:"status"`
}

func renderRollback(red *ent.Redemption) rollbackJSON {
	return rollbackJSON{RedemptionID: red.ID, CampaignID: red.CampaignID, CustomerID: red.CustomerID, OrderID: red.OrderID,
		Status: "rolled_back", RolledBackAt: optTimestamp(red.RolledBackAt), RollbackReason: red.RollbackReason,
		RedeemedAt: timestamp(red.CreatedAt)}
}

// redeemRequest is POST /v1/campaigns/{id}/redeem, with the optional
// Idempotency-Key header.
type redeemRequest struct {
	in   checkout.RedeemInput
	idem *checkout.Idempotency
}

func readRedeem(b *binder) redeemRequest {
	var body redeemBody
	raw := b.body(&body)
	p := &b.problems
	in := checkout.RedeemInput{CampaignID: pathID(b), CustomerID: body.CustomerID, OrderID: body.OrderID, Token: body.ValidationToken}
	if paid := number(p, "amount_paid", body.AmountPaid); paid != nil {
		in.AmountPaid = *paid
	} else if body.AmountPaid == nil {
		p.Add("amount_paid", "is required")
	}
	q := redeemRequest{in: in}
	key := b.r.Header.Get("Idempotency-Key")
	if len(key) > 255 || (key != "" && strings.TrimSpace(key) == "") {
		p.Add("Idempotency-Key", "must be 1 to 255 characters")
	} else if key != "" {
		q.idem = &checkout.Idempotency{Key: key, RequestHash: checkout.RequestHash(b.r.Method, b.r.URL.Path, raw)}
	}
	return q
}

// redeemAnswer is the answer of redeem as renderRedemption encoded it, the
// first time or replayed.
type redeemAnswer struct {
	replayMark
	status int
	body   []byte
}

func (a redeemAnswer) raw() (int, []byte) { return a.status, a.body }

// redeem redeems, or replays the answer of the request first made with the
// same key.
func (s *server) redeem(ctx context.Context, q redeemRequest) (redeemAnswer, error) {
	red, answer, err := s.app.Checkout.RedeemCampaign(ctx, q.in, q.idem)
	if err == nil && answer == nil {
		answer, err = checkout.RedeemedOf(red)
	}
	if err != nil {
		return redeemAnswer{}, err
	}
	body, err := renderRedemption(answer)
	// A replay answers the stored redemption and makes none.
	return redeemAnswer{replayMark: replayMark{replayed: red == nil}, status: http.StatusCreated, body: body}, err
}
