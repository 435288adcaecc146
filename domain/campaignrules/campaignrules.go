// Package campaignrules reads a stored campaign into the rules of the
// eligibility engine, for the operations and the workers alike.
package campaignrules

import (
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
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
		Priority: c.Priority, RequiresCode: c.RequiresCode,
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
