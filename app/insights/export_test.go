package insights

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/domain/rollup"
	"github.com/fideliza/fideliza/ent"
)

// The dashboards computed from the rows alone, which the rollups must
// match (rollups_test.go).

// SalesByStoreDayFromRows is SalesByStoreDay read from the sales.
func (a *Service) SalesByStoreDayFromRows(ctx context.Context, from, to time.Time, tz string) ([]*StoreDaySales, error) {
	loc, err := points.Zone(tz)
	if err != nil {
		return nil, err
	}
	sums := map[storeDay]*StoreDaySales{}
	if err := a.sumSales(ctx, from, to, loc, sums); err != nil {
		return nil, err
	}
	return a.storeDaySales(ctx, sums)
}

// ActiveCustomersFromRows is ActiveCustomers read from the rows.
func (a *Service) ActiveCustomersFromRows(ctx context.Context, from, to time.Time) (int, error) {
	set, err := a.activeSet(ctx, from, to)
	return len(set), err
}

// PointsLiabilityByDayFromLedger is PointsLiabilityByDay read from the
// ledger.
func (a *Service) PointsLiabilityByDayFromLedger(ctx context.Context, from, to time.Time, tz string) ([]DayPoints, error) {
	loc, err := points.Zone(tz)
	if err != nil {
		return nil, err
	}
	return a.liabilityFromLedger(ctx, from, to, loc)
}

// CampaignPerformanceFromRows is a campaign's CampaignsPerformance read
// from the redemptions.
func (a *Service) CampaignPerformanceFromRows(ctx context.Context, c *ent.Campaign, from, to *time.Time) (*CampaignPerformance, error) {
	sums := newPerformances([]string{c.ID})
	return sums[c.ID], a.sumRedemptions(ctx, from, to, sums)
}

// CampaignCustomersPaid is what each customer paid within a campaign's
// period until end, as the lift reads it.
func (a *Service) CampaignCustomersPaid(ctx context.Context, c *ent.Campaign, end time.Time) (map[string]rollup.Paid, error) {
	return a.customersPaid(ctx, c, end)
}

// CampaignCustomersPaidFromRows is CampaignCustomersPaid read from the
// sales.
func (a *Service) CampaignCustomersPaidFromRows(ctx context.Context, c *ent.Campaign, end time.Time) (map[string]rollup.Paid, error) {
	return a.paidFromRows(ctx, c.StartsAt, end)
}
