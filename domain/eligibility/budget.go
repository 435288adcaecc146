package eligibility

import (
	"time"

	"github.com/shopspring/decimal"
)

// Budget is what a campaign may give in R$ (discounts and cashback), in all,
// in each store and in each period, with what it gave so far.
type Budget struct {
	Total, PerStore, PerPeriod *decimal.Decimal // nil: no such budget
	Period                     string           // day, week or month (of PerPeriod)
	Spent                      decimal.Decimal  // in all
	SpentBy                    map[string]decimal.Decimal
}

// Any tells whether there is a budget at all.
func (b Budget) Any() bool { return b.Total != nil || b.PerStore != nil || b.PerPeriod != nil }

// StoreBudgetKey is the key of Budget.SpentBy of a store's spending.
func StoreBudgetKey(store string) string { return "store:" + store }

// PeriodBudgetKey names the period (day, week from Monday, or month) of t in
// loc by its first day: "day:2026-11-26", "week:2026-11-23", "month:2026-11-01".
func PeriodBudgetKey(period string, t time.Time, loc *time.Location) string {
	t = t.In(loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	switch period {
	case "week":
		day = day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	case "month":
		day = day.AddDate(0, 0, 1-day.Day())
	}
	return period + ":" + day.Format(time.DateOnly)
}

// Exhausted tells whether a budget has nothing left at store (its code, ""
// for none) at now in loc: in all, in the store, or in the period.
func (b Budget) Exhausted(store string, now time.Time, loc *time.Location) bool {
	return b.exhausted(store, func(period string) string { return PeriodBudgetKey(period, now, loc) })
}

// exhausted is Exhausted with the key of a period (PeriodBudgetKey at the
// instant in question) from periodKey: an evaluation names each period once
// for all its campaigns.
func (b Budget) exhausted(store string, periodKey func(period string) string) bool {
	switch {
	case b.Total != nil && b.Spent.GreaterThanOrEqual(*b.Total):
		return true
	case b.PerStore != nil && store != "" && b.SpentBy[StoreBudgetKey(store)].GreaterThanOrEqual(*b.PerStore):
		return true
	case b.PerPeriod != nil && b.SpentBy[periodKey(b.Period)].GreaterThanOrEqual(*b.PerPeriod):
		return true
	}
	return false
}
