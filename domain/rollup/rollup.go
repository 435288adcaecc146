// Package rollup reads the dashboards' rollups (migration 0027): per
// tenant and local day (the tenant's time zone), the sales of each store,
// the redemptions of each campaign, the ledger's movements and the
// customers' active days, kept by triggers in the statement that writes
// the rows they summarise. Money is integer cents plus the part below the
// cent in 10^-8 R$ (the scale of the decimal columns), so sums are exact
// on both databases.
//
// The rollups are read with SQL, for the tenant of the context's viewer
// alone: the tables are the database's (triggers write them), not ent's.
package rollup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/schema/viewer"
)

// Money is a rollup's amount, whole cents and the rest in 10^-8 R$
// (both with the amount's sign), as a decimal.
func Money(cents, sub int64) decimal.Decimal {
	return decimal.New(cents, -2).Add(decimal.New(sub, -8))
}

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

// Reader reads the rollups of the context's tenant.
type Reader struct {
	DB     *sql.DB
	Rebind func(query string) string // numbers ? placeholders for the database
}

// query runs q with the viewer's tenant as the first argument.
func (r Reader) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	v, ok := viewer.FromContext(ctx)
	if !ok || v.TenantID == "" {
		return nil, errors.New("rollups: no tenant in the context")
	}
	return r.DB.QueryContext(ctx, r.Rebind(q), append([]any{v.TenantID}, args...)...)
}

// scanAll calls scan on each row of rows, then closes them.
func scanAll(rows *sql.Rows, err error, scan func(*sql.Rows) error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// StoreDay is the sales of one store on one day.
type StoreDay struct {
	StoreID, Day              string
	Sales                     int
	Amount, Discount, Payable decimal.Decimal
}

// SalesDays returns the sales per store and day of the days [first, end).
func (r Reader) SalesDays(ctx context.Context, first, end string) ([]StoreDay, error) {
	var out []StoreDay
	rows, err := r.query(ctx, `SELECT store_id, day, sales, amount_cents, amount_sub, discount_cents, discount_sub,
		payable_cents, payable_sub FROM rollup_sales_days WHERE tenant_id = ? AND day >= ? AND day < ? AND sales <> 0`, first, end)
	return out, scanAll(rows, err, func(rows *sql.Rows) error {
		var s StoreDay
		var m [6]int64
		err := rows.Scan(&s.StoreID, &s.Day, &s.Sales, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5])
		s.Amount, s.Discount, s.Payable = Money(m[0], m[1]), Money(m[2], m[3]), Money(m[4], m[5])
		out = append(out, s)
		return err
	})
}

// Campaign is what a campaign's redemptions gave and brought.
type Campaign struct {
	Redemptions              int
	Discount, Cashback, Paid decimal.Decimal
}

// CampaignDays sums a campaign's redemptions of the days [first, end),
// every day when both are empty, from the first day or to the last when
// one is.
func (r Reader) CampaignDays(ctx context.Context, campaignID, first, end string) (Campaign, error) {
	q := `SELECT coalesce(sum(redemptions), 0), coalesce(sum(discount_cents), 0), coalesce(sum(discount_sub), 0),
		coalesce(sum(cashback_cents), 0), coalesce(sum(cashback_sub), 0), coalesce(sum(paid_cents), 0), coalesce(sum(paid_sub), 0)
		FROM rollup_campaign_days WHERE tenant_id = ? AND campaign_id = ?`
	args := []any{campaignID}
	if first != "" {
		q += ` AND day >= ?`
		args = append(args, first)
	}
	if end != "" {
		q += ` AND day < ?`
		args = append(args, end)
	}
	var c Campaign
	rows, err := r.query(ctx, q, args...)
	return c, scanAll(rows, err, func(rows *sql.Rows) error {
		var m [6]int64
		err := rows.Scan(&c.Redemptions, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5])
		c.Discount, c.Cashback, c.Paid = Money(m[0], m[1]), Money(m[2], m[3]), Money(m[4], m[5])
		return err
	})
}

// PointsBefore is the ledger's movements, summed, of the days before day.
func (r Reader) PointsBefore(ctx context.Context, day string) (int64, error) {
	var n int64
	rows, err := r.query(ctx, `SELECT coalesce(sum(net), 0) FROM rollup_points_days WHERE tenant_id = ? AND day < ?`, day)
	return n, scanAll(rows, err, func(rows *sql.Rows) error { return rows.Scan(&n) })
}

// PointsDays is the ledger's movements, summed, of each day of [first, end)
// that has any.
func (r Reader) PointsDays(ctx context.Context, first, end string) (map[string]int64, error) {
	out := map[string]int64{}
	rows, err := r.query(ctx, `SELECT day, net FROM rollup_points_days WHERE tenant_id = ? AND day >= ? AND day < ?`, first, end)
	return out, scanAll(rows, err, func(rows *sql.Rows) error {
		var day string
		var net int64
		err := rows.Scan(&day, &net)
		out[day] += net
		return err
	})
}

// ActiveCustomers counts the customers active on some day of [first, end):
// those whose first active day of the period falls on it, read from the
// pairs of each active day and the customer's previous one.
func (r Reader) ActiveCustomers(ctx context.Context, first, end string) (int, error) {
	var n int
	rows, err := r.query(ctx, `SELECT coalesce(sum(customers), 0) FROM rollup_active_pairs
		WHERE tenant_id = ? AND day >= ? AND day < ? AND prev_day < ?`, first, end, first)
	return n, scanAll(rows, err, func(rows *sql.Rows) error { return rows.Scan(&n) })
}

// ActiveAmong returns those of ids active on some day of [first, end).
func (r Reader) ActiveAmong(ctx context.Context, ids []string, first, end string) (map[string]bool, error) {
	out := map[string]bool{}
	const batch = 500
	for len(ids) > 0 {
		part := ids[:min(batch, len(ids))]
		ids = ids[len(part):]
		args := []any{first, end}
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := r.query(ctx, `SELECT DISTINCT customer_id FROM rollup_customer_days WHERE tenant_id = ? AND day >= ? AND day < ?
			AND customer_id IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args...)
		err = scanAll(rows, err, func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			out[id] = true
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Rebuild counts the rollups of a tenant again from its rows, in tx: the
// trigger of rollup_rebuilds (migration 0027) replaces them, as a change of
// the tenant's time zone does.
func Rebuild(ctx context.Context, tx *sql.Tx, rebind func(string) string, tenantID string) error {
	_, err := tx.ExecContext(ctx, rebind(`INSERT INTO rollup_rebuilds (tenant_id) VALUES (?)`), tenantID)
	return err
}
