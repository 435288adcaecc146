package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// ledgerEnv is a customer of a tenant with the default programme (points
// spendable at once, expiring after 12 months) and the ledger on a test
// clock.
type ledgerEnv struct {
	db       *storage.DB
	ctx      context.Context
	clock    *testclock.Clock
	ledger   ledger.Ledger
	customer string
}

func newLedgerEnv(t *testing.T, db *storage.DB) *ledgerEnv {
	t.Helper()
	clock := testclock.New(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	env := apptest.New(t, db, apptest.WithClock(clock.Now))
	return &ledgerEnv{db: db, ctx: env.Ctx, clock: clock, ledger: ledger.Ledger{Dialect: db.Dialect, Now: clock.Now},
		customer: apptest.Customer(t, env.App, env.TenantID, 1)}
}

// write runs fn in a transaction and returns its result.
func (e *ledgerEnv) write(t *testing.T, fn func(c *ent.Client) (*ledger.Result, error)) (*ledger.Result, error) {
	t.Helper()
	var r *ledger.Result
	err := e.db.InTx(e.ctx, func(tx storage.Tx) error {
		var err error
		r, err = fn(tx.Ent)
		return err
	})
	return r, err
}

// points reads the customer's balance and debt, and checks that balance −
// debt is the sum of its entries and the balance what its lots hold.
func (e *ledgerEnv) points(t *testing.T) (balance, debt int64) {
	t.Helper()
	c, err := e.db.Ent.Customer.Get(e.ctx, e.customer)
	require.NoError(t, err)
	var sum, lots int64
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(points), 0) FROM points_entries WHERE customer_id = $1`, e.customer).Scan(&sum))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(remaining), 0) FROM points_lots WHERE customer_id = $1`, e.customer).Scan(&lots))
	require.Equal(t, sum, c.PointsBalance-c.PointsDebt, "balance − debt is the ledger's sum")
	require.Equal(t, lots, c.PointsBalance, "the lots hold the balance")
	return c.PointsBalance, c.PointsDebt
}

// TestLedgerMovesPoints: a credit opens a lot and is written once per
// source; a debit takes no more than the balance; a reversal takes back
// what the balance holds and leaves the rest owed, which refuses debits
// until a credit settles it; expiry takes what a lot has left, once; and
// through it all balance − debt is the sum of the entries.
func TestLedgerMovesPoints(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newLedgerEnv(t, db)
		order := "PED-1"
		credit := func(c *ent.Client) (*ledger.Result, error) {
			return e.ledger.Credit(e.ctx, c, ledger.Credit{CustomerID: e.customer, Kind: pointsentry.KindCredit, Points: 100,
				SourceKind: pointsentry.SourceKindOrder, SourceID: &order, Reason: "compra"})
		}
		first, err := e.write(t, credit)
		require.NoError(t, err)
		require.False(t, first.Replayed)
		require.Equal(t, [2]int64{100, 100}, [2]int64{first.Entry.Points, first.Entry.BalanceAfter})
		require.Equal(t, e.clock.Now().AddDate(0, 12, 0).Year(), first.Entry.ExpiresAt.Year(), "a lot expiring after the tenant's 12 months")
		again, err := e.write(t, credit)
		require.NoError(t, err)
		require.True(t, again.Replayed, "one credit per source")
		require.Equal(t, first.Entry.ID, again.Entry.ID)

		debit := func(n int64) (*ledger.Result, error) {
			return e.write(t, func(c *ent.Client) (*ledger.Result, error) {
				return e.ledger.Debit(e.ctx, c, ledger.Debit{CustomerID: e.customer, Kind: pointsentry.KindDebit, Points: n,
					SourceKind: pointsentry.SourceKindOperator, Reason: "troca"})
			})
		}
		_, err = debit(101)
		require.ErrorIs(t, err, ledger.ErrInsufficient)
		_, err = debit(0)
		require.Error(t, err, "a debit takes points")
		d, err := debit(60)
		require.NoError(t, err)
		require.Equal(t, [2]int64{-60, 40}, [2]int64{d.Entry.Points, d.Entry.BalanceAfter})
		balance, debt := e.points(t)
		require.Equal(t, [2]int64{40, 0}, [2]int64{balance, debt})

		ret := "DEV-1"
		r, err := e.write(t, func(c *ent.Client) (*ledger.Result, error) {
			return e.ledger.Reverse(e.ctx, c, ledger.Reversal{CustomerID: e.customer, Points: 100,
				SourceKind: pointsentry.SourceKindReturn, SourceID: &ret, OrderID: &order, Reason: "devolução"})
		})
		require.NoError(t, err)
		require.Equal(t, [3]int64{-100, 0, 60}, [3]int64{r.Entry.Points, r.Entry.BalanceAfter, r.Entry.DebtAfter},
			"the 40 held taken back, the 60 spent owed")
		balance, debt = e.points(t)
		require.Equal(t, [2]int64{0, 60}, [2]int64{balance, debt})
		_, err = debit(1)
		require.ErrorIs(t, err, ledger.ErrDebtOpen)
		require.True(t, errors.Is(err, ledger.ErrInsufficient), "an open debt is a shortage")

		a, err := e.write(t, func(c *ent.Client) (*ledger.Result, error) {
			return e.ledger.Credit(e.ctx, c, ledger.Credit{CustomerID: e.customer, Kind: pointsentry.KindAdjustment, Points: 80,
				SourceKind: pointsentry.SourceKindOperator, Reason: "acerto"})
		})
		require.NoError(t, err)
		require.Equal(t, [2]int64{20, 0}, [2]int64{a.Entry.BalanceAfter, a.Entry.DebtAfter}, "the debt settled first")
		balance, debt = e.points(t)
		require.Equal(t, [2]int64{20, 0}, [2]int64{balance, debt})

		lots, err := db.Ent.PointsLot.Query().Where(pointslot.CustomerID(e.customer), pointslot.RemainingGT(0)).IDs(e.ctx)
		require.NoError(t, err)
		require.Len(t, lots, 1)
		expire := func() (*ledger.Result, error) {
			return e.write(t, func(c *ent.Client) (*ledger.Result, error) { return e.ledger.Expire(e.ctx, c, lots[0]) })
		}
		x, err := expire()
		require.NoError(t, err)
		require.Nil(t, x, "a lot expires when its time comes")
		e.clock.Set(e.clock.Now().AddDate(1, 0, 1))
		x, err = expire()
		require.NoError(t, err)
		require.Equal(t, [2]int64{-20, 0}, [2]int64{x.Entry.Points, x.Entry.BalanceAfter})
		require.Equal(t, pointsentry.KindExpiration, x.Entry.Kind)
		x, err = expire()
		require.NoError(t, err)
		require.Nil(t, x, "an expired lot expires once")
		balance, debt = e.points(t)
		require.Equal(t, [2]int64{0, 0}, [2]int64{balance, debt})

		_, err = e.write(t, func(c *ent.Client) (*ledger.Result, error) {
			_, err := ledger.LockCustomer(e.ctx, c, e.db.Dialect, "cus_missing")
			return nil, err
		})
		require.ErrorIs(t, err, ledger.ErrCustomerNotFound)
	})
}

// TestEarnedSince: a customer's earned points are its credits, bonuses and
// reversals from an instant on, not its debits or adjustments; the level
// thresholds are the tenant's.
func TestEarnedSince(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newLedgerEnv(t, db)
		before := e.clock.Now().Add(-time.Hour)
		for _, c := range []ledger.Credit{
			{Kind: pointsentry.KindCredit, Points: 300, SourceKind: pointsentry.SourceKindOrder},
			{Kind: pointsentry.KindBonus, Points: 50, SourceKind: pointsentry.SourceKindOrder},
			{Kind: pointsentry.KindAdjustment, Points: 1000, SourceKind: pointsentry.SourceKindOperator},
		} {
			c.CustomerID = e.customer
			_, err := e.write(t, func(cl *ent.Client) (*ledger.Result, error) { return e.ledger.Credit(e.ctx, cl, c) })
			require.NoError(t, err)
		}
		_, err := e.write(t, func(c *ent.Client) (*ledger.Result, error) {
			return e.ledger.Debit(e.ctx, c, ledger.Debit{CustomerID: e.customer, Kind: pointsentry.KindDebit, Points: 200,
				SourceKind: pointsentry.SourceKindOperator})
		})
		require.NoError(t, err)
		_, err = e.write(t, func(c *ent.Client) (*ledger.Result, error) {
			return e.ledger.Reverse(e.ctx, c, ledger.Reversal{CustomerID: e.customer, Points: 30, SourceKind: pointsentry.SourceKindReturn})
		})
		require.NoError(t, err)

		earned, err := ledger.EarnedSince(e.ctx, db.Ent, e.customer, before)
		require.NoError(t, err)
		require.Equal(t, int64(300+50-30), earned)
		earned, err = ledger.EarnedSince(e.ctx, db.Ent, e.customer, e.clock.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Zero(t, earned)

		c, err := db.Ent.Customer.Get(e.ctx, e.customer)
		require.NoError(t, err)
		tn, err := db.Ent.Tenant.Get(e.ctx, c.TenantID)
		require.NoError(t, err)
		require.Equal(t, points.Thresholds{Silver: 1000, Gold: 5000, Diamond: 20000}, ledger.Thresholds(tn))
	})
}
