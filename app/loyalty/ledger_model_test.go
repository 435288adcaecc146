package loyalty_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

type modelTenant struct {
	id           string
	store        string // a store's code, for sales
	expiryMonths int
	zone         *time.Location // the programme's days: expiry and the level window
	rate         decimal.Decimal
	silver, gold int64
	diamond      int64
}

// expiry is when points credited at t expire: the local midnight that ends
// t's day, expiryMonths later.
func (t *modelTenant) expiry(at time.Time) time.Time {
	l := at.In(t.zone)
	return time.Date(l.Year(), l.Month()+time.Month(t.expiryMonths), l.Day()+1, 0, 0, 0, 0, t.zone).UTC()
}

// windowStart is where the 12 months of earnings that make a level at now
// begin: the local midnight of the same day a year before.
func (t *modelTenant) windowStart(now time.Time) time.Time {
	l := now.In(t.zone)
	return time.Date(l.Year()-1, l.Month(), l.Day(), 0, 0, 0, 0, t.zone)
}

func (t *modelTenant) levelFor(earned int64) points.Level {
	switch {
	case earned >= t.diamond:
		return points.Diamond
	case earned >= t.gold:
		return points.Gold
	case earned >= t.silver:
		return points.Silver
	}
	return points.Bronze
}

type modelLot struct {
	entryID   string // the credit or adjustment that opened it
	seq       int    // crediting order: the tie-break of equal expiries
	points    int64
	remaining int64
	expiresAt time.Time
}

type earning struct {
	at     time.Time
	points int64
}

// firstMove is what the first credit or debit of an order answered.
type firstMove struct {
	entryID      string
	points       int64
	balanceAfter int64
}

// modelOrder is a credited order: what it earned and what its reversals
// took back and refunded.
type modelOrder struct {
	amount   *decimal.Decimal
	earned   int64
	reversed int64
	refunded decimal.Decimal
}

// modelSale is a POS sale of a customer: its lines, what it earned and
// what its returns took back.
type modelSale struct {
	id, receipt    string
	soldAt         time.Time
	lines          []modelLine
	payable        decimal.Decimal
	earned         int64
	reversed       int64
	returnedAmount decimal.Decimal
	returns        map[string]string // return id sent → ret_… stored
}

type modelLine struct {
	price              decimal.Decimal
	quantity, returned int64
}

type modelCustomer struct {
	id          string
	cpf         string
	tenant      *modelTenant
	sales       []*modelSale
	lots        []*modelLot
	debt        int64                  // points owed: reversed after they were spent
	orders      map[string]*modelOrder // credited orders
	reversals   map[string]firstMove   // reversal id → its entry
	reversalIDs []string
	credits     map[string]firstMove // order id → its credit
	debits      map[string]firstMove // order id → its debit
	creditOrder []string             // credited orders, to pick duplicates from
	debitOrder  []string
	earnings    []earning // credit entries: what levels count
	level       points.Level
	levelMoves  int // customer.level_changed events
	lifetime    decimal.Decimal
	entries     int
	expirations int
	seen        seenLedger // what check has read of the ledger so far
	touched     bool       // a job changed, or may have changed, its rows
}

// seenLedger is the part of a customer's ledger the checks have read.
type seenLedger struct {
	lastID    string
	count     int
	balance   int64 // the running sum of the entries: balance less debt
	debt      int64
	createdAt time.Time
	expired   map[string]bool // lots with an expiration entry
}

func (c *modelCustomer) balance() int64 {
	var b int64
	for _, l := range c.lots {
		b += l.remaining
	}
	return b
}

// receive is a credit of n points reaching the customer: the debt is
// settled first; it returns what is left for the balance.
func (c *modelCustomer) receive(n int64) int64 {
	settled := min(n, c.debt)
	c.debt -= settled
	return n - settled
}

// takeBack is a reversal of n points: from the lots holding points, those
// expiring first first, as far as the balance goes, the rest owed. It
// returns what the balance gave.
func (c *modelCustomer) takeBack(n int64) int64 {
	taken := min(n, c.balance())
	var all []*modelLot
	for _, l := range c.lots {
		if l.remaining > 0 {
			all = append(all, l)
		}
	}
	slices.SortStableFunc(all, func(a, b *modelLot) int {
		if c := a.expiresAt.Compare(b.expiresAt); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for left := taken; left > 0; all = all[1:] {
		k := min(left, all[0].remaining)
		all[0].remaining -= k
		left -= k
	}
	c.debt += n - taken
	return taken
}

// live are the lots a debit may spend at now, those expiring first first,
// ties in crediting order.
func (c *modelCustomer) live(now time.Time) []*modelLot {
	var live []*modelLot
	for _, l := range c.lots {
		if l.remaining > 0 && l.expiresAt.After(now) {
			live = append(live, l)
		}
	}
	slices.SortStableFunc(live, func(a, b *modelLot) int {
		if c := a.expiresAt.Compare(b.expiresAt); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	return live
}

func (c *modelCustomer) liveSum(now time.Time) int64 {
	var s int64
	for _, l := range c.live(now) {
		s += l.remaining
	}
	return s
}

// earned is what the trailing 12 months hold at now.
func (c *modelCustomer) earned(now time.Time) int64 {
	since := c.tenant.windowStart(now)
	var s int64
	for _, e := range c.earnings {
		if !e.at.Before(since) {
			s += e.points
		}
	}
	return s
}

// relevel is what the ledger does after a credit or an expiration.
func (c *modelCustomer) relevel(now time.Time) {
	if to := c.tenant.levelFor(c.earned(now)); to != c.level {
		c.level = to
		c.levelMoves++
	}
}

// spend takes n points from the live lots; the caller checked they hold them.
func (c *modelCustomer) spend(now time.Time, n int64) {
	for _, l := range c.live(now) {
		take := min(l.remaining, n)
		l.remaining -= take
		n -= take
		if n == 0 {
			return
		}
	}
	panic("model: spend beyond the live lots")
}

// purchases are the customer's sales not returned or cancelled whole, and
// the latest one's date (zero without one).
func (c *modelCustomer) purchases() (n int64, last time.Time) {
	for _, sl := range c.sales {
		if sl.whole() {
			continue
		}
		n++
		if sl.soldAt.After(last) {
			last = sl.soldAt
		}
	}
	return n, last
}

// whole says every unit of the sale came back.
func (sl *modelSale) whole() bool {
	for _, l := range sl.lines {
		if l.returned < l.quantity {
			return false
		}
	}
	return true
}

type ledgerModel struct {
	t         *testing.T
	app       *app.App
	db        *storage.DB
	clock     *testclock.Clock
	rng       *rand.Rand
	seed      uint64
	step      int
	history   []string
	tenants   []*modelTenant
	customers []*modelCustomer
	lotSeq    int
	orderSeq  int
	counts    map[string]int
}

func (m *ledgerModel) now() time.Time { return m.clock.Now().UTC() }

func (m *ledgerModel) logf(format string, args ...any) {
	line := fmt.Sprintf("step %d @%s: ", m.step, m.now().Format(time.RFC3339Nano)) + fmt.Sprintf(format, args...)
	m.history = append(m.history, line)
	if len(m.history) > 40 {
		m.history = m.history[1:]
	}
}

func (m *ledgerModel) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("model mismatch at step %d (replay with %s=%d):\n  %s\nlast steps:\n  %s",
		m.step, envLedgerSeed, m.seed, fmt.Sprintf(format, args...), strings.Join(m.history, "\n  "))
}

func (m *ledgerModel) ctx(c *modelCustomer) context.Context {
	return viewer.TenantContext(context.Background(), c.tenant.id)
}

// points is a random points figure: mostly small, sometimes large enough to
// move a level at once.
func (m *ledgerModel) points() int64 {
	switch r := m.rng.IntN(10); {
	case r < 6:
		return 1 + m.rng.Int64N(300)
	case r < 9:
		return 1 + m.rng.Int64N(3000)
	default:
		return 1 + m.rng.Int64N(12000)
	}
}
