package app_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/worker"
)

// Environment variables of the model test: the seed of a run to replay, and
// how many steps to take.
const (
	envLedgerSeed  = "FIDELIZA_LEDGER_SEED"
	envLedgerSteps = "FIDELIZA_LEDGER_STEPS"
)

// brt is the zone the ledger's clock answers in, so any path that forgets
// to store UTC shows up as a mismatch on SQLite (times are text).
var brt = time.FixedZone("-03", -3*60*60)

// The model tenants' programme time zones: the default, and one a day apart
// from UTC's dates half the time.
var (
	saoPaulo = mustZone("America/Sao_Paulo")
	tokyo    = mustZone("Asia/Tokyo")
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// ledgerCPF makes the i-th valid CPF.
func ledgerCPF(i int) string {
	base := fmt.Sprintf("%09d", 100000000+i*7919)
	digit := func(s string, w int) byte {
		sum := 0
		for j := 0; j < len(s); j++ {
			sum += int(s[j]-'0') * (w - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d := base + string(digit(base, 10))
	return d + string(digit(d, 11))
}

func newLedgerCustomer(t testing.TB, a *app.App, tenantID string, i int) string {
	t.Helper()
	c, err := a.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tenantID), customers.CustomerInput{
		Name: opt.Of(fmt.Sprintf("Cliente %d", i)), Email: opt.Of(fmt.Sprintf("c%d@example.com", i)),
		CPF: opt.Of(ledgerCPF(i)),
	})
	require.NoError(t, err)
	return c.ID
}

func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}

// ---------------------------------------------------------------------------
// The model: what the ledger must hold, computed from the spec alone.

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

func (m *ledgerModel) credit(c *modelCustomer) {
	m.orderSeq++
	order := fmt.Sprintf("ord-%d", m.orderSeq)
	in := loyalty.CreditInput{CustomerID: c.id, OrderID: order}
	var want int64
	switch m.rng.IntN(10) {
	case 0: // an order too small to earn anything
		amount := decimal.New(m.rng.Int64N(60), -2)
		in.Amount = &amount
	case 1, 2, 3, 4:
		amount := decimal.New(m.rng.Int64N(800_000), -2)
		in.Amount = &amount
		want = amount.Mul(c.tenant.rate).Floor().IntPart()
	case 5: // points win over the amount, which still adds to the lifetime value
		amount := decimal.New(m.rng.Int64N(100_000), -2)
		p := m.points()
		in.Amount, in.Points, want = &amount, &p, p
	default:
		p := m.points()
		in.Points, want = &p, p
	}
	now := m.now()
	m.logf("credit %s %s points=%d amount=%v balance=%d", c.id, order, want, in.Amount, c.balance())
	mv, err := m.app.Loyalty.CreditPoints(m.ctx(c), in)
	if want == 0 {
		if errCode(err) != "validation_error" {
			m.fatalf("credit earning nothing: want validation_error, got %v", err)
		}
		m.counts["credit earning nothing"]++
		return
	}
	if err != nil {
		m.fatalf("credit: %v", err)
	}
	kept := c.receive(want)
	bal := c.balance() + kept
	e := mv.Entry
	if mv.Replayed || e.Points != want || e.BalanceAfter != bal || e.DebtAfter != c.debt || e.Kind != pointsentry.KindCredit ||
		e.ExpiresAt == nil || !e.ExpiresAt.Equal(c.tenant.expiry(now)) || !e.CreatedAt.Equal(now) {
		m.fatalf("credit answered %+v (replayed %v), want %d points, balance %d, expiry %s", e, mv.Replayed, want, bal, c.tenant.expiry(now))
	}
	m.openLot(c, e.ID, want, kept, now)
	c.credits[order] = firstMove{entryID: e.ID, points: want, balanceAfter: bal}
	c.orders[order] = &modelOrder{amount: in.Amount, earned: want, refunded: decimal.Zero}
	c.creditOrder = append(c.creditOrder, order)
	c.earnings = append(c.earnings, earning{at: now, points: want})
	if in.Amount != nil {
		c.lifetime = c.lifetime.Add(*in.Amount)
	}
	c.relevel(now)
	m.counts["credit"]++
}

func (m *ledgerModel) openLot(c *modelCustomer, entryID string, n, remaining int64, now time.Time) {
	m.lotSeq++
	c.lots = append(c.lots, &modelLot{entryID: entryID, seq: m.lotSeq, points: n, remaining: remaining,
		expiresAt: c.tenant.expiry(now)})
	c.entries++
}

func (m *ledgerModel) duplicateCredit(c *modelCustomer) {
	if len(c.creditOrder) == 0 {
		m.credit(c)
		return
	}
	order := c.creditOrder[m.rng.IntN(len(c.creditOrder))]
	first := c.credits[order]
	in := loyalty.CreditInput{CustomerID: c.id, OrderID: order}
	if m.rng.IntN(2) == 0 {
		p := m.points()
		in.Points = &p
	} else {
		// At least R$ 1: a repeat whose amount earns nothing is refused
		// (validation_error) before the replay is looked up.
		amount := decimal.New(100+m.rng.Int64N(500_000), -2)
		in.Amount = &amount
	}
	m.logf("duplicate credit %s %s (first %s)", c.id, order, first.entryID)
	mv, err := m.app.Loyalty.CreditPoints(m.ctx(c), in)
	if err != nil {
		m.fatalf("duplicate credit: %v", err)
	}
	if !mv.Replayed || mv.Entry.ID != first.entryID || mv.Entry.Points != first.points || mv.Entry.BalanceAfter != first.balanceAfter {
		m.fatalf("duplicate credit answered %+v (replayed %v), want the first result %+v", mv.Entry, mv.Replayed, first)
	}
	m.counts["duplicate credit"]++
}

// debitAmount picks an amount around what the customer can spend, often
// exactly at the edge.
func (m *ledgerModel) debitAmount(c *modelCustomer) int64 {
	live, bal := c.liveSum(m.now()), c.balance()
	switch m.rng.IntN(8) {
	case 0:
		return max(live, 1)
	case 1:
		return live + 1
	case 2:
		return max(bal, 1) // more than the live lots when some wait for the expiry job
	default:
		return 1 + m.rng.Int64N(max(live*9/8, 5))
	}
}

func (m *ledgerModel) debit(c *modelCustomer) {
	in := loyalty.DebitInput{CustomerID: c.id, Points: m.debitAmount(c), Reason: "resgate"}
	if m.rng.IntN(3) == 0 {
		if len(c.debitOrder) > 0 && m.rng.IntN(3) == 0 {
			order := c.debitOrder[m.rng.IntN(len(c.debitOrder))]
			first := c.debits[order]
			in.OrderID = &order
			m.logf("duplicate debit %s %s points=%d (first %s)", c.id, order, in.Points, first.entryID)
			mv, err := m.app.Loyalty.DebitPoints(m.ctx(c), in)
			if err != nil {
				m.fatalf("duplicate debit: %v", err)
			}
			if !mv.Replayed || mv.Entry.ID != first.entryID || mv.Entry.Points != first.points {
				m.fatalf("duplicate debit answered %+v (replayed %v), want the first %+v", mv.Entry, mv.Replayed, first)
			}
			m.counts["duplicate debit"]++
			return
		}
		m.orderSeq++
		order := fmt.Sprintf("dbt-%d", m.orderSeq)
		in.OrderID = &order
	}
	mv := m.take(c, "debit", in.Points, func() (*loyalty.PointsMovement, error) { return m.app.Loyalty.DebitPoints(m.ctx(c), in) })
	if mv != nil && in.OrderID != nil {
		c.debits[*in.OrderID] = firstMove{entryID: mv.Entry.ID, points: mv.Entry.Points, balanceAfter: mv.Entry.BalanceAfter}
		c.debitOrder = append(c.debitOrder, *in.OrderID)
	}
}

// take runs a debit or a negative adjustment of n points and checks it
// against the model: spent first-expiring-first, or insufficient_points.
func (m *ledgerModel) take(c *modelCustomer, what string, n int64, call func() (*loyalty.PointsMovement, error)) *loyalty.PointsMovement {
	now := m.now()
	live := c.liveSum(now)
	m.logf("%s %s points=%d balance=%d live=%d", what, c.id, n, c.balance(), live)
	mv, err := call()
	if live < n || c.debt > 0 {
		if errCode(err) != "insufficient_points" {
			m.fatalf("%s of %d with %d live points and a debt of %d: want insufficient_points, got %v", what, n, live, c.debt, err)
		}
		if c.debt > 0 {
			m.counts[what+" while owing"]++
		} else {
			m.counts[what+" insufficient"]++
		}
		return nil
	}
	if err != nil {
		m.fatalf("%s: %v", what, err)
	}
	bal := c.balance() - n
	if mv.Replayed || mv.Entry.Points != -n || mv.Entry.BalanceAfter != bal || !mv.Entry.CreatedAt.Equal(now) {
		m.fatalf("%s answered %+v, want %d points and balance %d", what, mv.Entry, -n, bal)
	}
	c.spend(now, n)
	c.entries++
	m.counts[what]++
	return mv
}

func (m *ledgerModel) adjust(c *modelCustomer) {
	if m.rng.IntN(2) == 0 {
		n := m.points()
		now := m.now()
		m.logf("adjust +%d %s balance=%d", n, c.id, c.balance())
		mv, err := m.app.Loyalty.AdjustPoints(m.ctx(c), loyalty.AdjustInput{CustomerID: c.id, Points: n, Reason: "correção"})
		if err != nil {
			m.fatalf("adjust +%d: %v", n, err)
		}
		kept := c.receive(n)
		if mv.Entry.Points != n || mv.Entry.BalanceAfter != c.balance()+kept || mv.Entry.DebtAfter != c.debt || mv.Entry.Kind != pointsentry.KindAdjustment {
			m.fatalf("adjust answered %+v", mv.Entry)
		}
		m.openLot(c, mv.Entry.ID, n, kept, now)
		c.relevel(now) // a credit re-reads the level, adjustments included
		m.counts["adjust +"]++
		return
	}
	n := m.debitAmount(c)
	m.take(c, "adjust -", n, func() (*loyalty.PointsMovement, error) {
		return m.app.Loyalty.AdjustPoints(m.ctx(c), loyalty.AdjustInput{CustomerID: c.id, Points: -n, Reason: "estorno"})
	})
}

// reverse refunds a credited order, whole or in part (sometimes more than
// is left), or repeats an earlier reversal.
func (m *ledgerModel) reverse(c *modelCustomer) {
	if len(c.reversalIDs) > 0 && m.rng.IntN(5) == 0 {
		id := c.reversalIDs[m.rng.IntN(len(c.reversalIDs))]
		first := c.reversals[id]
		m.logf("duplicate reversal %s %s (first %s)", c.id, id, first.entryID)
		// What the repeat sends does not matter: the first result is answered.
		order := c.creditOrder[m.rng.IntN(len(c.creditOrder))]
		mv, err := m.app.Loyalty.ReversePoints(m.ctx(c), loyalty.ReverseInput{CustomerID: c.id, OrderID: order, ReversalID: id, Reason: "de novo"})
		if err != nil || !mv.Replayed || mv.Entry.ID != first.entryID || mv.Entry.Points != first.points {
			m.fatalf("duplicate reversal answered %+v, %v; want the first %+v", mv, err, first)
		}
		m.counts["duplicate reversal"]++
		return
	}
	if len(c.creditOrder) == 0 {
		m.credit(c)
		return
	}
	order := c.creditOrder[m.rng.IntN(len(c.creditOrder))]
	o := c.orders[order]
	m.orderSeq++
	in := loyalty.ReverseInput{CustomerID: c.id, OrderID: order, ReversalID: fmt.Sprintf("rev-%d", m.orderSeq), Reason: "estorno"}
	var pts int64
	var refund *decimal.Decimal
	refused := false
	if o.amount == nil || m.rng.IntN(3) == 0 {
		refused = o.reversed >= o.earned && (o.amount == nil || !o.refunded.LessThan(*o.amount))
		if o.amount != nil {
			rest := o.amount.Sub(o.refunded)
			refund = &rest
		}
		pts = o.earned - o.reversed
	} else {
		left := o.amount.Sub(o.refunded)
		a := decimal.New(1+m.rng.Int64N(max(left.Shift(2).IntPart()*9/8, 2)), -2)
		in.Amount = &a
		if refused = a.GreaterThan(left); !refused {
			refund = &a
			var target int64
			if paid := o.amount.Floor(); paid.IsPositive() {
				target = min(o.earned, decimal.NewFromInt(o.earned).Mul(left.Sub(a).Floor()).Div(paid).Floor().IntPart())
			}
			pts = max(o.earned-o.reversed-target, 0)
		}
	}
	now := m.now()
	m.logf("reverse %s %s amount=%v points=%d balance=%d debt=%d", c.id, order, in.Amount, pts, c.balance(), c.debt)
	mv, err := m.app.Loyalty.ReversePoints(m.ctx(c), in)
	if refused {
		if errCode(err) != "validation_error" {
			m.fatalf("reversal beyond the order: want validation_error, got %v", err)
		}
		m.counts["reverse refused"]++
		return
	}
	if err != nil {
		m.fatalf("reverse: %v", err)
	}
	taken := c.takeBack(pts)
	e := mv.Entry
	if mv.Replayed || e.Kind != pointsentry.KindReversal || e.Points != -pts || e.BalanceAfter != c.balance() || e.DebtAfter != c.debt {
		m.fatalf("reverse answered %+v, want %d points, balance %d, debt %d", e, -pts, c.balance(), c.debt)
	}
	o.reversed += pts
	if refund != nil {
		o.refunded = o.refunded.Add(*refund)
		c.lifetime = decimal.Max(c.lifetime.Sub(*refund), decimal.Zero)
	}
	c.earnings = append(c.earnings, earning{at: now, points: -pts})
	c.relevel(now)
	c.entries++
	c.reversals[in.ReversalID] = firstMove{entryID: e.ID, points: e.Points, balanceAfter: e.BalanceAfter}
	c.reversalIDs = append(c.reversalIDs, in.ReversalID)
	m.counts["reverse"]++
	if pts > taken {
		m.counts["reverse into debt"]++
	}
}

// sale registers a POS sale of the customer and processes it as the worker
// does: the points it earns settle a debt first, the rest opens a lot.
func (m *ledgerModel) sale(c *modelCustomer) {
	m.orderSeq++
	sl := &modelSale{receipt: strconv.Itoa(m.orderSeq), returnedAmount: decimal.Zero, returns: map[string]string{}}
	in := pos.SaleInput{Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: c.cpf, Type: "CPF"}, SaleID: sl.receipt,
		StoreID: c.tenant.store, PosID: "PDV-1", Channel: "LOJA"}
	total := decimal.Zero
	for i := range 1 + m.rng.IntN(3) {
		line := modelLine{price: decimal.New(50+m.rng.Int64N(30_000), -2), quantity: 1 + m.rng.Int64N(5)}
		qty := decimal.NewFromInt(line.quantity)
		in.Items = append(in.Items, pos.SaleItemInput{ID: strconv.Itoa(i + 1), GTIN: "7891000100103", Description: "Item",
			UnitPrice: &line.price, Quantity: &qty})
		total = total.Add(line.price.Mul(qty))
		sl.lines = append(sl.lines, line)
	}
	now := m.now()
	sl.payable = total
	in.Amount, in.AmountPayable, in.Date = &total, &total, &now
	in.Payments = []pos.SalePaymentInput{{ID: "1", Amount: &total, Method: "PIX"}}
	want := points.Earned(total, c.tenant.rate)
	m.logf("sale %s %s payable=%s points=%d balance=%d debt=%d", c.id, sl.receipt, total, want, c.balance(), c.debt)
	stored, err := m.app.POS.RegisterSale(m.ctx(c), in)
	if err != nil {
		m.fatalf("register sale: %v", err)
	}
	sl.id = stored.ID
	err = (&worker.ProcessSaleWorker{App: m.app}).Work(context.Background(), &river.Job[jobs.ProcessSale]{
		JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25}, Args: jobs.ProcessSale{TenantID: c.tenant.id, SaleID: stored.ID}})
	if err != nil {
		m.fatalf("process sale: %v", err)
	}
	c.lifetime = c.lifetime.Add(total)
	if want > 0 {
		e, err := m.db.Ent.PointsEntry.Query().Where(pointsentry.SourceKindEQ(pointsentry.SourceKindSale),
			pointsentry.SourceID(stored.ID), pointsentry.KindEQ(pointsentry.KindCredit)).Only(m.ctx(c))
		if err != nil {
			m.fatalf("the credit of sale %s: %v", stored.ID, err)
		}
		kept := c.receive(want)
		if e.Points != want || e.BalanceAfter != c.balance()+kept || e.DebtAfter != c.debt || !e.CreatedAt.Equal(now) {
			m.fatalf("sale credited %+v, want %d points, balance %d, debt %d", e, want, c.balance()+kept, c.debt)
		}
		m.openLot(c, e.ID, want, kept, now)
		c.earnings = append(c.earnings, earning{at: now, points: want})
		c.relevel(now)
	}
	sl.earned = want
	c.sales = append(c.sales, sl)
	m.counts["sale"]++
}

// saleReturn returns units of one of the customer's sales (sometimes more
// than remain), cancels what is left of it, or sends an earlier return
// again; each is applied as the worker does.
func (m *ledgerModel) saleReturn(c *modelCustomer) {
	if len(c.sales) == 0 {
		m.sale(c)
		return
	}
	sl := c.sales[m.rng.IntN(len(c.sales))]
	in := pos.SaleReturnInput{Protocol: "PARTNER_V1", SaleRef: sl.receipt, StoreID: c.tenant.store, Reason: "troca"}
	now := m.now()
	in.Date = &now
	if len(sl.returns) > 0 && m.rng.IntN(5) == 0 {
		for id, stored := range sl.returns {
			in.ID, in.Kind = id, "cancellation"
			m.logf("return %s of sale %s again", id, sl.receipt)
			ret, err := m.app.POS.RegisterSaleReturn(m.ctx(c), in)
			if err != nil || ret.ID != stored {
				m.fatalf("a return sent again answered %v, %v; want %s", ret, err, stored)
			}
			m.counts["return again"]++
			return
		}
	}
	m.orderSeq++
	in.ID = fmt.Sprintf("R-%d", m.orderSeq)
	returned := make([]int64, len(sl.lines))
	refused := false
	if m.rng.IntN(4) == 0 {
		in.Kind = "cancellation"
		refused = true
		for i, l := range sl.lines {
			returned[i] = l.quantity - l.returned
			refused = refused && returned[i] == 0
		}
	} else {
		in.Kind = "return"
		i := m.rng.IntN(len(sl.lines))
		l := sl.lines[i]
		q := 1 + m.rng.Int64N(l.quantity-l.returned+1)
		returned[i] = q
		refused = q > l.quantity-l.returned
		n := decimal.NewFromInt(q)
		in.Items = []pos.ReturnItemInput{{ID: strconv.Itoa(i + 1), Quantity: &n}}
	}
	m.logf("%s %s of sale %s %v balance=%d debt=%d", in.Kind, in.ID, sl.receipt, returned, c.balance(), c.debt)
	ret, err := m.app.POS.RegisterSaleReturn(m.ctx(c), in)
	if refused {
		if errCode(err) != "validation_error" {
			m.fatalf("a return of more than remains: want validation_error, got %v", err)
		}
		m.counts["return refused"]++
		return
	}
	if err != nil {
		m.fatalf("register return: %v", err)
	}
	err = (&worker.ProcessSaleReturnWorker{App: m.app}).Work(context.Background(), &river.Job[jobs.ProcessSaleReturn]{
		JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25}, Args: jobs.ProcessSaleReturn{TenantID: c.tenant.id, ReturnID: ret.ID}})
	if err != nil {
		m.fatalf("process return: %v", err)
	}
	amount, whole := decimal.Zero, true
	for i := range sl.lines {
		l := &sl.lines[i]
		l.returned += returned[i]
		amount = amount.Add(l.price.Mul(decimal.NewFromInt(returned[i])))
		whole = whole && l.returned == l.quantity
	}
	sl.returnedAmount = sl.returnedAmount.Add(amount)
	var keep int64
	if paid := sl.payable.Floor(); !whole && sl.earned > 0 && paid.IsPositive() {
		kept := decimal.Max(sl.payable.Sub(sl.returnedAmount), decimal.Zero).Floor()
		keep = min(sl.earned, decimal.NewFromInt(sl.earned).Mul(kept).Div(paid).Floor().IntPart())
	}
	pts := max(sl.earned-keep-sl.reversed, 0)
	sl.reversed += pts
	c.takeBack(pts)
	e, err := m.db.Ent.PointsEntry.Query().Where(pointsentry.SourceKindEQ(pointsentry.SourceKindReturn),
		pointsentry.SourceID(ret.ID)).Only(m.ctx(c))
	if err != nil {
		m.fatalf("the reversal of return %s: %v", ret.ID, err)
	}
	if e.Points != -pts || e.BalanceAfter != c.balance() || e.DebtAfter != c.debt {
		m.fatalf("return reversed %+v, want %d points, balance %d, debt %d", e, -pts, c.balance(), c.debt)
	}
	c.lifetime = decimal.Max(c.lifetime.Sub(amount), decimal.Zero)
	c.earnings = append(c.earnings, earning{at: now, points: -pts})
	c.relevel(now)
	c.entries++
	sl.returns[in.ID] = ret.ID
	m.counts[string(in.Kind)]++
}

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
	if err := m.app.Loyalty.ExpirePoints(context.Background()); err != nil {
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
	if err := m.app.Loyalty.RecomputeLevels(context.Background()); err != nil {
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
	)
	err := m.db.SQL.QueryRow(`SELECT c.points_balance, c.points_debt, c.level, CAST(c.lifetime_value AS TEXT),
		(SELECT COUNT(*) FROM points_entries WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COALESCE(SUM(points), 0) FROM points_entries WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COUNT(*) FROM points_lots WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COALESCE(SUM(remaining), 0) FROM points_lots WHERE tenant_id = c.tenant_id AND customer_id = c.id),
		(SELECT COUNT(*) FROM events WHERE tenant_id = c.tenant_id AND type = '`+outbox.CustomerLevelChanged+`' AND subject_id = c.id)
		FROM customers c WHERE c.id = $1`, c.id).Scan(&balance, &debt, &level, &lifetime, &count, &sum, &lotCount, &lotSum, &moves)
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

func ledgerSeed(t *testing.T) uint64 {
	if s := os.Getenv(envLedgerSeed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, envLedgerSeed)
		return seed
	}
	return 20260301
}

func ledgerSteps(t *testing.T) int {
	if s := os.Getenv(envLedgerSteps); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, envLedgerSteps)
		return n
	}
	if testing.Short() {
		return 300
	}
	if raceEnabled() {
		// The race detector instruments the SQLite engine (transpiled C) and
		// makes every statement about ten times slower, and this test runs
		// in one goroutine, so it has no races to find: a shorter walk keeps
		// the -race suite within a minute. Plain runs take the full walk.
		return 500
	}
	return 2000
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// TestLedgerModel drives random credits, duplicate credits, debits,
// adjustments, refunds (reversals, whole or partial, repeated), POS sales
// and their returns and cancellations (some beyond what remains, some sent
// again), clock moves and expiry runs against an in-memory model of the
// spec, and compares every row after every step: the balance less the debt
// is the sum of the ledger, the balance is the sum of the lots and never
// negative, nothing is spent while a debt is open and credits settle it
// first, an order is credited once, each return is applied once, and
// debits, reversals and expirations take exactly the points the model
// takes, those expiring first first.
func TestLedgerModel(t *testing.T) {
	t.Parallel()
	seed, steps := ledgerSeed(t), ledgerSteps(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		t.Logf("seed %d (%s to replay), %d steps", seed, envLedgerSeed, steps)
		started := time.Now()
		// A month end, so that adding months normalises dates (Jan 31 + 1 month).
		clock := testclock.NewStored(time.Date(2025, 1, 31, 23, 30, 0, 123456000, time.UTC), brt)
		a := app.New(&app.Config{DB: db, Clock: clock.Now})
		m := &ledgerModel{
			t: t, app: a, db: db, clock: clock, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), seed: seed,
			counts: map[string]int{},
		}
		sys := viewer.SystemContext(context.Background())
		settings := []modelTenant{
			{expiryMonths: 12, zone: saoPaulo, rate: decimal.NewFromInt(1), silver: 1000, gold: 5000, diamond: 20000}, // the defaults
			{expiryMonths: 2, zone: tokyo, rate: decimal.RequireFromString("1.5"), silver: 300, gold: 2000, diamond: 8000},
		}
		for i := range settings {
			mt := settings[i]
			tn, err := a.Backoffice.CreateTenant(sys, fmt.Sprintf("Loja %d", i), nil)
			require.NoError(t, err)
			if i > 0 {
				tn, err = db.Ent.Tenant.UpdateOneID(tn.ID).SetPointsExpiryMonths(mt.expiryMonths).SetPointsPerReal(mt.rate).SetTimeZone(mt.zone.String()).
					SetSilverThreshold(mt.silver).SetGoldThreshold(mt.gold).SetDiamondThreshold(mt.diamond).Save(sys)
				require.NoError(t, err)
			}
			require.Equal(t, mt.expiryMonths, tn.PointsExpiryMonths)
			require.True(t, mt.rate.Equal(tn.PointsPerReal))
			require.Equal(t, []int64{mt.silver, mt.gold, mt.diamond}, []int64{tn.SilverThreshold, tn.GoldThreshold, tn.DiamondThreshold})
			mt.id, mt.store = tn.ID, fmt.Sprintf("LOJA-%d", i)
			_, err = a.Backoffice.CreateStore(sys, tn.ID, mt.store, "Loja")
			require.NoError(t, err)
			m.tenants = append(m.tenants, &mt)
			for j := 0; j < 3; j++ {
				cpf := ledgerCPF(len(m.customers))
				id := newLedgerCustomer(t, a, tn.ID, len(m.customers))
				m.customers = append(m.customers, &modelCustomer{id: id, cpf: cpf, tenant: &mt, credits: map[string]firstMove{},
					orders: map[string]*modelOrder{}, reversals: map[string]firstMove{},
					debits: map[string]firstMove{}, level: points.Bronze, lifetime: decimal.Zero,
					seen: seenLedger{expired: map[string]bool{}}})
			}
		}

		for m.step = 1; m.step <= steps; m.step++ {
			c := m.customers[m.rng.IntN(len(m.customers))]
			r := m.rng.IntN(100)
			switch {
			case r < 28:
				m.credit(c)
			case r < 34:
				m.duplicateCredit(c)
			case r < 41:
				m.reverse(c)
			case r < 45:
				m.sale(c)
			case r < 49:
				m.saleReturn(c)
			case r < 63:
				m.debit(c)
			case r < 75:
				m.adjust(c)
			case r < 92:
				m.advance()
				if m.rng.IntN(4) > 0 {
					m.runExpiry()
				}
				if m.rng.IntN(4) == 0 {
					m.runLevels()
				}
			default:
				m.runExpiry()
			}
			if r < 75 {
				m.check(c)
			} else {
				m.checkAfterJobs()
			}
			if m.step%100 == 0 {
				for _, c := range m.customers {
					m.check(c)
				}
				m.checkGlobal()
			}
		}
		m.checkGlobal()
		for _, c := range m.customers {
			m.check(c)
		}
		levels := map[points.Level]int{}
		for _, c := range m.customers {
			levels[c.level]++
			m.counts["level moves"] += c.levelMoves
		}
		t.Logf("%d steps in %s, clock %s → %s; %v; final levels %v", steps, time.Since(started).Round(time.Millisecond),
			"2025-01-31", m.now().Format(time.DateOnly), m.counts, levels)
		// The run must have exercised what it claims to.
		for _, what := range []string{"credit", "duplicate credit", "debit", "debit insufficient", "adjust +", "adjust -", "lot expired",
			"duplicate debit", "reverse", "reverse into debt", "reverse refused", "duplicate reversal", "debit while owing",
			"sale", "return", "cancellation", "return refused", "return again"} {
			if steps >= 500 {
				require.Positive(t, m.counts[what], "the run never did %q", what)
			}
		}
	})
}

// ---------------------------------------------------------------------------
// Concurrency.

type concurrentEnv struct {
	app      *app.App
	db       *storage.DB
	ctx      context.Context
	customer string
}

func newConcurrentEnv(t *testing.T, db *storage.DB) *concurrentEnv {
	t.Helper()
	a := app.New(&app.Config{DB: db})
	tn, err := a.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), "Loja", nil)
	require.NoError(t, err)
	return &concurrentEnv{app: a, db: db, ctx: viewer.TenantContext(context.Background(), tn.ID),
		customer: newLedgerCustomer(t, a, tn.ID, 1)}
}

// ledgerSums reads the customer's balance, the sum of its entries and the
// sum of its lots straight from the tables.
func (e *concurrentEnv) ledgerSums(t *testing.T) (balance, entries, lots int64) {
	t.Helper()
	require.NoError(t, e.db.SQL.QueryRow(`SELECT points_balance FROM customers WHERE id = $1`, e.customer).Scan(&balance))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(points), 0) FROM points_entries WHERE customer_id = $1`, e.customer).Scan(&entries))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(remaining), 0) FROM points_lots WHERE customer_id = $1`, e.customer).Scan(&lots))
	return balance, entries, lots
}

// concurrently runs n calls of fn released together by a start barrier.
func concurrently(n int, fn func(i int) (*loyalty.PointsMovement, error)) ([]*loyalty.PointsMovement, []error) {
	start := make(chan struct{})
	out, errs := make([]*loyalty.PointsMovement, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i], errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return out, errs
}

// TestPointsConcurrentCreditOfOneOrder: 100 simultaneous credits of one
// order credit it once, and all answer with that one credit.
func TestPointsConcurrentCreditOfOneOrder(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newConcurrentEnv(t, db)
		started := time.Now()
		amount := decimal.RequireFromString("250.90")
		res, errs := concurrently(100, func(i int) (*loyalty.PointsMovement, error) {
			in := loyalty.CreditInput{CustomerID: e.customer, OrderID: "ord-1"}
			if i%2 == 0 {
				in.Amount = &amount
			} else {
				p := int64(250)
				in.Points = &p
			}
			return e.app.Loyalty.CreditPoints(e.ctx, in)
		})
		t.Logf("100 concurrent credits in %s", time.Since(started).Round(time.Millisecond))
		fresh := 0
		for i, err := range errs {
			require.NoError(t, err, "credit %d", i)
			require.Equal(t, res[0].Entry.ID, res[i].Entry.ID, "credit %d answered another entry", i)
			require.EqualValues(t, 250, res[i].Entry.Points)
			require.EqualValues(t, 250, res[i].Entry.BalanceAfter)
			if !res[i].Replayed {
				fresh++
			}
		}
		require.Equal(t, 1, fresh, "exactly one call credits; the others replay it")

		var credits, lots int
		require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM points_entries WHERE customer_id = $1 AND kind = 'credit' AND source_id = 'ord-1'`, e.customer).Scan(&credits))
		require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM points_lots WHERE customer_id = $1`, e.customer).Scan(&lots))
		require.Equal(t, 1, credits)
		require.Equal(t, 1, lots)
		balance, entries, lotSum := e.ledgerSums(t)
		require.Equal(t, []int64{250, 250, 250}, []int64{balance, entries, lotSum})
		// The lifetime value grows by the amount of the one credit that counted.
		cust, err := db.Ent.Customer.Query().Where(customer.ID(e.customer)).Only(e.ctx)
		require.NoError(t, err)
		want := decimal.Zero
		for _, r := range res {
			if !r.Replayed && r.Entry.Amount != nil {
				want = *r.Entry.Amount
			}
		}
		require.True(t, want.Equal(cust.LifetimeValue), "lifetime value %s, want %s", cust.LifetimeValue, want)
	})
}

// TestPointsConcurrentDebits: 50 simultaneous debits that together ask for
// more than the balance never take it below zero; exactly those the balance
// covers succeed, and the others are insufficient_points.
func TestPointsConcurrentDebits(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newConcurrentEnv(t, db)
		const initial, each, n = 1000, 30, 50      // 50 × 30 = 1500 > 1000
		for i, p := range []int64{400, 350, 250} { // three lots
			_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: fmt.Sprintf("ord-%d", i), Points: &p})
			require.NoError(t, err)
		}
		started := time.Now()
		res, errs := concurrently(n, func(i int) (*loyalty.PointsMovement, error) {
			in := loyalty.DebitInput{CustomerID: e.customer, Points: each, Reason: "resgate"}
			if i%3 == 0 {
				order := fmt.Sprintf("dbt-%d", i)
				in.OrderID = &order
			}
			if i%5 == 0 { // an operator's correction races the debits too
				return e.app.Loyalty.AdjustPoints(e.ctx, loyalty.AdjustInput{CustomerID: e.customer, Points: -each, Reason: "estorno"})
			}
			return e.app.Loyalty.DebitPoints(e.ctx, in)
		})
		t.Logf("%d concurrent debits in %s", n, time.Since(started).Round(time.Millisecond))
		successes := 0
		balances := map[int64]bool{}
		for i, err := range errs {
			if err != nil {
				require.Equal(t, "insufficient_points", errCode(err), "debit %d: %v", i, err)
				continue
			}
			successes++
			require.EqualValues(t, -each, res[i].Entry.Points)
			require.False(t, balances[res[i].Entry.BalanceAfter], "two debits left balance %d", res[i].Entry.BalanceAfter)
			balances[res[i].Entry.BalanceAfter] = true
		}
		// The debits are serialised per customer: each succeeds while the
		// balance covers it, so exactly floor(1000/30) succeed.
		require.Equal(t, initial/each, successes)
		require.LessOrEqual(t, successes*each, initial)
		balance, entries, lots := e.ledgerSums(t)
		require.EqualValues(t, initial-successes*each, balance)
		require.GreaterOrEqual(t, balance, int64(0))
		require.Equal(t, balance, entries, "the ledger sums to the balance")
		require.Equal(t, balance, lots, "the lots hold the balance")
		var debits, negative int
		require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM points_entries WHERE customer_id = $1 AND points < 0`, e.customer).Scan(&debits))
		require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM points_entries WHERE customer_id = $1 AND balance_after < 0`, e.customer).Scan(&negative))
		require.Equal(t, successes, debits)
		require.Zero(t, negative)
		// First-expiring first: the lots were credited in order at one
		// instant, so they are emptied in that order.
		lotRows, err := db.Ent.PointsLot.Query().Where(pointslot.CustomerID(e.customer)).Order(ent.Asc(pointslot.FieldID)).All(e.ctx)
		require.NoError(t, err)
		require.EqualValues(t, []int64{0, 0, 10}, []int64{lotRows[0].Remaining, lotRows[1].Remaining, lotRows[2].Remaining})
	})
}

// TestPointsConcurrentExpiryAndDebits: two expiry jobs (two worker
// processes) run while debits and credits go on; every lot expires once and
// the ledger still sums to the balance.
func TestPointsConcurrentExpiryAndDebits(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newConcurrentEnv(t, db)
		clock := testclock.NewStored(time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC), brt)
		e.app.Clock = clock.Now
		for i := range 20 {
			p := int64(100)
			_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: fmt.Sprintf("old-%d", i), Points: &p})
			require.NoError(t, err)
		}
		clock.Set(clock.Now().UTC().AddDate(0, 6, 0))
		for i := range 10 {
			p := int64(50)
			_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: fmt.Sprintf("new-%d", i), Points: &p})
			require.NoError(t, err)
		}
		clock.Set(clock.Now().UTC().AddDate(0, 6, 1)) // the 20 old lots have expired; the 10 new ones (500) live
		start := make(chan struct{})
		var wg sync.WaitGroup
		jobErrs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				jobErrs[i] = (app.New(&app.Config{DB: db, Clock: clock.Now})).Loyalty.ExpirePoints(context.Background())
			}()
		}
		var debitErrs []error
		var mu sync.Mutex
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var err error
				if i%4 == 0 {
					p := int64(10)
					_, err = e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: fmt.Sprintf("late-%d", i), Points: &p})
				} else {
					_, err = e.app.Loyalty.DebitPoints(e.ctx, loyalty.DebitInput{CustomerID: e.customer, Points: 40})
				}
				mu.Lock()
				debitErrs = append(debitErrs, err)
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range jobErrs {
			require.NoError(t, err)
		}
		ok := 0
		for _, err := range debitErrs {
			if err != nil {
				require.Equal(t, "insufficient_points", errCode(err), "%v", err)
				continue
			}
			ok++
		}
		var expirations int
		require.NoError(t, db.SQL.QueryRow(`SELECT COUNT(*) FROM points_entries WHERE customer_id = $1 AND kind = 'expiration'`, e.customer).Scan(&expirations))
		require.Equal(t, 20, expirations, "each old lot expires once")
		balance, entries, lots := e.ledgerSums(t)
		require.Equal(t, balance, entries)
		require.Equal(t, balance, lots)
		// 500 live points and 5 credits of 10; 15 debits of 40 ask 600. The
		// debits that find the balance covering them succeed: 12, or 13 when
		// enough credits came first.
		debits := ok - 5
		require.Contains(t, []int{12, 13}, debits)
		require.EqualValues(t, 550-debits*40, balance)
	})
}

// TestLedgerErrors: the errors the points operations answer.
func TestLedgerErrors(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newConcurrentEnv(t, db)
		_, err := e.app.Loyalty.DebitPoints(e.ctx, loyalty.DebitInput{CustomerID: e.customer, Points: 1})
		var ae *apperr.Error
		require.True(t, errors.As(err, &ae))
		require.Equal(t, apperr.KindInvalid, ae.Kind)
		require.Equal(t, "insufficient_points", ae.Code)
		require.Equal(t, "points", ae.Field)
		_, err = e.app.Loyalty.DebitPoints(e.ctx, loyalty.DebitInput{CustomerID: "cus_missing", Points: 1})
		require.Equal(t, "not_found", errCode(err))
		p := int64(5)
		_, err = e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: "cus_missing", OrderID: "o", Points: &p})
		require.Equal(t, "not_found", errCode(err))
		// Another tenant's customer is not found either.
		other, err := e.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), "Outra", nil)
		require.NoError(t, err)
		_, err = e.app.Loyalty.CreditPoints(viewer.TenantContext(context.Background(), other.ID), loyalty.CreditInput{CustomerID: e.customer, OrderID: "o", Points: &p})
		require.Equal(t, "not_found", errCode(err))
		balance, _, _ := e.ledgerSums(t)
		require.Zero(t, balance)
	})
}
