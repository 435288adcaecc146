package insights

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
	_ "time/tzdata" // the dashboards' time zones on machines without a zoneinfo database

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/store"
)

// Dashboard limits: a period of at most a year, read in batches.
const (
	maxDashboardPeriod = 366 * 24 * time.Hour
	dashboardBatch     = 5000
)

// ActiveCustomers counts the customers with a sale, a redemption, or points
// earned or spent within [from, to). Expiries and operator adjustments are
// not the customer's activity. Each kind of activity is read as the
// distinct customers of the period (an index range each), then united:
// asking customer by customer whether any exists is far slower.
func (a *Service) ActiveCustomers(ctx context.Context, from, to time.Time) (int, error) {
	if err := Rules.ActiveCustomers.Allow(ctx); err != nil {
		return 0, err
	}
	if err := checkPeriod(from, to, 0); err != nil {
		return 0, err
	}
	return a.activeCustomers(ctx, from, to)
}

// activeSet returns the customers active within [from, to), from the rows.
func (a *Service) activeSet(ctx context.Context, from, to time.Time) (map[string]struct{}, error) {
	from, to = from.UTC(), to.UTC() // SQLite compares instants as text
	active := map[string]struct{}{}
	for _, q := range []interface {
		Strings(context.Context) ([]string, error)
	}{
		a.k.DB.Ent.Sale.Query().Where(sale.SoldAtGTE(from), sale.SoldAtLT(to), sale.CustomerIDNotNil()).
			Unique(true).Select(sale.FieldCustomerID),
		a.k.DB.Ent.Redemption.Query().Where(redemption.CreatedAtGTE(from), redemption.CreatedAtLT(to)).
			Unique(true).Select(redemption.FieldCustomerID),
		a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CreatedAtGTE(from), pointsentry.CreatedAtLT(to),
			pointsentry.KindIn(pointsentry.KindCredit, pointsentry.KindBonus, pointsentry.KindDebit)).
			Unique(true).Select(pointsentry.FieldCustomerID),
	} {
		ids, err := q.Strings(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			active[id] = struct{}{}
		}
	}
	return active, nil
}

// checkPeriod says whether [from, to) is a usable period, no longer than
// limit when limit is not 0.
func checkPeriod(from, to time.Time, limit time.Duration) error {
	if err := kernel.Guarded("from", from, "to", to); err != nil {
		return err
	}
	switch {
	case !from.Before(to):
		return apperr.Invalid("to", "must be after from")
	case limit > 0 && to.Sub(from) > limit:
		return apperr.Invalid("to", "the period is longer than %d days", int(limit.Hours()/24))
	}
	return nil
}

// CampaignPerformance is what a campaign gave and brought.
type CampaignPerformance struct {
	Redemptions      int
	DiscountGiven    decimal.Decimal
	CashbackPromised decimal.Decimal
	Revenue          decimal.Decimal // what customers paid for the orders that used it
}

// CampaignsPerformance sums the redemptions of each of the campaigns ids,
// within [from, to) when given, read together: a page of campaigns costs
// the statements of one campaign. Every id has its performance, zero
// without redemptions.
func (a *Service) CampaignsPerformance(ctx context.Context, ids []string, from, to *time.Time) (map[string]*CampaignPerformance, error) {
	if err := Rules.CampaignsPerformance.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("from", from, "to", to); err != nil {
		return nil, err
	}
	return a.campaignsPerformance(ctx, ids, from, to)
}

// newPerformances is a zero performance for each of ids.
func newPerformances(ids []string) map[string]*CampaignPerformance {
	out := make(map[string]*CampaignPerformance, len(ids))
	for _, id := range ids {
		out[id] = &CampaignPerformance{}
	}
	return out
}

// sumRedemptions adds the redemptions of the campaigns of sums within
// [from, to) (open on a nil side) to sums, from the rows. Money is summed
// here, exactly, not by the database (SQLite keeps decimals as text).
func (a *Service) sumRedemptions(ctx context.Context, from, to *time.Time, sums map[string]*CampaignPerformance) error {
	q := a.k.DB.Ent.Redemption.Query().Where(redemption.CampaignIDIn(slices.Collect(maps.Keys(sums))...))
	if from != nil {
		q.Where(redemption.CreatedAtGTE(from.UTC()))
	}
	if to != nil {
		q.Where(redemption.CreatedAtLT(to.UTC()))
	}
	fetch := func(after string, limit int) ([]*ent.Redemption, error) {
		return q.Clone().Where(redemption.IDGT(after)).Order(ent.Asc(redemption.FieldID)).Limit(limit).
			Select(redemption.FieldID, redemption.FieldCampaignID, redemption.FieldDiscountAmount,
				redemption.FieldCashbackAmount, redemption.FieldAmountPaid).
			All(ctx)
	}
	return inBatches(fetch, func(r *ent.Redemption) string { return r.ID },
		func(rs []*ent.Redemption) {
			for _, r := range rs {
				p := sums[r.CampaignID]
				p.Redemptions++
				p.DiscountGiven = p.DiscountGiven.Add(r.DiscountAmount)
				p.CashbackPromised = p.CashbackPromised.Add(r.CashbackAmount)
				p.Revenue = p.Revenue.Add(r.AmountPaid)
			}
		})
}

// StoreDaySales is the sales of one store on one day.
type StoreDaySales struct {
	Store          *ent.Store
	Day            string // YYYY-MM-DD
	Sales          int
	Amount         decimal.Decimal
	DiscountAmount decimal.Decimal
	AmountPayable  decimal.Decimal
}

// SalesByStoreDay sums the sales within [from, to) per store and per day in
// the time zone tz (the tenant's when empty), by day and store code.
func (a *Service) SalesByStoreDay(ctx context.Context, from, to time.Time, tz string) ([]*StoreDaySales, error) {
	if err := Rules.SalesByStoreDay.Allow(ctx); err != nil {
		return nil, err
	}
	loc, err := a.dashboardZone(ctx, from, to, tz)
	if err != nil {
		return nil, err
	}
	sums := map[storeDay]*StoreDaySales{}
	if err := a.salesByStoreDay(ctx, from, to, loc, sums); err != nil {
		return nil, err
	}
	return a.storeDaySales(ctx, sums)
}

// storeDay is a store's id and a day.
type storeDay struct{ store, day string }

// sum is the sales of k, added to sums when first asked for.
func (k storeDay) sum(sums map[storeDay]*StoreDaySales) *StoreDaySales {
	sum := sums[k]
	if sum == nil {
		sum = &StoreDaySales{Day: k.day}
		sums[k] = sum
	}
	return sum
}

// sumSales adds the sales within [from, to) to sums, by store and day in
// loc, from the rows.
func (a *Service) sumSales(ctx context.Context, from, to time.Time, loc *time.Location, sums map[storeDay]*StoreDaySales) error {
	q := a.k.DB.Ent.Sale.Query().Where(sale.SoldAtGTE(from.UTC()), sale.SoldAtLT(to.UTC()))
	fetch := func(after string, limit int) ([]*ent.Sale, error) {
		return q.Clone().Where(sale.IDGT(after)).Order(ent.Asc(sale.FieldID)).Limit(limit).
			Select(sale.FieldID, sale.FieldStoreID, sale.FieldSoldAt, sale.FieldAmount, sale.FieldDiscountAmount, sale.FieldAmountPayable).
			All(ctx)
	}
	return inBatches(fetch, func(s *ent.Sale) string { return s.ID }, func(ss []*ent.Sale) {
		for _, s := range ss {
			sum := storeDay{s.StoreID, s.SoldAt.In(loc).Format(time.DateOnly)}.sum(sums)
			sum.Sales++
			sum.Amount = sum.Amount.Add(s.Amount)
			sum.DiscountAmount = sum.DiscountAmount.Add(s.DiscountAmount)
			sum.AmountPayable = sum.AmountPayable.Add(s.AmountPayable)
		}
	})
}

// storeDaySales lists sums with their stores, by day and store code.
func (a *Service) storeDaySales(ctx context.Context, sums map[storeDay]*StoreDaySales) ([]*StoreDaySales, error) {
	return withStores(ctx, a.k.DB.Ent, sums, func(s *StoreDaySales, st *ent.Store) string { s.Store = st; return s.Day })
}

// withStores lists sums, each given its store by set (which answers its
// day), by day and store code.
func withStores[T any](ctx context.Context, c *ent.Client, sums map[storeDay]T, set func(T, *ent.Store) string) ([]T, error) {
	// Each store once: a year of days names every store hundreds of times.
	seen := map[string]bool{}
	var storeIDs []string
	for k := range sums {
		if !seen[k.store] {
			seen[k.store] = true
			storeIDs = append(storeIDs, k.store)
		}
	}
	stores, err := c.Store.Query().Where(store.IDIn(storeIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Store, len(stores))
	for _, s := range stores {
		byID[s.ID] = s
	}
	type row struct {
		sum       T
		day, code string
	}
	rows := make([]row, 0, len(sums))
	for k, sum := range sums {
		st := byID[k.store]
		rows = append(rows, row{sum, set(sum, st), st.Code})
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Or(cmp.Compare(x.day, y.day), cmp.Compare(x.code, y.code)) })
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = r.sum
	}
	return out, nil
}

// dashboardZone checks a dashboard's period and returns the location of its
// days: tz, or the tenant's time zone when tz is empty.
func (a *Service) dashboardZone(ctx context.Context, from, to time.Time, tz string) (*time.Location, error) {
	if err := checkPeriod(from, to, maxDashboardPeriod); err != nil {
		return nil, err
	}
	if tz == "" {
		t, err := a.k.TenantSettings(ctx)
		if err != nil {
			return nil, err
		}
		tz = t.TimeZone
	}
	loc, err := points.Zone(tz)
	if err != nil {
		return nil, apperr.Invalid("timeZone", "unknown time zone %q; use an IANA name such as America/Sao_Paulo", tz)
	}
	return loc, nil
}

// DayPoints is the tenant's outstanding points at the end of one day.
type DayPoints struct {
	Day    string // YYYY-MM-DD
	Points int64
}

// PointsLiabilityByDay returns the customers' points balances, summed, at
// the end of each day of [from, to) in the time zone tz (the tenant's when
// empty); the last day ends at to. A balance is the one its customer's
// latest ledger entry left, so the ledger is read once, customer by
// customer, in batches, and each entry adds what it changed to its day.
func (a *Service) PointsLiabilityByDay(ctx context.Context, from, to time.Time, tz string) ([]DayPoints, error) {
	if err := Rules.PointsLiabilityByDay.Allow(ctx); err != nil {
		return nil, err
	}
	loc, err := a.dashboardZone(ctx, from, to, tz)
	if err != nil {
		return nil, err
	}
	return a.pointsLiabilityByDay(ctx, from, to, loc)
}

// liabilityDays lists the days of [from, to) in loc, each with its end (to
// for the last one).
func liabilityDays(from, to time.Time, loc *time.Location) (days []DayPoints, ends []time.Time) {
	for d := from.In(loc); d.Before(to); {
		y, m, dd := d.Date()
		end := time.Date(y, m, dd+1, 0, 0, 0, 0, loc)
		days = append(days, DayPoints{Day: d.Format(time.DateOnly)})
		ends = append(ends, end)
		d = end
	}
	ends[len(ends)-1] = to
	return days, ends
}

// endingAfter is the index of the first of ends (in order) after at.
func endingAfter(ends []time.Time, at time.Time) int {
	i, _ := slices.BinarySearchFunc(ends, at, func(end, at time.Time) int {
		if end.After(at) {
			return 1
		}
		return -1
	})
	return i
}

// liabilityFromLedger fills the liability of each day from the rows.
func (a *Service) liabilityFromLedger(ctx context.Context, from, to time.Time, loc *time.Location) ([]DayPoints, error) {
	days, ends := liabilityDays(from, to, loc)
	changes := make([]int64, len(days))
	var before int64 // changes before from
	var lastCustomer, lastID string
	var balance int64 // lastCustomer's balance before the entry at hand
	for {
		q := a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CreatedAtLT(to.UTC()))
		if lastCustomer != "" {
			q.Where(pointsentry.Or(pointsentry.CustomerIDGT(lastCustomer),
				pointsentry.And(pointsentry.CustomerID(lastCustomer), pointsentry.IDGT(lastID))))
		}
		rows, err := q.Order(ent.Asc(pointsentry.FieldCustomerID), ent.Asc(pointsentry.FieldID)).Limit(dashboardBatch).
			Select(pointsentry.FieldID, pointsentry.FieldCustomerID, pointsentry.FieldCreatedAt, pointsentry.FieldBalanceAfter).
			All(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			if e.CustomerID != lastCustomer {
				balance = 0
			}
			change := e.BalanceAfter - balance
			balance, lastCustomer, lastID = e.BalanceAfter, e.CustomerID, e.ID
			if e.CreatedAt.Before(from) {
				before += change
				continue
			}
			changes[endingAfter(ends, e.CreatedAt)] += change
		}
		if len(rows) < dashboardBatch {
			break
		}
	}
	for i := range days {
		before += changes[i]
		days[i].Points = before
	}
	return days, nil
}

// inBatches hands the rows fetch returns to each, dashboardBatch at a time
// in id order, so a year of sales never sits in memory at once.
func inBatches[T any](fetch func(after string, limit int) ([]T, error), id func(T) string, each func([]T)) error {
	after := ""
	for {
		rows, err := fetch(after, dashboardBatch)
		if err != nil {
			return err
		}
		each(rows)
		if len(rows) < dashboardBatch {
			return nil
		}
		after = id(rows[len(rows)-1])
	}
}
