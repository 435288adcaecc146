package insights

import (
	"cmp"
	"context"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/salepayment"
)

// StoreDayPointsSpent is the points customers paid with at one store on
// one day.
type StoreDayPointsSpent struct {
	Store  *ent.Store
	Day    string // YYYY-MM-DD
	Sales  int    // sales paid in part with points
	Points int64  // points the ledger debited for them
	Amount decimal.Decimal
}

// PointsSpentByStoreDay sums the points debited to pay sales within
// [from, to) (the instant the points left the ledger: the sale's
// processing) per store and per day in the time zone tz (the tenant's when
// empty), by day and store code. The R$ is each sale's POINTS payment, the
// amount its hold was placed for: exact, the worth of the points when they
// were spent, whatever the point's value became later.
func (a *Service) PointsSpentByStoreDay(ctx context.Context, from, to time.Time, tz string) ([]*StoreDayPointsSpent, error) {
	if err := Rules.PointsSpentByStoreDay.Allow(ctx); err != nil {
		return nil, err
	}
	loc, err := a.dashboardZone(ctx, from, to, tz)
	if err != nil {
		return nil, err
	}
	q := a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CreatedAtGTE(from.UTC()), pointsentry.CreatedAtLT(to.UTC()),
		debits, pointsentry.SourceKindEQ(pointsentry.SourceKindSale))
	fetch := func(after string, limit int) ([]*ent.PointsEntry, error) {
		return q.Clone().Where(pointsentry.IDGT(after)).Order(ent.Asc(pointsentry.FieldID)).Limit(limit).
			Select(pointsentry.FieldID, pointsentry.FieldCreatedAt, pointsentry.FieldPoints, pointsentry.FieldSourceID).
			All(ctx)
	}
	sums := map[storeDay]*StoreDayPointsSpent{}
	var failed error
	err = inBatches(fetch, func(e *ent.PointsEntry) string { return e.ID }, func(debits []*ent.PointsEntry) {
		if failed == nil {
			failed = a.sumPointsSpent(ctx, debits, loc, sums)
		}
	})
	if err = cmp.Or(err, failed); err != nil {
		return nil, err
	}
	return withStores(ctx, a.k.DB.Ent, sums, func(s *StoreDayPointsSpent, st *ent.Store) string { s.Store = st; return s.Day })
}

// debits is kind = 'debit' as a literal, so that the databases use the
// partial index of the debits (migration 0046) whatever the plan: a bound
// parameter would not prove the index's condition.
var debits = predicate.PointsEntry(func(s *sql.Selector) {
	s.Where(sql.ExprP(s.C(pointsentry.FieldKind) + " = '" + string(pointsentry.KindDebit) + "'"))
})

// sumPointsSpent adds debits (of sales) to sums, by their sale's store and
// their day in loc, with their sales' POINTS payments: two queries a batch.
func (a *Service) sumPointsSpent(ctx context.Context, debits []*ent.PointsEntry, loc *time.Location, sums map[storeDay]*StoreDayPointsSpent) error {
	ids := make([]string, 0, len(debits))
	for _, e := range debits {
		if e.SourceID != nil {
			ids = append(ids, *e.SourceID)
		}
	}
	sales, err := a.k.DB.Ent.Sale.Query().Where(sale.IDIn(ids...)).Select(sale.FieldID, sale.FieldStoreID).All(ctx)
	if err != nil {
		return err
	}
	stores := make(map[string]string, len(sales))
	for _, s := range sales {
		stores[s.ID] = s.StoreID
	}
	payments, err := a.k.DB.Ent.SalePayment.Query().Where(salepayment.SaleIDIn(ids...), salepayment.HoldIDNotNil()).
		Select(salepayment.FieldSaleID, salepayment.FieldAmount).All(ctx)
	if err != nil {
		return err
	}
	paid := make(map[string]decimal.Decimal, len(payments))
	for _, p := range payments {
		paid[p.SaleID] = paid[p.SaleID].Add(p.Amount)
	}
	for _, e := range debits {
		if e.SourceID == nil {
			continue
		}
		k := storeDay{stores[*e.SourceID], e.CreatedAt.In(loc).Format(time.DateOnly)}
		sum := sums[k]
		if sum == nil {
			sum = &StoreDayPointsSpent{Day: k.day}
			sums[k] = sum
		}
		sum.Sales++
		sum.Points -= e.Points // a debit's points are negative
		sum.Amount = sum.Amount.Add(paid[*e.SourceID])
	}
	return nil
}
