package loyalty_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

type concurrentEnv struct {
	app      *app.App
	db       *storage.DB
	ctx      context.Context
	customer string
}

func newConcurrentEnv(t *testing.T, db *storage.DB) *concurrentEnv {
	t.Helper()
	env := apptest.New(t, db)
	return &concurrentEnv{app: env.App, db: db, ctx: env.Ctx, customer: apptest.Customer(t, env.App, env.TenantID, 1)}
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
				jobErrs[i] = (app.New(&app.Config{DB: db, Clock: clock.Now})).Loyalty.ExpirePoints(context.Background(), jobs.ExpirePoints{})
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
