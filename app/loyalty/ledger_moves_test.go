package loyalty_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/worker"
)

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
	sl.id, sl.soldAt = stored.ID, now
	// Sometimes the job runs twice (a retry after its commit): the sale
	// counts once.
	for range 1 + m.rng.IntN(2) {
		err = worker.For[jobs.ProcessSale](m.app).Work(context.Background(), &river.Job[jobs.ProcessSale]{
			JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25}, Args: jobs.ProcessSale{TenantID: c.tenant.id, SaleID: stored.ID}})
		if err != nil {
			m.fatalf("process sale: %v", err)
		}
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
	err = worker.For[jobs.ProcessSaleReturn](m.app).Work(context.Background(), &river.Job[jobs.ProcessSaleReturn]{
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
