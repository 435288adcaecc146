package insights

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/domain/rollup"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/segment"
)

// CampaignLift measures what a campaign with a holdout changed over its
// period (its start until its end, or now while it runs): its target
// customers (its segment's members, its predictive segment's, else every
// customer), split as every channel splits them (experiment.HeldOut), each
// with the sales registered for them in the period (not cancelled: what
// they paid), against the discounts and cashback the campaign gave
// (Campaign.performance's), and its verdict: no benefit when the campaign
// gave nothing in the period (no redemption, discount nor cashback; a
// bonus-points campaign is taken to have given). Nil for a campaign without
// a holdout.
func (a *Service) CampaignLift(ctx context.Context, c *ent.Campaign) (*experiment.Lift, error) {
	if err := Rules.CampaignLift.Allow(ctx); err != nil {
		return nil, err
	}
	if c.HoldoutBasisPoints == 0 {
		return nil, nil
	}
	start, end := c.StartsAt, c.EndsAt
	if now := a.k.Now(); now.Before(end) {
		end = now
	}
	if end.Before(start) {
		end = start
	}
	targets, err := a.liftTargets(ctx, c)
	if err != nil {
		return nil, err
	}
	revenue, err := a.customersPaid(ctx, c, end)
	if err != nil {
		return nil, err
	}
	var treated, heldOut experiment.Group
	for _, id := range targets {
		g := &treated
		if experiment.HeldOut(id, c.ID, c.HoldoutBasisPoints) {
			g = &heldOut
		}
		r, bought := revenue[id]
		g.Add(bought, r.Amount)
	}
	perf, err := a.campaignsPerformance(ctx, []string{c.ID}, &start, &end)
	if err != nil {
		return nil, err
	}
	p := perf[c.ID]
	given := p.DiscountGiven.Add(p.CashbackPromised)
	// A bonus-points campaign's points are credited with the sales, not
	// as its redemptions: whether it gave any is not known here.
	gave := p.Redemptions > 0 || given.IsPositive() || c.Type == campaign.TypeBonusPoints
	lift := experiment.Measure(treated, heldOut, given, gave)
	return &lift, nil
}

// liftTargets are the ids of a campaign's target customers, read in one
// query.
func (a *Service) liftTargets(ctx context.Context, c *ent.Campaign) ([]string, error) {
	q := a.k.DB.Ent.Customer.Query()
	switch {
	case c.SegmentID != nil:
		q.Where(customer.HasSegmentsWith(segment.ID(*c.SegmentID)))
	case c.PredictiveSegment != nil:
		members, err := a.Scoring.PredictiveMembers(ctx, string(*c.PredictiveSegment))
		if err != nil {
			return nil, err
		}
		q.Where(members)
	}
	return q.IDs(ctx)
}

// customersPaid is what each customer paid within [c.StartsAt, end):
// the rollup of the campaign's whole period (migration 0045), less the
// sales registered for [end, c.EndsAt), read from the rows (none unless
// the campaign runs and a sale was registered with a later sold_at).
func (a *Service) customersPaid(ctx context.Context, c *ent.Campaign, end time.Time) (map[string]rollup.Paid, error) {
	paid, err := a.rollups().CampaignCustomers(ctx, c.ID)
	if err != nil || !end.Before(c.EndsAt) {
		return paid, err
	}
	later, err := a.paidFromRows(ctx, end, c.EndsAt)
	if err != nil {
		return nil, err
	}
	for id, l := range later {
		p := paid[id]
		if p.Sales -= l.Sales; p.Sales > 0 {
			paid[id] = rollup.Paid{Sales: p.Sales, Amount: p.Amount.Sub(l.Amount)}
		} else {
			delete(paid, id)
		}
	}
	return paid, nil
}

// paidFromRows is what each customer paid for the sales registered within
// [from, to), cancelled ones left out, read in batches; money is summed
// here, exactly.
func (a *Service) paidFromRows(ctx context.Context, from, to time.Time) (map[string]rollup.Paid, error) {
	q := a.k.DB.Ent.Sale.Query().Where(sale.SoldAtGTE(from.UTC()), sale.SoldAtLT(to.UTC()), sale.CustomerIDNotNil(),
		sale.StatusNEQ(sale.StatusCANCELLED))
	fetch := func(after string, limit int) ([]*ent.Sale, error) {
		return q.Clone().Where(sale.IDGT(after)).Order(ent.Asc(sale.FieldID)).Limit(limit).
			Select(sale.FieldID, sale.FieldCustomerID, sale.FieldAmountPayable).All(ctx)
	}
	paid := map[string]rollup.Paid{}
	err := inBatches(fetch, func(s *ent.Sale) string { return s.ID }, func(ss []*ent.Sale) {
		for _, s := range ss {
			p := paid[*s.CustomerID]
			paid[*s.CustomerID] = rollup.Paid{Sales: p.Sales + 1, Amount: p.Amount.Add(s.AmountPayable)}
		}
	})
	return paid, err
}
