package insights

import (
	"context"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/domain/rollup"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// The dashboards read the rollups of migration 0027 (issue 38) for the
// whole local days of a period, in the tenant's time zone, and the rows
// only for the parts of a day at its edges (the (tenant_id, instant)
// indexes keep those short). A period asked in another time zone is read
// from the rows alone.

// rollups reads the rollups of the context's tenant.
func (a *Service) rollups() rollup.Reader {
	return rollup.Reader{Ent: a.k.DB.Ent}
}

// rollupZone is the tenant's time zone, the one its rollups count days in.
func (a *Service) rollupZone(ctx context.Context) (*time.Location, error) {
	t, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	return points.Zone(t.TimeZone)
}

// activeCustomers counts the customers active within [from, to): those of
// the whole days from the rollups, plus those of the edges the whole days
// do not hold.
func (a *Service) activeCustomers(ctx context.Context, from, to time.Time) (int, error) {
	loc, err := a.rollupZone(ctx)
	if err != nil {
		return 0, err
	}
	split := rollup.SplitPeriod(&from, &to, loc)
	var n int
	if split.Whole {
		if n, err = a.rollups().ActiveCustomers(ctx, split.First, split.End); err != nil {
			return 0, err
		}
	}
	edges := map[string]struct{}{}
	for _, r := range split.Raw {
		set, err := a.activeSet(ctx, r[0], r[1])
		if err != nil {
			return 0, err
		}
		for id := range set {
			edges[id] = struct{}{}
		}
	}
	if len(edges) == 0 || !split.Whole {
		return n + len(edges), nil
	}
	ids := make([]string, 0, len(edges))
	for id := range edges {
		ids = append(ids, id)
	}
	counted, err := a.rollups().ActiveAmong(ctx, ids, split.First, split.End)
	return n + len(ids) - len(counted), err
}

// campaignsPerformance sums the redemptions of each of the campaigns ids
// within [from, to): the whole days from the rollups, the edges from the
// rows, each read for every campaign at once.
func (a *Service) campaignsPerformance(ctx context.Context, ids []string, from, to *time.Time) (map[string]*CampaignPerformance, error) {
	sums := newPerformances(ids)
	if len(ids) == 0 {
		return sums, nil
	}
	loc, err := a.rollupZone(ctx)
	if err != nil {
		return nil, err
	}
	split := rollup.SplitPeriod(from, to, loc)
	if split.Whole {
		days, err := a.rollups().CampaignDays(ctx, ids, split.First, split.End)
		if err != nil {
			return nil, err
		}
		for id, r := range days {
			*sums[id] = CampaignPerformance{Redemptions: r.Redemptions, DiscountGiven: r.Discount,
				CashbackPromised: r.Cashback, Revenue: r.Paid}
		}
	}
	for _, r := range split.Raw {
		if err := a.sumRedemptions(ctx, &r[0], &r[1], sums); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// salesByStoreDay adds the sales within [from, to) to sums, by store and
// day in loc: the whole days from the rollups when loc is the tenant's
// time zone.
func (a *Service) salesByStoreDay(ctx context.Context, from, to time.Time, loc *time.Location, sums map[storeDay]*StoreDaySales) error {
	zone, err := a.rollupZone(ctx)
	if err != nil {
		return err
	}
	if zone.String() != loc.String() {
		return a.sumSales(ctx, from, to, loc, sums)
	}
	split := rollup.SplitPeriod(&from, &to, loc)
	if split.Whole {
		days, err := a.rollups().SalesDays(ctx, split.First, split.End)
		if err != nil {
			return err
		}
		for _, d := range days { // sums is empty yet, and the rollups hold one row per store and day
			sums[storeDay{d.StoreID, d.Day}] = &StoreDaySales{Day: d.Day, Sales: d.Sales,
				Amount: d.Amount, DiscountAmount: d.Discount, AmountPayable: d.Payable}
		}
	}
	for _, r := range split.Raw {
		if err := a.sumSales(ctx, r[0], r[1], loc, sums); err != nil {
			return err
		}
	}
	return nil
}

// pointsLiabilityByDay is the liability at the end of each day of
// [from, to) in loc: the ledger's movements of the days before, summed from
// the rollups when loc is the tenant's time zone, and from the rows for
// the part of the last day before to when to is not a midnight.
func (a *Service) pointsLiabilityByDay(ctx context.Context, from, to time.Time, loc *time.Location) ([]DayPoints, error) {
	zone, err := a.rollupZone(ctx)
	if err != nil {
		return nil, err
	}
	if zone.String() != loc.String() {
		return a.liabilityFromLedger(ctx, from, to, loc)
	}
	days, ends := liabilityDays(from, to, loc)
	last := len(days) - 1
	lastStart := to.In(loc)
	lastStart = time.Date(lastStart.Year(), lastStart.Month(), lastStart.Day(), 0, 0, 0, 0, loc)
	partial := lastStart.Before(ends[last]) // the last day ends before its midnight
	end := rollup.Day(ends[last], loc)
	if partial {
		end = days[last].Day
	}
	r := a.rollups()
	total, err := r.PointsBefore(ctx, days[0].Day)
	if err != nil {
		return nil, err
	}
	nets, err := r.PointsDays(ctx, days[0].Day, end)
	if err != nil {
		return nil, err
	}
	debts, err := a.debtsAt(ctx, ends)
	if err != nil {
		return nil, err
	}
	for i := range days {
		if i == last && partial {
			part, err := a.pointsMoved(ctx, lastStart, to)
			if err != nil {
				return nil, err
			}
			nets[days[i].Day] = part
		}
		total += nets[days[i].Day]
		days[i].Points = total + debts[i]
	}
	return days, nil
}

// inDebt is debt_after > 0 as a literal, so that the databases use the
// partial index of the debts (migration 0049) whatever the plan.
var inDebt = predicate.PointsEntry(func(s *sql.Selector) {
	s.Where(sql.ExprP(s.C(pointsentry.FieldDebtAfter) + " > 0"))
})

// debtsAt sums the customers' points debts at each of ends, in order. The
// rollups sum the ledger's points, and a reversal's points beyond the
// balance are owed instead of taken (docs/decisions.md, "Points debt"), so
// the balances are the points summed plus the debts. Few customers ever owe
// points: they are found through the debts' partial index, then their
// entries read.
func (a *Service) debtsAt(ctx context.Context, ends []time.Time) ([]int64, error) {
	to := ends[len(ends)-1].UTC()
	debtors, err := a.k.DB.Ent.PointsEntry.Query().Where(inDebt, pointsentry.CreatedAtLT(to)).Unique(true).
		Select(pointsentry.FieldCustomerID).Strings(ctx)
	if err != nil {
		return nil, err
	}
	changes := make([]int64, len(ends))
	for batch := range slices.Chunk(debtors, dashboardBatch) {
		entries, err := a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CustomerIDIn(batch...), pointsentry.CreatedAtLT(to)).
			Order(ent.Asc(pointsentry.FieldCustomerID), ent.Asc(pointsentry.FieldID)).
			Select(pointsentry.FieldCustomerID, pointsentry.FieldCreatedAt, pointsentry.FieldDebtAfter).All(ctx)
		if err != nil {
			return nil, err
		}
		var customer string
		var debt int64
		for _, e := range entries {
			if e.CustomerID != customer {
				customer, debt = e.CustomerID, 0
			}
			changes[endingAfter(ends, e.CreatedAt)] += e.DebtAfter - debt
			debt = e.DebtAfter
		}
	}
	for i := 1; i < len(changes); i++ {
		changes[i] += changes[i-1]
	}
	return changes, nil
}

// pointsMoved sums the points the ledger moved within [from, to), from the
// rows.
func (a *Service) pointsMoved(ctx context.Context, from, to time.Time) (int64, error) {
	moved, err := a.k.DB.Ent.PointsEntry.Query().
		Where(pointsentry.CreatedAtGTE(from.UTC()), pointsentry.CreatedAtLT(to.UTC())).
		Select(pointsentry.FieldPoints).Ints(ctx)
	var sum int64
	for _, p := range moved {
		sum += int64(p)
	}
	return sum, err
}

// RebuildRollups counts the rollups of a tenant (every tenant when tenantID
// is empty) again from its rows, each tenant in a transaction of its own;
// it returns the tenants rebuilt. Dashboards read the previous rollups
// until a tenant's transaction commits.
func (a *Service) RebuildRollups(ctx context.Context, tenantID string) ([]string, error) {
	if err := Rules.RebuildRollups.Allow(ctx); err != nil {
		return nil, err
	}
	ctx = viewer.SystemContext(ctx)
	q := a.k.DB.Ent.Tenant.Query()
	if tenantID != "" {
		q.Where(tenant.ID(tenantID))
	}
	ids, err := q.IDs(ctx)
	if err != nil {
		return nil, err
	}
	if tenantID != "" && len(ids) == 0 {
		return nil, apperr.NotFound("tenant")
	}
	for _, id := range ids {
		err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
			return rollup.Rebuild(ctx, tx.SQL, a.k.DB.Rebind, id)
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}
