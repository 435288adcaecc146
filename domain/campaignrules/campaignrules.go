// Package campaignrules reads a stored campaign into the rules of the
// eligibility engine, for the operations and the workers alike.
package campaignrules

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
)

// PredictivePrefix marks, among a customer's segments, the predictive
// segments it belongs to: a campaign targeting one matches as a segment.
const PredictivePrefix = "predictive:"

// Of is a stored campaign as the eligibility engine sees it.
func Of(c *ent.Campaign) eligibility.Campaign {
	e := eligibility.Campaign{
		ID: c.ID, Name: c.Name, Description: c.Description,
		Type: eligibility.Type(c.Type), Status: eligibility.Status(c.Status),
		StartsAt: c.StartsAt, EndsAt: c.EndsAt, Channels: c.Channels, Stores: c.StoreCodes, StoreGroups: c.StoreGroups,
		MinSubtotal: c.MinSubtotal, SKUs: c.EligibleSkus, Categories: c.EligibleCategories, Brands: c.EligibleBrands,
		Priority: c.Priority, RequiresCode: c.RequiresCode, Holdout: c.HoldoutBasisPoints,
		LimitTotal: c.LimitTotal, LimitPerCustomer: c.LimitPerCustomer, RedemptionsCount: c.RedemptionsCount,
	}
	if c.PredictiveSegment != nil {
		e.SegmentID = PredictivePrefix + string(*c.PredictiveSegment)
	}
	if c.SegmentID != nil {
		e.SegmentID = *c.SegmentID
	}
	if c.Stacking != nil {
		e.Stacking = eligibility.Stacking(*c.Stacking)
	}
	if c.DiscountMode != nil {
		e.DiscountMode = eligibility.Mode(*c.DiscountMode)
	}
	if c.DiscountValue != nil {
		e.DiscountValue = *c.DiscountValue
	}
	if c.CreditAfterDays != nil {
		e.CreditAfterDays = *c.CreditAfterDays
	}
	if c.Multiplier != nil {
		e.Multiplier = *c.Multiplier
	}
	if c.GiftSku != nil {
		e.GiftSKU = *c.GiftSku
	}
	e.Budget = BudgetOf(c)
	return e
}

// BudgetOf is a stored campaign's money budget as the engine sees it.
func BudgetOf(c *ent.Campaign) eligibility.Budget {
	b := eligibility.Budget{Total: c.BudgetTotal, PerStore: c.BudgetPerStore, PerPeriod: c.BudgetPerPeriod, SpentBy: c.BudgetSpentBy}
	if c.BudgetPeriod != nil {
		b.Period = string(*c.BudgetPeriod)
	}
	if c.BudgetSpent != nil {
		b.Spent = *c.BudgetSpent
	}
	return b
}

// OfAll is Of of each campaign.
func OfAll(rows []*ent.Campaign) []eligibility.Campaign {
	list := make([]eligibility.Campaign, len(rows))
	for i, r := range rows {
		list[i] = Of(r)
	}
	return list
}

// DefinitionsOf is Of of each campaign without what moves with every
// redemption (its redemption count, its budgets' spending): the definitions
// a process keeps in memory until the campaign changes.
func DefinitionsOf(rows []*ent.Campaign) []eligibility.Campaign {
	list := OfAll(rows)
	for i := range list {
		list[i].RedemptionsCount = 0
		list[i].Budget.Spent, list[i].Budget.SpentBy = decimal.Zero, nil
	}
	return list
}

// counted tells whether a campaign's counters decide whether it applies:
// it has a total limit or a budget.
func counted(c *eligibility.Campaign) bool { return c.LimitTotal != nil || c.Budget.Any() }

// withCounters returns a copy of definitions with the redemption counts and
// budgets' spending of those that have a total limit or a budget, read now
// through c in one query (none when no campaign has either).
func withCounters(ctx context.Context, c *ent.Client, definitions []eligibility.Campaign) ([]eligibility.Campaign, error) {
	var ids []string
	for i := range definitions {
		if counted(&definitions[i]) {
			ids = append(ids, definitions[i].ID)
		}
	}
	if len(ids) == 0 {
		return definitions, nil
	}
	rows, err := c.Campaign.Query().Where(campaign.IDIn(ids...)).
		Select(campaign.FieldRedemptionsCount, campaign.FieldBudgetSpent, campaign.FieldBudgetSpentBy).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Campaign, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	list := slices.Clone(definitions)
	for i := range list {
		r := byID[list[i].ID]
		if r == nil || !counted(&list[i]) {
			continue
		}
		list[i].RedemptionsCount = r.RedemptionsCount
		if r.BudgetSpent != nil {
			list[i].Budget.Spent = *r.BudgetSpent
		}
		list[i].Budget.SpentBy = r.BudgetSpentBy
	}
	return list, nil
}

// Live is a tenant's live campaigns as a process keeps them: their
// definitions (DefinitionsOf), compiled once per change into the indexes
// the hot paths evaluate.
type Live struct {
	All       *eligibility.Index // every live campaign: validate
	Discounts *eligibility.Index // the discounts that give money: authorize
	Bonus     *eligibility.Index // the bonus-points campaigns: a processed sale
}

// LiveOf compiles the definitions of live campaigns.
func LiveOf(definitions []eligibility.Campaign) *Live {
	var discounts []eligibility.Campaign
	for _, c := range definitions {
		if c.Type == eligibility.Discount && c.DiscountMode != eligibility.FreeShipping {
			discounts = append(discounts, c)
		}
	}
	return &Live{All: eligibility.Compile(definitions), Discounts: eligibility.Compile(discounts), Bonus: BonusOf(definitions)}
}

// BonusOf compiles the bonus-points campaigns among campaigns.
func BonusOf(campaigns []eligibility.Campaign) *eligibility.Index {
	var bonus []eligibility.Campaign
	for _, c := range campaigns {
		if c.Type == eligibility.BonusPoints {
			bonus = append(bonus, c)
		}
	}
	return eligibility.Compile(bonus)
}

// Evaluate is the evaluation of definitions (as kept in memory, compiled),
// their counters read (withCounters) only for the campaigns eligible without
// them: counters can only take a campaign away, so the cart is evaluated
// again only when one of those has reached its total limit or spent a
// budget.
func Evaluate(ctx context.Context, c *ent.Client, definitions *eligibility.Index, cart eligibility.Cart,
	at eligibility.Context) ([]eligibility.Eligible, []eligibility.Ineligible, error) {
	return EvaluateChosen(ctx, c, definitions, cart, at, func(eligible []eligibility.Eligible) []string {
		ids := make([]string, len(eligible))
		for i, e := range eligible {
			ids[i] = e.Campaign.ID
		}
		return ids
	})
}

// EvaluateChosen is Evaluate for a caller that uses only some of the
// eligible campaigns (authorize: the discounts it applies): the counters
// are read only for the campaigns chosen (by id) among the eligible, and
// when one of them is spent, the cart is evaluated again without it and the
// choice made again. What the caller uses is as if every counter had been
// read, as long as choose picks among the eligible in a way that taking
// away a campaign it did not choose does not change.
func EvaluateChosen(ctx context.Context, c *ent.Client, definitions *eligibility.Index, cart eligibility.Cart,
	at eligibility.Context, choose func([]eligibility.Eligible) []string) ([]eligibility.Eligible, []eligibility.Ineligible, error) {
	byID := map[string]*eligibility.Campaign{}
	for i, d := range definitions.Campaigns() {
		if counted(&d) {
			byID[d.ID] = &definitions.Campaigns()[i]
		}
	}
	read := map[string]bool{}
	spent := map[string]eligibility.Campaign{}
	index := definitions
	for {
		eligible, ineligible := index.Evaluate(cart, at)
		var unread []eligibility.Campaign
		for _, id := range choose(eligible) {
			if d := byID[id]; d != nil && !read[id] {
				read[id] = true
				unread = append(unread, *d)
			}
		}
		if len(unread) == 0 {
			return eligible, ineligible, nil
		}
		counters, err := withCounters(ctx, c, unread)
		if err != nil {
			return nil, nil, err
		}
		before := len(spent)
		for _, r := range counters {
			if r.LimitTotal != nil && r.RedemptionsCount >= *r.LimitTotal || r.Budget.Exhausted(at.Store, at.Now, cmp.Or(at.Zone, time.UTC)) {
				spent[r.ID] = r
			}
		}
		if len(spent) == before {
			return eligible, ineligible, nil
		}
		list := slices.Clone(definitions.Campaigns())
		for i := range list {
			if r, ok := spent[list[i].ID]; ok {
				list[i] = r
			}
		}
		index = definitions.With(list)
	}
}
