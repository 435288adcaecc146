package app

import (
	"cmp"
	"context"
	"slices"
	"time"
	_ "time/tzdata" // the dashboards' time zones on machines without a zoneinfo database

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
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
// not the customer's activity.
func (a *App) ActiveCustomers(ctx context.Context, from, to time.Time) (int, error) {
	if err := checkPeriod(from, to, 0); err != nil {
		return 0, err
	}
	from, to = from.UTC(), to.UTC()
	return a.DB.Ent.Customer.Query().Where(customer.Or(
		customer.HasSalesWith(sale.SoldAtGTE(from), sale.SoldAtLT(to)),
		customer.HasRedemptionsWith(redemption.CreatedAtGTE(from), redemption.CreatedAtLT(to)),
		customer.HasPointsEntriesWith(pointsentry.CreatedAtGTE(from), pointsentry.CreatedAtLT(to),
			pointsentry.KindIn(pointsentry.KindCredit, pointsentry.KindBonus, pointsentry.KindDebit)),
	)).Count(ctx)
}

// checkPeriod says whether [from, to) is a usable period, no longer than
// limit when limit is not 0.
func checkPeriod(from, to time.Time, limit time.Duration) error {
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

// CampaignPerformance sums a campaign's redemptions, within [from, to) when
// given. Money is summed here, exactly, not by the database (SQLite keeps
// decimals as text).
func (a *App) CampaignPerformance(ctx context.Context, c *ent.Campaign, from, to *time.Time) (*CampaignPerformance, error) {
	q := a.DB.Ent.Redemption.Query().Where(redemption.CampaignID(c.ID))
	if from != nil {
		q.Where(redemption.CreatedAtGTE(from.UTC()))
	}
	if to != nil {
		q.Where(redemption.CreatedAtLT(to.UTC()))
	}
	p := &CampaignPerformance{}
	fetch := func(after string, limit int) ([]*ent.Redemption, error) {
		return q.Clone().Where(redemption.IDGT(after)).Order(ent.Asc(redemption.FieldID)).Limit(limit).
			Select(redemption.FieldID, redemption.FieldDiscountAmount, redemption.FieldCashbackAmount, redemption.FieldAmountPaid).
			All(ctx)
	}
	err := inBatches(fetch, func(r *ent.Redemption) string { return r.ID },
		func(rs []*ent.Redemption) {
			for _, r := range rs {
				p.Redemptions++
				p.DiscountGiven = p.DiscountGiven.Add(r.DiscountAmount)
				p.CashbackPromised = p.CashbackPromised.Add(r.CashbackAmount)
				p.Revenue = p.Revenue.Add(r.AmountPaid)
			}
		})
	return p, err
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
func (a *App) SalesByStoreDay(ctx context.Context, from, to time.Time, tz string) ([]*StoreDaySales, error) {
	if err := checkPeriod(from, to, maxDashboardPeriod); err != nil {
		return nil, err
	}
	if tz == "" {
		t, err := a.tenantSettings(ctx)
		if err != nil {
			return nil, err
		}
		tz = t.TimeZone
	}
	loc, err := points.Zone(tz)
	if err != nil {
		return nil, apperr.Invalid("timeZone", "unknown time zone %q; use an IANA name such as America/Sao_Paulo", tz)
	}
	type key struct{ store, day string }
	sums := map[key]*StoreDaySales{}
	q := a.DB.Ent.Sale.Query().Where(sale.SoldAtGTE(from.UTC()), sale.SoldAtLT(to.UTC()))
	fetch := func(after string, limit int) ([]*ent.Sale, error) {
		return q.Clone().Where(sale.IDGT(after)).Order(ent.Asc(sale.FieldID)).Limit(limit).
			Select(sale.FieldID, sale.FieldStoreID, sale.FieldSoldAt, sale.FieldAmount, sale.FieldDiscountAmount, sale.FieldAmountPayable).
			All(ctx)
	}
	err = inBatches(fetch, func(s *ent.Sale) string { return s.ID }, func(ss []*ent.Sale) {
		for _, s := range ss {
			k := key{s.StoreID, s.SoldAt.In(loc).Format(time.DateOnly)}
			sum := sums[k]
			if sum == nil {
				sum = &StoreDaySales{Day: k.day}
				sums[k] = sum
			}
			sum.Sales++
			sum.Amount = sum.Amount.Add(s.Amount)
			sum.DiscountAmount = sum.DiscountAmount.Add(s.DiscountAmount)
			sum.AmountPayable = sum.AmountPayable.Add(s.AmountPayable)
		}
	})
	if err != nil {
		return nil, err
	}
	storeIDs := make([]string, 0, len(sums))
	for k := range sums {
		storeIDs = append(storeIDs, k.store)
	}
	stores, err := a.DB.Ent.Store.Query().Where(store.IDIn(storeIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Store, len(stores))
	for _, s := range stores {
		byID[s.ID] = s
	}
	out := make([]*StoreDaySales, 0, len(sums))
	for k, sum := range sums {
		sum.Store = byID[k.store]
		out = append(out, sum)
	}
	slices.SortFunc(out, func(x, y *StoreDaySales) int {
		return cmp.Or(cmp.Compare(x.Day, y.Day), cmp.Compare(x.Store.Code, y.Store.Code))
	})
	return out, nil
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
