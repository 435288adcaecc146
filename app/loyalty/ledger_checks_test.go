package loyalty_test

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/jobs"
)

// advance moves the clock by minutes to months, or onto a lot's expiry.
func (m *ledgerModel) advance() {
	now := m.now()
	var to time.Time
	switch r := m.rng.IntN(20); {
	case r < 3: // exactly onto, or just before, the next expiry
		var next time.Time
		for _, c := range m.customers {
			for _, l := range c.lots {
				if l.remaining > 0 && l.expiresAt.After(now) && (next.IsZero() || l.expiresAt.Before(next)) {
					next = l.expiresAt
				}
			}
		}
		if next.IsZero() {
			next = now.Add(time.Hour)
		}
		to = next
		if r == 0 {
			to = next.Add(-time.Microsecond)
		}
	case r < 9:
		to = now.Add(time.Duration(1+m.rng.Int64N(int64(12*time.Hour/time.Microsecond))) * time.Microsecond)
	case r < 17:
		to = now.Add(time.Duration(1+m.rng.Int64N(int64(30*24*time.Hour/time.Microsecond))) * time.Microsecond)
	default:
		to = now.AddDate(0, 1+m.rng.IntN(3), m.rng.IntN(28))
	}
	m.clock.Set(to)
	m.logf("clock moved by %s", to.Sub(now))
	m.counts["advance"]++
}

// runExpiry runs the expiry job: every lot whose time has come loses what is
// left, and its customer's level is read again.
func (m *ledgerModel) runExpiry() {
	now := m.now()
	m.logf("expiry job")
	if err := m.app.Loyalty.ExpirePoints(context.Background(), jobs.ExpirePoints{}); err != nil {
		m.fatalf("expiry job: %v", err)
	}
	for _, c := range m.customers {
		expired := false
		for _, l := range c.lots {
			if l.remaining > 0 && !l.expiresAt.After(now) {
				l.remaining = 0
				c.entries++
				c.expirations++
				expired = true
				m.counts["lot expired"]++
			}
		}
		if expired {
			c.relevel(now)
			c.touched = true
		}
	}
}

func (m *ledgerModel) runLevels() {
	now := m.now()
	m.logf("levels job")
	if err := m.app.Loyalty.RecomputeLevels(context.Background(), jobs.RecomputeLevels{}); err != nil {
		m.fatalf("levels job: %v", err)
	}
	for _, c := range m.customers {
		if c.level != points.Bronze {
			c.relevel(now)
			c.touched = true
		}
	}
	m.counts["levels job"]++
}

// checkRow compares a customer's row, and the counts and sums of its
// ledger, lots and level events, with the model. The ledger is append-only,
// so check reads each entry once, as it appears, and follows the chain of
// balances across checks, while these counts and sums, taken by the
// database, cover the whole ledger every time.
func (m *ledgerModel) checkRow(c *modelCustomer) {
	m.t.Helper()
	now := m.now()
	bal := c.balance()

	// The customer's row and its whole ledger, counted and summed by the
	// database in one statement.
	var (
		balance, debt, count, sum, lotCount, lotSum int64
		moves                                       int
		level, lifetime                             string
		salesCount, lastUnix                        int64
		hasLast                                     bool
	)
	err := m.db.SQL.QueryRow(`SELECT c.points_balance, c.points_debt, c.level, CAST(c.lifetime_value AS TEXT),
		c.sales_count, c.last_purchase_unix, c.last_purchase_at IS NOT NULL,
		(SELECT COUNT(*) FROM points_entries WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COALESCE(SUM(points), 0) FROM points_entries WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COUNT(*) FROM points_lots WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COALESCE(SUM(remaining), 0) FROM points_lots WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COUNT(*) FROM events WHERE tenant_id = c.tenant_id AND type = '`+outbox.CustomerLevelChanged+`' AND subject_id = c.id)
		FROM customers c WHERE c.id = $1`, c.id).Scan(&balance, &debt, &level, &lifetime, &salesCount, &lastUnix, &hasLast, &count, &sum, &lotCount, &lotSum, &moves)
	if err != nil {
		m.fatalf("reading %s: %v", c.id, err)
	}
	if balance != bal || balance < 0 || debt != c.debt {
		m.fatalf("%s: points_balance %d and debt %d, model %d and %d", c.id, balance, debt, bal, c.debt)
	}
	if level != string(c.level) {
		m.fatalf("%s: level %s, model %s (earned %d)", c.id, level, c.level, c.earned(now))
	}
	if lv, err := decimal.NewFromString(lifetime); err != nil || !lv.Equal(c.lifetime) {
		m.fatalf("%s: lifetime value %s, model %s", c.id, lifetime, c.lifetime)
	}
	// Purchases: counted once however often a sale was processed, less
	// those returned or cancelled whole.
	if n, last := c.purchases(); salesCount != n || hasLast != (n > 0) || n > 0 && lastUnix != last.Unix() || n == 0 && lastUnix != 0 {
		m.fatalf("%s: sales_count %d, last purchase %d (%v), model %d, %v", c.id, salesCount, lastUnix, hasLast, n, last)
	}
	if count != int64(c.entries) || sum != bal-c.debt {
		m.fatalf("%s: %d entries summing to %d, model %d summing to %d (balance less debt)", c.id, count, sum, c.entries, bal-c.debt)
	}
	if lotCount != int64(len(c.lots)) || lotSum != bal {
		m.fatalf("%s: %d lots holding %d, model %d holding %d", c.id, lotCount, lotSum, len(c.lots), bal)
	}
	if moves != c.levelMoves {
		m.fatalf("%s: %d level_changed events, model %d", c.id, moves, c.levelMoves)
	}
}

// check compares one customer's rows with the model: the row and sums of
// checkRow, then each new entry, each lot holding points, and Balance.
func (m *ledgerModel) check(c *modelCustomer) {
	m.t.Helper()
	m.checkRow(c)
	ctx := m.ctx(c) // the tenant's view: its filter uses the (tenant_id, customer_id, …) indexes
	now := m.now()
	bal := c.balance()

	// The entries written since the last check continue the chain.
	q := m.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(c.id)).Order(ent.Asc(pointsentry.FieldID))
	if c.seen.lastID != "" {
		q.Where(pointsentry.IDGT(c.seen.lastID))
	}
	entries, err := q.All(ctx)
	if err != nil {
		m.fatalf("entries of %s: %v", c.id, err)
	}
	for _, e := range entries {
		c.seen.count++
		c.seen.balance += e.Points
		if e.BalanceAfter-e.DebtAfter != c.seen.balance || e.BalanceAfter < 0 || e.DebtAfter < 0 {
			m.fatalf("%s: entry %d (%s %s %+d) has balance_after %d and debt_after %d, the running sum is %d",
				c.id, c.seen.count, e.ID, e.Kind, e.Points, e.BalanceAfter, e.DebtAfter, c.seen.balance)
		}
		if spends := e.Kind == pointsentry.KindDebit || (e.Kind == pointsentry.KindAdjustment && e.Points < 0); spends && (c.seen.debt > 0 || e.DebtAfter > 0) {
			m.fatalf("%s: entry %s spent points while %d were owed", c.id, e.ID, c.seen.debt)
		}
		c.seen.debt = e.DebtAfter
		if e.CreatedAt.Before(c.seen.createdAt) {
			m.fatalf("%s: entry %s is older than the entry before it", c.id, e.ID)
		}
		c.seen.lastID, c.seen.createdAt = e.ID, e.CreatedAt
		switch e.Kind {
		case pointsentry.KindCredit:
			if e.SourceKind == pointsentry.SourceKindSale {
				break // checked by sale
			}
			if e.SourceID == nil || c.credits[*e.SourceID].entryID != e.ID {
				m.fatalf("%s: credit %s of order %v, model %+v", c.id, e.ID, e.SourceID, c.credits[*e.SourceID])
			}
		case pointsentry.KindExpiration:
			if e.SourceID == nil || c.seen.expired[*e.SourceID] || e.Points >= 0 {
				m.fatalf("%s: a bad or second expiration of lot %v: %+v", c.id, e.SourceID, e)
			}
			c.seen.expired[*e.SourceID] = true
		default: // bonus, debit and adjustment entries are checked through the balance
		}
	}
	if c.seen.count != c.entries || c.seen.balance != bal-c.debt || len(c.seen.expired) != c.expirations {
		m.fatalf("%s: the chain has %d entries, %d expirations, ends at %d; model %d, %d, %d",
			c.id, c.seen.count, len(c.seen.expired), c.seen.balance, c.entries, c.expirations, bal-c.debt)
	}

	// The lots holding points are exactly the model's, each with what the
	// model says is left; all others are empty (their count is checked above).
	lots, err := m.db.Ent.PointsLot.Query().Where(pointslot.CustomerID(c.id), pointslot.RemainingGT(0)).
		Order(ent.Asc(pointslot.FieldID)).All(ctx)
	if err != nil {
		m.fatalf("lots of %s: %v", c.id, err)
	}
	var held []*modelLot
	for _, l := range c.lots {
		if l.remaining > 0 {
			held = append(held, l)
		}
	}
	if len(lots) != len(held) {
		m.fatalf("%s: %d lots hold points, model %d", c.id, len(lots), len(held))
	}
	for i, l := range lots {
		want := held[i]
		if l.EntryID != want.entryID || l.Points != want.points || l.Remaining != want.remaining || !l.ExpiresAt.Equal(want.expiresAt) {
			m.fatalf("%s: lot %s is {entry %s points %d remaining %d expires %s}, model {entry %s points %d remaining %d expires %s}",
				c.id, l.ID, l.EntryID, l.Points, l.Remaining, l.ExpiresAt.UTC(), want.entryID, want.points, want.remaining, want.expiresAt)
		}
		if c.seen.expired[l.ID] {
			m.fatalf("%s: lot %s expired with %d left", c.id, l.ID, l.Remaining)
		}
	}

	b, err := m.app.Loyalty.Balance(m.ctx(c), c.id)
	if err != nil {
		m.fatalf("balance of %s: %v", c.id, err)
	}
	var expiring int64
	for _, l := range held {
		if !l.expiresAt.After(now.Add(30 * 24 * time.Hour)) {
			expiring += l.remaining
		}
	}
	earned := c.earned(now)
	next, missing := "", int64(0)
	switch c.tenant.levelFor(earned) {
	case points.Bronze:
		next, missing = "silver", c.tenant.silver-earned
	case points.Silver:
		next, missing = "gold", c.tenant.gold-earned
	case points.Gold:
		next, missing = "diamond", c.tenant.diamond-earned
	case points.Diamond: // the top: no next level
	}
	if b.Customer.PointsBalance != bal || b.Customer.PointsDebt != c.debt || b.ExpiringPoints != expiring || b.EarnedLast12Months != earned ||
		string(b.NextLevel) != next || b.PointsToNextLevel != missing {
		m.fatalf("%s: Balance says balance %d, expiring %d, earned %d, next %q missing %d; model %d, %d, %d, %q, %d",
			c.id, b.Customer.PointsBalance, b.ExpiringPoints, b.EarnedLast12Months, b.NextLevel, b.PointsToNextLevel,
			bal, expiring, earned, next, missing)
	}
}

// checkAfterJobs checks every customer after the clock moved and the jobs
// ran: in full those a job changed and one more, the row and sums of the
// others (which no job may have changed).
func (m *ledgerModel) checkAfterJobs() {
	m.t.Helper()
	extra := m.customers[m.rng.IntN(len(m.customers))]
	for _, c := range m.customers {
		if c.touched || c == extra {
			m.check(c)
		} else {
			m.checkRow(c)
		}
		c.touched = false
	}
}

// checkGlobal looks at every customer at once: no order credited twice.
func (m *ledgerModel) checkGlobal() {
	m.t.Helper()
	rows, err := m.db.SQL.Query(`SELECT customer_id, source_id, COUNT(*) FROM points_entries
		WHERE kind = 'credit' GROUP BY customer_id, source_id HAVING COUNT(*) > 1`)
	if err != nil {
		m.fatalf("duplicate credits query: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var cust, order string
		var n int
		if err := rows.Scan(&cust, &order, &n); err != nil {
			m.fatalf("scan: %v", err)
		}
		m.fatalf("%s: order %s credited %d times", cust, order, n)
	}
	if err := rows.Err(); err != nil {
		m.fatalf("duplicate credits query: %v", err)
	}
}
