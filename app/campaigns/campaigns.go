package campaigns

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/storage"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqljson"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/segment"
)

// maxStoreTargets bounds the store codes, and the store groups, a campaign
// lists: a chain's regional offer names a region, not a thousand stores.
const maxStoreTargets = 1000

// CampaignInput creates a campaign.
type CampaignInput struct {
	Name, Description string
	Type              string
	StartsAt, EndsAt  *time.Time
	SegmentID         *string
	PredictiveSegment *string  // a predictive segment's key (v2), instead of SegmentID
	Channels          []string // nil: every channel
	StoreCodes        []string // with StoreGroups nil too: every store
	StoreGroups       []string
	Discount          *DiscountInput
	Eligibility       *EligibilityInput
	Limits            *LimitsInput
	Budget            *BudgetInput
	Stacking          string // combinable or exclusive; "" for neither (see ent/schema)
	Priority          int
	RequiresCode      bool
	// HoldoutBasisPoints is the share of the target customers held out as
	// a control group (experiment.HeldOut), 0 to experiment.MaxHoldout.
	HoldoutBasisPoints int
}

// DiscountInput is the benefit of a campaign: mode and value for discount
// and cashback campaigns, credit_after_days for cashback, multiplier for
// bonus points, gift_sku for gifts.
type DiscountInput struct {
	Mode            string
	Value           *decimal.Decimal
	CreditAfterDays *int
	Multiplier      *decimal.Decimal
	GiftSKU         *string
}

// EligibilityInput narrows the carts a campaign applies to.
type EligibilityInput struct {
	MinSubtotal      *decimal.Decimal
	SKUs, Categories []string
	Brands           []string
}

// LimitsInput bounds the redemptions of a campaign.
type LimitsInput struct {
	PerCustomer, Total *int
}

func (in CampaignInput) validate(now time.Time) error {
	var p apperr.Problems
	if strings.TrimSpace(in.Name) == "" {
		p.Add("name", "is required")
	} else if len(in.Name) > 200 {
		p.Add("name", "must be at most 200 characters")
	}
	if len(in.Description) > 2000 {
		p.Add("description", "must be at most 2000 characters")
	}
	typ := campaign.Type(in.Type)
	switch {
	case in.Type == "":
		p.Add("type", "is required")
	case campaign.TypeValidator(typ) != nil:
		p.Add("type", "must be discount, cashback, bonus_points or gift")
	}
	switch {
	case in.StartsAt == nil:
		p.Add("starts_at", "is required (ISO 8601 with offset)")
	case in.EndsAt == nil:
		p.Add("ends_at", "is required (ISO 8601 with offset)")
	case !in.EndsAt.After(*in.StartsAt):
		p.Add("ends_at", "must be after starts_at")
	case !in.EndsAt.After(now):
		p.Add("ends_at", "must be in the future")
	}
	if in.StartsAt == nil && in.EndsAt == nil {
		p.Add("ends_at", "is required (ISO 8601 with offset)")
	}
	d := in.Discount
	if d == nil {
		d = &DiscountInput{}
	}
	switch typ {
	case campaign.TypeDiscount, campaign.TypeCashback:
		switch d.Mode {
		case "percentage":
			if d.Value == nil || d.Value.IsNegative() || d.Value.GreaterThan(decimal.NewFromInt(100)) || d.Value.IsZero() {
				p.Add("discount.value", "must be a percentage above 0 and at most 100")
			}
		case "fixed_amount":
			if d.Value == nil || !d.Value.IsPositive() {
				p.Add("discount.value", "must be an amount in R$ above 0")
			}
		case "free_shipping":
			if d.Value != nil {
				p.Add("discount.value", "must be absent for free_shipping")
			}
		case "":
			p.Add("discount.mode", "is required for %s campaigns", typ)
		default:
			p.Add("discount.mode", "must be percentage, fixed_amount or free_shipping")
		}
		if d.Value != nil && d.Value.Exponent() < -8 {
			p.Add("discount.value", "must have at most 8 decimal places")
		}
		if d.CreditAfterDays != nil && (typ != campaign.TypeCashback || *d.CreditAfterDays < 0 || *d.CreditAfterDays > 3650) {
			p.Add("discount.credit_after_days", "is for cashback campaigns: 0 (at once) to 3650 days")
		}
	case campaign.TypeBonusPoints:
		if d.Multiplier == nil || !d.Multiplier.GreaterThan(decimal.NewFromInt(1)) || d.Multiplier.GreaterThan(decimal.NewFromInt(100)) {
			p.Add("discount.multiplier", "must be above 1 and at most 100 for bonus_points campaigns")
		}
	case campaign.TypeGift:
		if d.GiftSKU == nil || strings.TrimSpace(*d.GiftSKU) == "" {
			p.Add("discount.gift_sku", "is required for gift campaigns")
		}
	}
	// A benefit field of another type would be stored and shown, yet give
	// nothing: refuse it rather than mislead.
	if campaign.TypeValidator(typ) == nil {
		money := typ == campaign.TypeDiscount || typ == campaign.TypeCashback
		if !money && d.Mode != "" {
			p.Add("discount.mode", "is for discount and cashback campaigns")
		}
		if !money && d.Value != nil {
			p.Add("discount.value", "is for discount and cashback campaigns")
		}
		if !money && d.CreditAfterDays != nil {
			p.Add("discount.credit_after_days", "is for cashback campaigns: 0 (at once) to 3650 days")
		}
		if typ != campaign.TypeBonusPoints && d.Multiplier != nil {
			p.Add("discount.multiplier", "is for bonus_points campaigns")
		}
		if typ != campaign.TypeGift && d.GiftSKU != nil {
			p.Add("discount.gift_sku", "is for gift campaigns")
		}
	}
	for i, ch := range in.Channels {
		if strings.TrimSpace(ch) == "" || len(ch) > 50 {
			p.Add("channels", "item %d must be a channel name such as pdv, ecommerce or app", i)
		}
	}
	in.Budget.validate(&p, in.Type)
	if in.Stacking != "" && campaign.StackingValidator(campaign.Stacking(in.Stacking)) != nil {
		p.Add("stacking", "must be combinable or exclusive")
	}
	if in.Priority < -1000 || in.Priority > 1000 {
		p.Add("priority", "must be between -1000 and 1000")
	}
	if in.HoldoutBasisPoints < 0 || in.HoldoutBasisPoints > experiment.MaxHoldout {
		p.Add("holdout_basis_points", "must be between 0 and %d (basis points: 1000 holds out 10%% of the target customers)", experiment.MaxHoldout)
	}
	if e := in.Eligibility; e != nil {
		kernel.CheckLabels(&p, "eligibility.brands", e.Brands, maxStoreTargets)
	}
	kernel.CheckLabels(&p, "store_codes", in.StoreCodes, maxStoreTargets)
	kernel.CheckLabels(&p, "store_groups", in.StoreGroups, maxStoreTargets)
	if e := in.Eligibility; e != nil && e.MinSubtotal != nil && (e.MinSubtotal.IsNegative() || e.MinSubtotal.Exponent() < -2) {
		p.Add("eligibility.min_subtotal", "must be a non-negative amount in R$")
	}
	if l := in.Limits; l != nil {
		if l.PerCustomer != nil && *l.PerCustomer < 1 {
			p.Add("limits.per_customer", "must be at least 1")
		}
		if l.Total != nil && *l.Total < 1 {
			p.Add("limits.total", "must be at least 1")
		}
	}
	return p.Err()
}

// CreateCampaign creates a campaign; its status follows from its dates.
func (a *Service) CreateCampaign(ctx context.Context, in CampaignInput) (*ent.Campaign, error) {
	if err := Rules.CreateCampaign.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	now := a.k.Now()
	if err := in.validate(now); err != nil {
		return nil, err
	}
	if in.PredictiveSegment != nil {
		switch {
		case !slices.Contains(scoring.PredictiveSegmentKeys, *in.PredictiveSegment):
			return nil, apperr.Invalid("predictive_segment", "must be one of %s", strings.Join(scoring.PredictiveSegmentKeys, ", "))
		case in.SegmentID != nil:
			return nil, apperr.Invalid("predictive_segment", "a campaign targets a segment or a predictive segment, not both")
		}
	}
	if in.SegmentID != nil {
		exists, err := a.k.DB.Ent.Segment.Query().Where(segment.ID(*in.SegmentID)).Exist(ctx)
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, apperr.Invalid("segment_id", "no such segment")
		}
	}
	var created *ent.Campaign
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		if created, err = in.create(tx.Ent).Save(ctx); err != nil {
			return err
		}
		return a.k.Changed(ctx, tx, created.TenantID, change.PartCampaigns)
	})
	if err != nil {
		return nil, err
	}
	return a.WithStatus(created), nil
}

// create is the creation of the campaign of in through cl.
func (in *CampaignInput) create(cl *ent.Client) *ent.CampaignCreate {
	// Stored scheduled even when its time has come: the lifecycle job
	// activates and announces it (campaign.activated) within a minute, and
	// reads show the status of its dates meanwhile.
	status := campaign.StatusScheduled
	c := cl.Campaign.Create().
		SetName(strings.TrimSpace(in.Name)).SetDescription(in.Description).SetType(campaign.Type(in.Type)).
		SetStatus(status).SetStartsAt(in.StartsAt.UTC()).SetEndsAt(in.EndsAt.UTC()).
		SetNillableSegmentID(in.SegmentID)
	if in.PredictiveSegment != nil {
		c.SetPredictiveSegment(campaign.PredictiveSegment(*in.PredictiveSegment))
	}
	if in.Channels != nil {
		c.SetChannels(in.Channels)
	}
	if len(in.StoreCodes) > 0 {
		c.SetStoreCodes(in.StoreCodes)
	}
	if len(in.StoreGroups) > 0 {
		c.SetStoreGroups(in.StoreGroups)
	}
	in.Budget.set(c)
	if in.Stacking != "" {
		c.SetStacking(campaign.Stacking(in.Stacking))
	}
	c.SetPriority(in.Priority).SetRequiresCode(in.RequiresCode).SetHoldoutBasisPoints(in.HoldoutBasisPoints)
	if d := in.Discount; d != nil {
		if d.Mode != "" {
			c.SetDiscountMode(campaign.DiscountMode(d.Mode))
		}
		c.SetNillableDiscountValue(d.Value).SetNillableCreditAfterDays(d.CreditAfterDays).
			SetNillableMultiplier(d.Multiplier).SetNillableGiftSku(d.GiftSKU)
		if campaign.Type(in.Type) == campaign.TypeCashback && d.CreditAfterDays == nil {
			c.SetCreditAfterDays(0)
		}
	}
	if e := in.Eligibility; e != nil {
		c.SetNillableMinSubtotal(e.MinSubtotal).SetEligibleSkus(e.SKUs).SetEligibleCategories(e.Categories)
		if len(e.Brands) > 0 {
			c.SetEligibleBrands(e.Brands)
		}
	}
	if l := in.Limits; l != nil {
		c.SetNillableLimitPerCustomer(l.PerCustomer).SetNillableLimitTotal(l.Total)
	}
	return c
}

// WithStatus shows a campaign's status as of now, whatever the lifecycle
// job has written yet.
func (a *Service) WithStatus(c *ent.Campaign) *ent.Campaign {
	c.Status = campaignrules.StatusAt(c, a.k.Now())
	return c
}

// Campaign reads one campaign.
func (a *Service) Campaign(ctx context.Context, id string) (*ent.Campaign, error) {
	if err := Rules.Campaign.Allow(ctx); err != nil {
		return nil, err
	}
	return a.campaign(ctx, id)
}

// campaign is Campaign without its policy check, for the operations
// of this context that call it.
func (a *Service) campaign(ctx context.Context, id string) (*ent.Campaign, error) {
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	c, err := a.k.DB.Ent.Campaign.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("campaign")
	}
	if err != nil {
		return nil, err
	}
	return a.WithStatus(c), nil
}

// CampaignsByID reads the campaigns of ids, in no order, each with its
// status as of now; an id no campaign of the tenant has is left out.
func (a *Service) CampaignsByID(ctx context.Context, ids []string) ([]*ent.Campaign, error) {
	if err := Rules.CampaignsByID.Allow(ctx); err != nil {
		return nil, err
	}
	rows, err := a.k.DB.Ent.Campaign.Query().Where(campaign.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range rows {
		a.WithStatus(c)
	}
	return rows, nil
}

// CampaignFilter narrows a campaign list.
type CampaignFilter struct {
	Status, Type, Channel string
}

// ListCampaigns lists campaigns, newest first, filtered by their status as
// of now, type and channel (a campaign for every channel matches any).
func (a *Service) ListCampaigns(ctx context.Context, f CampaignFilter, after *ent.Cursor, first int) (*ent.CampaignConnection, error) {
	if err := Rules.ListCampaigns.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", f); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if !kernel.ValidPageSize(first) {
		p.Add("limit", "must be between 1 and %d", kernel.MaxPageSize)
	}
	if f.Status != "" && campaign.StatusValidator(campaign.Status(f.Status)) != nil {
		p.Add("status", "must be active, scheduled, ended or paused")
	}
	if f.Type != "" && campaign.TypeValidator(campaign.Type(f.Type)) != nil {
		p.Add("type", "must be discount, cashback, bonus_points or gift")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	q := a.k.DB.Ent.Campaign.Query()
	if f.Status != "" {
		q.Where(campaignrules.WhereStatusAt(campaign.Status(f.Status), a.k.Now().UTC()))
	}
	if f.Type != "" {
		q.Where(campaign.TypeEQ(campaign.Type(f.Type)))
	}
	if f.Channel != "" {
		q.Where(forChannel(f.Channel))
	}
	conn, err := q.Paginate(ctx, after, &first, nil, nil, ent.WithCampaignOrder(&ent.CampaignOrder{
		Direction: entgql.OrderDirectionDesc, Field: ent.DefaultCampaignOrder.Field,
	}))
	if err != nil {
		return nil, err
	}
	for _, e := range conn.Edges {
		a.WithStatus(e.Node)
	}
	return conn, nil
}

// forChannel matches campaigns of the channel or of every channel.
func forChannel(ch string) predicate.Campaign {
	return func(s *sql.Selector) {
		s.Where(sql.Or(
			sql.IsNull(s.C(campaign.FieldChannels)),
			sqljson.LenEQ(s.C(campaign.FieldChannels), 0),
			sqljson.ValueContains(s.C(campaign.FieldChannels), ch),
		))
	}
}

// EndCampaign deactivates a campaign (DELETE); ending an ended campaign
// changes nothing.
func (a *Service) EndCampaign(ctx context.Context, id string) (*ent.Campaign, error) {
	if err := Rules.EndCampaign.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	return a.setCampaignStatus(ctx, id, campaign.StatusEnded, nil)
}

// PauseCampaign stops a campaign's benefits until it is resumed.
func (a *Service) PauseCampaign(ctx context.Context, id string) (*ent.Campaign, error) {
	if err := Rules.PauseCampaign.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	return a.setCampaignStatus(ctx, id, campaign.StatusPaused, []campaign.Status{campaign.StatusScheduled, campaign.StatusActive})
}

// ResumeCampaign lifts a pause; the status follows from the dates again.
func (a *Service) ResumeCampaign(ctx context.Context, id string) (*ent.Campaign, error) {
	if err := Rules.ResumeCampaign.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	return a.setCampaignStatus(ctx, id, campaign.StatusScheduled, []campaign.Status{campaign.StatusPaused})
}

// setCampaignStatus moves a campaign to status when its status as of now is
// one of from (any, when from is nil), or is already status.
func (a *Service) setCampaignStatus(ctx context.Context, id string, to campaign.Status, from []campaign.Status) (*ent.Campaign, error) {
	c, err := a.campaign(ctx, id)
	if err != nil {
		return nil, err
	}
	target := to
	if to == campaign.StatusScheduled && !c.StartsAt.After(a.k.Now()) {
		// Resuming a campaign whose time has come: it shows active at once,
		// and the lifecycle job stores and announces its activation.
		target = campaign.StatusActive
	}
	switch {
	case c.Status == target || (to == campaign.StatusEnded && c.Status == campaign.StatusEnded):
		return c, nil
	case c.Status == campaign.StatusEnded:
		return nil, apperr.Conflict("campaign_ended", "status", "the campaign has ended")
	case from != nil && !slices.Contains(from, c.Status):
		return nil, apperr.Conflict("invalid_status_transition", "status", "a "+string(c.Status)+" campaign cannot become "+string(to))
	}
	stored := to // scheduled on resume: the lifecycle job activates and announces
	var updated *ent.Campaign
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if updated, err = tx.Ent.Campaign.UpdateOneID(id).SetStatus(stored).Save(ctx); err != nil {
			return err
		}
		return a.k.Changed(ctx, tx, updated.TenantID, change.PartCampaigns)
	})
	if err != nil {
		return nil, err
	}
	return a.WithStatus(updated), nil
}
