package graph

import (
	"context"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/graph/generated"
)

// The GraphQL inputs and outputs of campaigns, read into and out of what
// the operations take and give (the REST adapters do the same from JSON).

func createCampaignInput(in generated.CreateCampaignInput) campaigns.CampaignInput {
	c := campaigns.CampaignInput{
		Name: in.Name, Type: string(in.Type), StartsAt: &in.StartsAt, EndsAt: &in.EndsAt,
		SegmentID: in.SegmentID, Channels: in.Channels, StoreCodes: in.StoreCodes, StoreGroups: in.StoreGroups,
		Discount: &campaigns.DiscountInput{Value: in.DiscountValue, CreditAfterDays: in.CreditAfterDays,
			Multiplier: in.Multiplier, GiftSKU: in.GiftSku},
		Eligibility: &campaigns.EligibilityInput{MinSubtotal: in.MinSubtotal, SKUs: in.EligibleSkus, Categories: in.EligibleCategories,
			Brands: in.EligibleBrands},
		Priority: deref(in.Priority), RequiresCode: deref(in.RequiresCode), HoldoutBasisPoints: deref(in.HoldoutBasisPoints),
		Limits: &campaigns.LimitsInput{PerCustomer: in.LimitPerCustomer, Total: in.LimitTotal},
	}
	if in.BudgetTotal != nil || in.BudgetPerStore != nil || in.BudgetPeriod != nil || in.BudgetPerPeriod != nil {
		c.Budget = &campaigns.BudgetInput{Total: in.BudgetTotal, PerStore: in.BudgetPerStore, PerPeriod: in.BudgetPerPeriod}
		if in.BudgetPeriod != nil {
			c.Budget.Period = string(*in.BudgetPeriod)
		}
	}
	if in.PredictiveSegment != nil {
		key := string(*in.PredictiveSegment)
		c.PredictiveSegment = &key
	}
	if in.Description != nil {
		c.Description = *in.Description
	}
	if in.DiscountMode != nil {
		c.Discount.Mode = string(*in.DiscountMode)
	}
	if in.Stacking != nil {
		c.Stacking = string(*in.Stacking)
	}
	return c
}

func validateCartInput(in generated.ValidateCartInput) checkout.ValidateInput {
	v := checkout.ValidateInput{CustomerID: in.CustomerID, CouponCode: deref(in.CouponCode)}
	if in.StoreID != nil {
		v.StoreID = *in.StoreID
	}
	if in.Channel != nil {
		v.Channel = *in.Channel
	}
	if in.Subtotal != nil {
		v.Cart.Subtotal = *in.Subtotal
	}
	for _, it := range in.Items {
		v.Cart.Items = append(v.Cart.Items, eligibility.Item{
			SKU: deref(it.Sku), GTIN: deref(it.Gtin), Category: deref(it.Category), Brand: deref(it.Brand),
			Quantity: it.Quantity, UnitPrice: it.UnitPrice,
		})
	}
	return v
}

func estimatedBenefit(b eligibility.Benefit) *generated.EstimatedBenefit {
	out := &generated.EstimatedBenefit{
		Amount: b.Amount, DiscountAmount: b.DiscountAmount, CashbackAmount: b.CashbackAmount,
		CreditAfterDays: b.CreditAfterDays, Multiplier: b.Multiplier, FreeShipping: b.FreeShipping, GiftSku: b.GiftSKU,
		Items: make([]*generated.ItemBenefit, 0, len(b.Items)),
	}
	if b.BonusPoints != nil {
		n := int(*b.BonusPoints)
		out.BonusPoints = &n
	}
	for _, it := range b.Items {
		out.Items = append(out.Items, &generated.ItemBenefit{
			Sku: it.SKU, Quantity: it.Quantity, DiscountAmount: it.DiscountAmount,
			CashbackAmount: it.CashbackAmount, BonusPoints: int(it.BonusPoints),
		})
	}
	return out
}

// cartValidation renders a validation, with the campaigns it names read in
// one query.
func cartValidation(ctx context.Context, a *app.App, v *checkout.Validation) (*generated.CartValidation, error) {
	ids := make([]string, 0, len(v.Eligible)+len(v.Ineligible))
	for _, e := range v.Eligible {
		ids = append(ids, e.Campaign.ID)
	}
	for _, ie := range v.Ineligible {
		ids = append(ids, ie.Campaign.ID)
	}
	rows, err := a.Campaigns.CampaignsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Campaign, len(rows))
	for _, c := range rows {
		byID[c.ID] = c
	}
	out := &generated.CartValidation{ValidationToken: v.Token, ExpiresAt: v.ExpiresAt,
		Eligible: []*generated.EligibleCampaign{}, Ineligible: []*generated.IneligibleCampaign{}}
	for _, e := range v.Eligible {
		if c := byID[e.Campaign.ID]; c != nil {
			out.Eligible = append(out.Eligible, &generated.EligibleCampaign{Campaign: c, EstimatedBenefit: estimatedBenefit(e.Benefit)})
		}
	}
	for _, ie := range v.Ineligible {
		if c := byID[ie.Campaign.ID]; c != nil {
			ineligible := &generated.IneligibleCampaign{Campaign: c, Reason: string(ie.Reason), MissingAmount: ie.Missing}
			if ie.ExcludedBy != "" {
				ineligible.ExcludedBy = &ie.ExcludedBy
			}
			out.Ineligible = append(out.Ineligible, ineligible)
		}
	}
	return out, nil
}

func addCouponsInput(in generated.AddCouponsInput) campaigns.CouponsInput {
	c := campaigns.CouponsInput{CampaignID: in.CampaignID, Codes: in.Codes, MaxUses: deref(in.MaxUses), Note: deref(in.Note)}
	if in.Generate != nil {
		c.Generate = &campaigns.CouponGeneration{Count: *in.Generate, Length: deref(in.Length), Prefix: deref(in.Prefix),
			Alphabet: deref(in.Alphabet)}
	}
	return c
}

func fieldProblems(list []apperr.FieldError) []*generated.FieldProblem {
	out := make([]*generated.FieldProblem, len(list))
	for i, p := range list {
		out[i] = &generated.FieldProblem{Field: p.Field, Message: p.Message}
	}
	return out
}

func productInputs(list []*generated.ProductInput) []campaigns.ProductInput {
	out := make([]campaigns.ProductInput, len(list))
	for i, p := range list {
		out[i] = campaigns.ProductInput{GTIN: deref(p.Gtin), SKU: deref(p.Sku), Name: p.Name, Category: deref(p.Category), Brand: deref(p.Brand)}
	}
	return out
}

func catalogImport(res *campaigns.CatalogResult) *generated.CatalogImport {
	out := &generated.CatalogImport{Created: res.Created, Updated: res.Updated, Problems: make([]*generated.FieldProblem, len(res.Problems))}
	for i, p := range res.Problems {
		out.Problems[i] = &generated.FieldProblem{Field: p.Path(), Message: p.Message}
	}
	return out
}

// campaignLift is a campaign's experiment as GraphQL shows it.
func campaignLift(l *experiment.Lift) *generated.CampaignLift {
	return &generated.CampaignLift{
		TreatedCustomers: l.Treated.Customers, HeldOutCustomers: l.HeldOut.Customers,
		TreatedBuyers: l.Treated.Buyers, HeldOutBuyers: l.HeldOut.Buyers,
		BuyerShare: &l.BuyerShare, RevenuePerCustomer: &l.RevenuePerCustomer, RevenuePerBuyer: &l.RevenuePerBuyer,
		Discounts: l.Discounts, IncrementalRevenue: l.IncrementalRevenue, NetRevenue: l.NetRevenue,
		Verdict: generated.LiftVerdict(l.Verdict), Summary: l.Summary(),
	}
}
