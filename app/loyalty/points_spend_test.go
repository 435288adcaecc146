package loyalty_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// spendEnv is a tenant whose programme takes points at the till, with a
// store and one customer holding credited points.
type spendEnv struct {
	*concurrentEnv
	clock  *testclock.Clock
	cpf    string
	tenant string
}

func newSpendEnv(t *testing.T, db *storage.DB, balance int64) *spendEnv {
	t.Helper()
	clock := testclock.New(time.Now().UTC())
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithInlineSales(), apptest.WithTenant("Loja Pontos"),
		apptest.WithTenantSettings(backoffice.TenantSettings{
			PointsSpendChannels: &[]string{"pdv", "ecommerce"}, PointsSpendMaxShare: new(decimal.NewFromInt(1))}),
		apptest.WithStore("LOJA-01", "Loja Centro"))
	a := env.App
	e := &spendEnv{concurrentEnv: &concurrentEnv{app: a, db: db, ctx: env.Ctx,
		customer: apptest.Customer(t, a, env.TenantID, 1)}, clock: clock, cpf: apptest.CPF(1), tenant: env.TenantID}
	_, err := a.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: "seed", Points: &balance})
	require.NoError(t, err)
	return e
}

func (e *spendEnv) hold(session, amount string) (*ent.PointsHold, error) {
	h, _, err := e.app.POS.HoldPoints(e.ctx, pos.PointsHoldInput{SessionID: session,
		Customer: &pos.POSCustomer{ID: e.cpf, Type: "CPF"}, StoreID: "LOJA-01", Amount: new(decimal.RequireFromString(amount))})
	return h, err
}

// sale registers receipt paying points (R$) with hold and the rest by card.
func (e *spendEnv) sale(receipt, total, points, hold string) (*ent.Sale, error) {
	amount, paid := decimal.RequireFromString(total), decimal.RequireFromString(points)
	one := decimal.NewFromInt(1)
	soldAt := e.clock.Now().Add(-time.Second)
	pays := []pos.SalePaymentInput{{ID: "1", Amount: &paid, Method: pos.MethodPoints, HoldID: hold}}
	if rest := amount.Sub(paid); rest.IsPositive() {
		pays = append(pays, pos.SalePaymentInput{ID: "2", Amount: &rest, Method: "CREDIT_CARD"})
	}
	return e.app.POS.RegisterSale(e.ctx, pos.SaleInput{
		Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: e.cpf, Type: "CPF"}, SaleID: receipt,
		StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &amount, AmountPayable: &amount,
		Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &amount, Quantity: &one}},
		Payments: pays,
	})
}

// requireConsistent checks balance = lots = ledger, and that what is held
// stays within the balance.
func (e *spendEnv) requireConsistent(t *testing.T) (balance, held int64) {
	t.Helper()
	balance, entries, lots := e.ledgerSums(t)
	require.Equal(t, balance, entries, "balance = the ledger's sum")
	require.Equal(t, balance, lots, "balance = the lots' remaining points")
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(points), 0) FROM points_holds WHERE customer_id = $1 AND status IN ('open', 'taken')`,
		e.customer).Scan(&held))
	require.LessOrEqual(t, held, balance, "points held within the balance")
	return balance, held
}

// TestPointsHoldsNeverOverspend: 200 concurrent requests against one
// customer of 5,000 points, holds (R$ 1.00 = 100 points) and integrators'
// debits of 100 points mixed, never hold or debit more than the balance;
// the holds then paid by sales are debited once each, even with the sale
// sent twice and processed twice; balance = lots = ledger after.
func TestPointsHoldsNeverOverspend(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newSpendEnv(t, db, 5000)
		const n = 200
		holds := make([]*ent.PointsHold, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					holds[i], errs[i] = e.hold(fmt.Sprintf("s-%d", i), "1.00")
					return
				}
				_, errs[i] = e.app.Loyalty.DebitPoints(e.ctx, loyalty.DebitInput{CustomerID: e.customer, Points: 100})
			})
		}
		close(start)
		wg.Wait()
		var held, debited int
		for i, err := range errs {
			if err != nil {
				require.Equal(t, "insufficient_points", errCode(err), "request %d: %v", i, err)
				continue
			}
			if i%2 == 0 {
				held++
			} else {
				debited++
			}
		}
		require.Equal(t, 50, held+debited, "exactly the balance is held or debited")
		balance, heldPoints := e.requireConsistent(t)
		require.Equal(t, int64(5000-100*debited), balance)
		require.Equal(t, int64(100*held), heldPoints)

		// Each hold paid by a sale, sent twice and processed twice: one debit.
		var paid []string
		for i, h := range holds {
			if h == nil {
				continue
			}
			receipt := fmt.Sprint(1000 + i)
			s, err := e.sale(receipt, "10.00", "1.00", h.ID)
			require.NoError(t, err)
			again, err := e.sale(receipt, "10.00", "1.00", h.ID)
			require.NoError(t, err)
			require.Equal(t, s.ID, again.ID)
			paid = append(paid, s.ID)
		}
		sys := viewer.SystemContext(context.Background())
		for range 2 {
			for _, id := range paid {
				require.NoError(t, e.app.POS.ProcessSale(sys, jobs.ProcessSale{TenantID: e.tenant, SaleID: id}))
			}
		}
		spent, err := e.app.DB.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit),
			pointsentry.SourceKindEQ(pointsentry.SourceKindSale)).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, spent, held)
		balance, heldPoints = e.requireConsistent(t)
		require.Zero(t, heldPoints)
		// The sales earned points on what was not paid with points: R$ 9.00 each.
		require.Equal(t, int64(5000-100*debited-100*held+9*held), balance)
	})
}

// TestPointsHoldLapsesAndReleases: a hold's points are available again once
// it lapses (and its grace is over) or is released; a lapsed or released
// hold cannot pay a sale, and the upkeep marks lapsed holds released.
func TestPointsHoldLapsesAndReleases(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newSpendEnv(t, db, 1000)
		h, err := e.hold("a", "10.00") // every point
		require.NoError(t, err)
		require.Equal(t, int64(1000), h.Points)
		_, err = e.hold("b", "0.01")
		require.Equal(t, "insufficient_points", errCode(err))
		again, err := e.hold("a", "10.00") // the session asked again: the same hold
		require.NoError(t, err)
		require.Equal(t, h.ID, again.ID)

		e.clock.Advance(16 * time.Minute)
		_, err = e.sale("1", "20.00", "10.00", h.ID)
		require.Equal(t, "points_hold_unavailable", errCode(err), "a lapsed hold pays nothing")
		h2, err := e.hold("b", "10.00")
		require.NoError(t, err, "the lapsed hold's points are available again")
		released, err := e.app.POS.ReleasePointsHold(e.ctx, h2.ID)
		require.NoError(t, err)
		require.Equal(t, "released", released.Status.String())
		_, err = e.sale("2", "20.00", "10.00", h2.ID)
		require.Equal(t, "points_hold_unavailable", errCode(err), "a released hold pays nothing")
		_, err = e.hold("c", "10.00")
		require.NoError(t, err, "the released hold's points are available again")
		e.clock.Advance(time.Minute) // hold a's grace is over too: the upkeep marks it released
		require.NoError(t, e.app.Loyalty.ReleasePendingPoints(viewer.SystemContext(context.Background()), jobs.ReleasePendingPoints{}))
		lapsed, err := e.app.DB.Ent.PointsHold.Get(e.ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, "released", lapsed.Status.String())
		balance, held := e.requireConsistent(t)
		require.Equal(t, int64(1000), balance)
		require.Equal(t, int64(1000), held)
	})
}

// TestPointsPaymentRefusals: what a sale paying with points may not be.
func TestPointsPaymentRefusals(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newSpendEnv(t, db, 1000)
		h, err := e.hold("a", "5.00")
		require.NoError(t, err)
		amount, paid := decimal.RequireFromString("10.00"), decimal.RequireFromString("5.00")
		rest := amount.Sub(paid)
		one := decimal.NewFromInt(1)
		soldAt := e.clock.Now()
		base := func() pos.SaleInput {
			return pos.SaleInput{Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: e.cpf, Type: "CPF"}, SaleID: "7",
				StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &amount, AmountPayable: &amount,
				Items: []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &amount, Quantity: &one}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &paid, Method: "POINTS", HoldID: h.ID},
					{ID: "2", Amount: &rest, Method: "CASH"}}}
		}
		for _, c := range []struct {
			name, code string
			change     func(in *pos.SaleInput)
		}{
			{"offline", "points_payment_offline", func(in *pos.SaleInput) { in.Offline = true }},
			{"no hold", "points_hold_required", func(in *pos.SaleInput) { in.Payments[0].HoldID = "" }},
			{"another amount", "points_hold_unavailable", func(in *pos.SaleInput) {
				in.Payments[0].Amount, in.Payments[1].Amount = new(decimal.RequireFromString("4.00")), new(decimal.RequireFromString("6.00"))
			}},
			{"unknown hold", "points_hold_unavailable", func(in *pos.SaleInput) { in.Payments[0].HoldID = "phd_01J00000000000000000000000" }},
		} {
			in := base()
			c.change(&in)
			_, err := e.app.POS.RegisterSale(e.ctx, in)
			require.Equal(t, c.code, errCode(err), c.name)
		}
		_, err = e.app.POS.RegisterSale(e.ctx, base())
		require.NoError(t, err, "the hold was not taken by the refused sales")
	})
}

// orderHold holds the points that pay amount of an online order.
func (e *spendEnv) orderHold(order, amount string) (*loyalty.OrderHold, error) {
	return e.app.Loyalty.HoldOrderPoints(e.ctx, loyalty.OrderHoldInput{CustomerID: e.customer, OrderID: order,
		Amount: new(decimal.RequireFromString(amount)), OrderAmount: new(decimal.RequireFromString("100.00"))})
}

// TestOrderPointsCapturedOnce: an online order's hold captured by 50
// concurrent requests debits its points once, the points expiring first
// first; the others answer the same capture. Rolled back by 50 concurrent
// requests, the points come back once, as a refund; balance = lots =
// ledger throughout.
func TestOrderPointsCapturedOnce(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newSpendEnv(t, db, 300) // lot 1: 300 points
		later := int64(700)
		e.clock.Advance(time.Hour)
		_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: e.customer, OrderID: "seed-2", Points: &later})
		require.NoError(t, err)
		h, err := e.orderHold("PED-1", "5.00")
		require.NoError(t, err)
		require.Equal(t, int64(500), h.Hold.Points)
		again, err := e.orderHold("PED-1", "5.00")
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, h.Hold.ID, again.Hold.ID)
		_, err = e.orderHold("PED-2", "5.01")
		require.Equal(t, "insufficient_points", errCode(err), "the hold's points are not available")

		const n = 50
		run := func(op func() (*loyalty.OrderHold, error)) (firsts int, entries map[string]bool) {
			outs := make([]*loyalty.OrderHold, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() { <-start; outs[i], errs[i] = op() })
			}
			close(start)
			wg.Wait()
			entries = map[string]bool{}
			for i, out := range outs {
				require.NoError(t, errs[i], "request %d", i)
				if !out.Replayed {
					firsts++
				}
				require.NotNil(t, out.Entry)
				entries[out.Entry.ID] = true
			}
			return firsts, entries
		}
		firsts, entries := run(func() (*loyalty.OrderHold, error) {
			return e.app.Loyalty.CaptureOrderPoints(e.ctx, h.Hold.ID, loyalty.CaptureInput{OrderID: "PED-1",
				OrderAmount: new(decimal.RequireFromString("100.00"))})
		})
		require.Equal(t, 1, firsts, "one capture debits")
		require.Len(t, entries, 1, "every capture answers the one debit")
		debits, err := e.app.DB.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit)).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, debits, 1)
		require.Equal(t, int64(-500), debits[0].Points)
		require.Equal(t, "PED-1", *debits[0].SourceID)
		balance, held := e.requireConsistent(t)
		require.Equal(t, int64(500), balance)
		require.Zero(t, held)
		var first, second int64
		require.NoError(t, db.SQL.QueryRow(`SELECT SUM(CASE WHEN points = 300 THEN remaining ELSE 0 END),
			SUM(CASE WHEN points = 700 THEN remaining ELSE 0 END) FROM points_lots WHERE customer_id = $1`, e.customer).Scan(&first, &second))
		require.Equal(t, []int64{0, 500}, []int64{first, second}, "the points expiring first went first")

		firsts, entries = run(func() (*loyalty.OrderHold, error) {
			return e.app.Loyalty.RollbackOrderPoints(e.ctx, h.Hold.ID, "pedido cancelado")
		})
		require.Equal(t, 1, firsts, "one rollback gives back")
		require.Len(t, entries, 1)
		refunds, err := e.app.DB.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindRefund)).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, refunds, 1)
		require.Equal(t, int64(500), refunds[0].Points)
		balance, _ = e.requireConsistent(t)
		require.Equal(t, int64(1000), balance)
		_, err = e.app.Loyalty.CaptureOrderPoints(e.ctx, h.Hold.ID, loyalty.CaptureInput{OrderID: "PED-1",
			OrderAmount: new(decimal.RequireFromString("100.00"))})
		require.Equal(t, "points_hold_unavailable", errCode(err), "a hold rolled back is spent no more")
	})
}

// TestPointsShareByLevel: a level's own share of a sale payable with points
// replaces the programme's for its customers when a hold is placed and when
// the sale paying with it is registered; sent back to the programme's, the
// level's customers have the programme's share again; bronze has none of
// its own, and a share is 0 to 1.
func TestPointsShareByLevel(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newSpendEnv(t, db, 20000)
		cust, err := e.app.DB.Ent.Customer.Get(e.ctx, e.customer)
		require.NoError(t, err)
		require.NotEqual(t, customer.LevelBronze, cust.Level, "20,000 points earned raise the level")
		sys := viewer.SystemContext(context.Background())
		share := func(level customer.Level, v *decimal.Decimal) error {
			_, err := e.app.Backoffice.UpdateTenant(sys, e.tenant, backoffice.TenantSettings{PointsSpendMaxShare: new(decimal.RequireFromString("0.5")),
				PointsSpendMaxShareLevels: map[customer.Level]*decimal.Decimal{level: v}})
			return err
		}
		holdOf := func(session, amount, sale string) error {
			_, _, err := e.app.POS.HoldPoints(e.ctx, pos.PointsHoldInput{SessionID: session,
				Customer: &pos.POSCustomer{ID: e.cpf, Type: "CPF"}, StoreID: "LOJA-01",
				Amount: new(decimal.RequireFromString(amount)), SaleAmount: new(decimal.RequireFromString(sale))})
			return err
		}
		require.NoError(t, share(cust.Level, new(decimal.RequireFromString("0.8"))))
		for _, step := range []struct {
			name    string
			do      func() error
			refused string
		}{
			{"R$ 30 of a R$ 50 sale: within the level's 80%", func() error { return holdOf("a", "30.00", "50.00") }, ""},
			{"R$ 45 of a R$ 50 sale: beyond it", func() error { return holdOf("b", "45.00", "50.00") }, "points_over_share"},
			{"the sale paying R$ 30 of R$ 50 is registered", func() error {
				h, err := e.hold("c", "30.00")
				if err != nil {
					return err
				}
				_, err = e.sale("901", "50.00", "30.00", h.ID)
				return err
			}, ""},
			{"the level back to the programme's 50%", func() error { return share(cust.Level, nil) }, ""},
			{"R$ 30 of a R$ 50 sale: beyond the programme's share", func() error { return holdOf("d", "30.00", "50.00") }, "points_over_share"},
			{"a sale paying R$ 30 of R$ 50: beyond it", func() error {
				h, err := e.hold("e", "30.00")
				if err != nil {
					return err
				}
				_, err = e.sale("902", "50.00", "30.00", h.ID)
				return err
			}, "points_over_share"},
			{"bronze has the programme's share", func() error { return share(customer.LevelBronze, new(decimal.RequireFromString("0.8"))) }, "validation_error"},
			{"a share above 1", func() error { return share(customer.LevelGold, new(decimal.RequireFromString("1.5"))) }, "validation_error"},
		} {
			err := step.do()
			if step.refused == "" {
				require.NoError(t, err, step.name)
				continue
			}
			require.Error(t, err, step.name)
			require.Equal(t, step.refused, errCode(err), "%s: %v", step.name, err)
		}
		e.requireConsistent(t)
	})
}
