// Package rollup reads the dashboards' rollups (migration 0027): per
// tenant and local day (the tenant's time zone), the sales of each store,
// the redemptions of each campaign, the ledger's movements and the
// customers' active days, kept by triggers in the statement that writes
// the rows they summarise. Money is integer cents plus the part below the
// cent in 10^-8 R$ (the scale of the decimal columns), so sums are exact
// on both databases.
//
// Triggers write the rollups; ent reads them as views (ent/schema/rollup.go),
// filtered by tenant through its privacy policy.
package rollup

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/rollupactivepair"
	"github.com/fideliza/fideliza/ent/rollupcampaigncustomer"
	"github.com/fideliza/fideliza/ent/rollupcampaignday"
	"github.com/fideliza/fideliza/ent/rollupcustomerday"
	"github.com/fideliza/fideliza/ent/rolluppointsday"
	"github.com/fideliza/fideliza/ent/rollupsalesday"
)

// Money is a rollup's amount, whole cents and the rest in 10^-8 R$
// (both with the amount's sign), as a decimal.
func Money(cents, sub int64) decimal.Decimal {
	if -maxMoneyCents <= cents && cents <= maxMoneyCents && -maxMoneySub <= sub && sub <= maxMoneySub {
		// The same decimal (cents·10^6 + sub at 10^-8) in one allocation,
		// where the sum takes several: a year of rollups reads thousands.
		return decimal.New(cents*1_000_000+sub, -8)
	}
	return decimal.New(cents, -2).Add(decimal.New(sub, -8))
}

// The bounds within which cents·10^6 + sub fits an int64 (R$ 90 billion;
// a rollup's sub is a sum, not carried into the cents, so it may pass 10^6).
const (
	maxMoneyCents = 9_000_000_000_000
	maxMoneySub   = 100_000_000_000_000_000
)

// Cents splits d into whole cents and the rest in 10^-8 R$, truncating
// toward zero: an error when d has more than 8 places or does not fit.
func Cents(d decimal.Decimal) (cents, sub int64, err error) {
	if d.Exponent() < -8 && !d.Equal(d.Truncate(8)) {
		return 0, 0, fmt.Errorf("%s has more than 8 decimal places", d)
	}
	c := d.Shift(2).Truncate(0)
	if c.Abs().Cmp(decimal.New(1, 18)) >= 0 {
		return 0, 0, fmt.Errorf("%s R$ does not fit a rollup", d)
	}
	return c.IntPart(), d.Shift(8).Sub(c.Shift(6)).IntPart(), nil
}

// Day is the local day of at in loc, YYYY-MM-DD: a rollup's day.
func Day(at time.Time, loc *time.Location) string { return at.In(loc).Format(time.DateOnly) }

// dayStart is the first instant of t's local day (01:00 where a change to
// summer time skips midnight).
func dayStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// Split is a period cut at the local midnights of a zone: the whole days
// First to End (exclusive; "" when the period is open on that side), which
// the rollups answer, and the parts outside them, which only the rows do.
// With no whole day, Raw is the whole period.
type Split struct {
	Whole      bool
	First, End string         // the whole days, YYYY-MM-DD
	Raw        [][2]time.Time // [from, to) instants outside them
}

// SplitPeriod cuts [from, to) at the midnights of loc; a nil bound leaves
// the period open on its side.
func SplitPeriod(from, to *time.Time, loc *time.Location) Split {
	var s Split
	var a, b time.Time
	if from != nil {
		a = dayStart(from.In(loc))
		if a.Before(*from) {
			a = dayStart(a.AddDate(0, 0, 1).Add(2 * time.Hour)) // the next day, whatever this one's length
		}
		s.First = Day(a, loc)
	}
	if to != nil {
		b = dayStart(to.In(loc))
		s.End = Day(b, loc)
	}
	if from != nil && to != nil && !a.Before(b) {
		return Split{Raw: [][2]time.Time{{*from, *to}}}
	}
	s.Whole = true
	if from != nil && from.Before(a) {
		s.Raw = append(s.Raw, [2]time.Time{*from, a})
	}
	if to != nil && b.Before(*to) {
		s.Raw = append(s.Raw, [2]time.Time{b, *to})
	}
	return s
}

// Reader reads the rollups of the context's tenant through ent, whose
// privacy policy filters them by tenant as every tenant-owned entity.
type Reader struct{ Ent *ent.Client }

// StoreDay is the sales of one store on one day.
type StoreDay struct {
	StoreID, Day              string
	Sales                     int
	Amount, Discount, Payable decimal.Decimal
}

// SalesDays returns the sales per store and day of the days [first, end).
func (r Reader) SalesDays(ctx context.Context, first, end string) ([]StoreDay, error) {
	rows, err := r.Ent.RollupSalesDay.Query().
		Where(rollupsalesday.DayGTE(first), rollupsalesday.DayLT(end), rollupsalesday.SalesNEQ(0)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]StoreDay, len(rows))
	for i, s := range rows {
		out[i] = StoreDay{StoreID: s.StoreID, Day: s.Day, Sales: int(s.Sales), Amount: Money(s.AmountCents, s.AmountSub),
			Discount: Money(s.DiscountCents, s.DiscountSub), Payable: Money(s.PayableCents, s.PayableSub)}
	}
	return out, nil
}

// Campaign is what a campaign's redemptions gave and brought.
type Campaign struct {
	Redemptions              int
	Discount, Cashback, Paid decimal.Decimal
}

// CampaignDays sums the redemptions of each of campaignIDs of the days
// [first, end), every day when both are empty, from the first day or to
// the last when one is, in one statement. A campaign without any is
// absent.
func (r Reader) CampaignDays(ctx context.Context, campaignIDs []string, first, end string) (map[string]Campaign, error) {
	where := []predicate.RollupCampaignDay{rollupcampaignday.CampaignIDIn(campaignIDs...)}
	if first != "" {
		where = append(where, rollupcampaignday.DayGTE(first))
	}
	if end != "" {
		where = append(where, rollupcampaignday.DayLT(end))
	}
	var sums []struct {
		CampaignID                                                                              string `sql:"campaign_id"`
		Redemptions, DiscountCents, DiscountSub, CashbackCents, CashbackSub, PaidCents, PaidSub int64
	}
	err := r.Ent.RollupCampaignDay.Query().Where(where...).GroupBy(rollupcampaignday.FieldCampaignID).Aggregate(
		sum(rollupcampaignday.FieldRedemptions, "redemptions"),
		sum(rollupcampaignday.FieldDiscountCents, "discountcents"), sum(rollupcampaignday.FieldDiscountSub, "discountsub"),
		sum(rollupcampaignday.FieldCashbackCents, "cashbackcents"), sum(rollupcampaignday.FieldCashbackSub, "cashbacksub"),
		sum(rollupcampaignday.FieldPaidCents, "paidcents"), sum(rollupcampaignday.FieldPaidSub, "paidsub"),
	).Scan(ctx, &sums)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Campaign, len(sums))
	for _, m := range sums {
		out[m.CampaignID] = Campaign{Redemptions: int(m.Redemptions), Discount: Money(m.DiscountCents, m.DiscountSub),
			Cashback: Money(m.CashbackCents, m.CashbackSub), Paid: Money(m.PaidCents, m.PaidSub)}
	}
	return out, nil
}

// sum is an aggregate of a column's total, 0 over no rows, named as.
func sum(column, as string) ent.AggregateFunc {
	return func(s *sql.Selector) string {
		return sql.As("coalesce("+sql.Sum(s.C(column))+", 0)", as)
	}
}

// total scans one aggregate's value.
func total(ctx context.Context, scan func(context.Context, any) error) (int64, error) {
	var v []struct{ Total int64 }
	if err := scan(ctx, &v); err != nil || len(v) == 0 {
		return 0, err
	}
	return v[0].Total, nil
}

// PointsBefore is the ledger's movements, summed, of the days before day.
func (r Reader) PointsBefore(ctx context.Context, day string) (int64, error) {
	return total(ctx, r.Ent.RollupPointsDay.Query().Where(rolluppointsday.DayLT(day)).
		Aggregate(sum(rolluppointsday.FieldNet, "total")).Scan)
}

// PointsDays is the ledger's movements, summed, of each day of [first, end)
// that has any.
func (r Reader) PointsDays(ctx context.Context, first, end string) (map[string]int64, error) {
	rows, err := r.Ent.RollupPointsDay.Query().Where(rolluppointsday.DayGTE(first), rolluppointsday.DayLT(end)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, p := range rows {
		out[p.Day] += p.Net
	}
	return out, nil
}

// ActiveCustomers counts the customers active on some day of [first, end):
// those whose first active day of the period falls on it, read from the
// pairs of each active day and the customer's previous one.
func (r Reader) ActiveCustomers(ctx context.Context, first, end string) (int, error) {
	n, err := total(ctx, r.Ent.RollupActivePair.Query().
		Where(rollupactivepair.DayGTE(first), rollupactivepair.DayLT(end), rollupactivepair.PrevDayLT(first)).
		Aggregate(sum(rollupactivepair.FieldCustomers, "total")).Scan)
	return int(n), err
}

// ActiveAmong returns those of ids active on some day of [first, end).
func (r Reader) ActiveAmong(ctx context.Context, ids []string, first, end string) (map[string]bool, error) {
	out := map[string]bool{}
	const batch = 500
	for len(ids) > 0 {
		part := ids[:min(batch, len(ids))]
		ids = ids[len(part):]
		active, err := r.Ent.RollupCustomerDay.Query().Unique(true).
			Where(rollupcustomerday.DayGTE(first), rollupcustomerday.DayLT(end), rollupcustomerday.CustomerIDIn(part...)).
			Select(rollupcustomerday.FieldCustomerID).Strings(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range active {
			out[id] = true
		}
	}
	return out, nil
}

// Rebuild counts the rollups of a tenant again from its rows, in tx: the
// trigger of rollup_rebuilds (migration 0027) replaces them, as a change of
// the tenant's time zone does.
func Rebuild(ctx context.Context, tx *stdsql.Tx, rebind func(string) string, tenantID string) error {
	_, err := tx.ExecContext(ctx, rebind(`INSERT INTO rollup_rebuilds (tenant_id) VALUES (?)`), tenantID)
	return err
}

// Paid is what a customer paid: their sales not cancelled, how many and
// the amount payable.
type Paid struct {
	Sales  int
	Amount decimal.Decimal
}

// CampaignCustomers is what each customer paid within the period of a
// campaign with a holdout; a customer with no such sale is not in the map.
func (r Reader) CampaignCustomers(ctx context.Context, campaignID string) (map[string]Paid, error) {
	rows, err := r.Ent.RollupCampaignCustomer.Query().Where(rollupcampaigncustomer.CampaignID(campaignID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Paid, len(rows))
	for _, p := range rows {
		out[p.CustomerID] = Paid{Sales: int(p.Sales), Amount: Money(p.PaidCents, p.PaidSub)}
	}
	return out, nil
}
