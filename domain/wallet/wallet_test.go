package wallet_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/walletlot"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// walletEnv is a customer of a tenant with the default programme (credits
// spendable at once, expiring after 12 months) and the wallets on a test
// clock.
type walletEnv struct {
	db       *storage.DB
	ctx      context.Context
	clock    *testclock.Clock
	wallets  wallet.Wallets
	tenantID string
	customer string
}

func newWalletEnv(t *testing.T, db *storage.DB) *walletEnv {
	t.Helper()
	clock := testclock.New(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	env := apptest.New(t, db, apptest.WithClock(clock.Now))
	return &walletEnv{db: db, ctx: env.Ctx, clock: clock, wallets: wallet.Wallets{Dialect: db.Dialect, Now: clock.Now},
		tenantID: env.TenantID, customer: apptest.Customer(t, env.App, env.TenantID, 1)}
}

// write runs fn in a transaction and returns its result.
func (e *walletEnv) write(fn func(c *ent.Client) (*wallet.Result, error)) (*wallet.Result, error) {
	var r *wallet.Result
	err := e.db.InTx(e.ctx, func(tx storage.Tx) error {
		var err error
		r, err = fn(tx.Ent)
		return err
	})
	return r, err
}

func (e *walletEnv) move(cents int64, source string) wallet.Move {
	m := wallet.Move{CustomerID: e.customer, Unit: wallet.Cashback, Cents: cents, SourceKind: walletentry.SourceKindOrder, Reason: "test"}
	if source != "" {
		m.SourceID = &source
	}
	return m
}

// cents reads the wallet's balance, pending and debt, and checks the
// invariants: balance + pending is what the lots hold, and that less the
// debt is the sum of the entries.
func (e *walletEnv) cents(t *testing.T) (balance, pending, debt int64) {
	t.Helper()
	var sum, lots int64
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(amount_cents), 0) FROM wallet_entries WHERE customer_id = $1`, e.customer).Scan(&sum))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(remaining_cents), 0) FROM wallet_lots WHERE customer_id = $1`, e.customer).Scan(&lots))
	err := e.db.SQL.QueryRow(`SELECT balance_cents, pending_cents, debt_cents FROM wallets WHERE customer_id = $1`, e.customer).
		Scan(&balance, &pending, &debt)
	require.NoError(t, err)
	require.Equal(t, lots, balance+pending, "the lots hold the balance and the pending cents")
	require.Equal(t, sum, balance+pending-debt, "balance + pending − debt is the entries' sum")
	return balance, pending, debt
}

// TestWalletMovesCents: a credit opens a lot and is written once per
// source, with its cashback.credited event; a debit takes no more than the
// balance; a reversal takes back what the balance holds and owes the rest,
// which refuses debits until a credit settles it; expiry takes what a lot
// has left, once; and the invariants hold throughout.
func TestWalletMovesCents(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		credit := func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(1230, "PED-1")) }
		first, err := e.write(credit)
		require.NoError(t, err)
		require.False(t, first.Replayed)
		require.Equal(t, [2]int64{1230, 1230}, [2]int64{first.Entry.AmountCents, first.Entry.BalanceAfterCents})
		require.Equal(t, 2027, first.Entry.ExpiresAt.Year(), "a lot expiring after the programme's 12 months")
		require.Nil(t, first.Entry.PendingUntil)
		again, err := e.write(credit)
		require.NoError(t, err)
		require.True(t, again.Replayed, "one credit per source")
		require.Equal(t, first.Entry.ID, again.Entry.ID)
		events, err := db.Ent.Event.Query().Where().All(viewer.SystemContext(e.ctx))
		require.NoError(t, err)
		credited := 0
		for _, ev := range events {
			if ev.Type == "cashback.credited" {
				credited++
				require.Equal(t, "12.30", ev.Data["amount"])
			}
		}
		require.Equal(t, 1, credited, "cashback.credited once")

		debit := func(n int64, source string) (*wallet.Result, error) {
			return e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Debit(e.ctx, c, e.move(n, source)) })
		}
		_, err = debit(1231, "")
		require.ErrorIs(t, err, wallet.ErrInsufficient)
		_, err = debit(0, "")
		require.Error(t, err, "a debit takes cents")
		d, err := debit(730, "PED-2")
		require.NoError(t, err)
		require.Equal(t, [2]int64{-730, 500}, [2]int64{d.Entry.AmountCents, d.Entry.BalanceAfterCents})
		d2, err := debit(730, "PED-2")
		require.NoError(t, err)
		require.True(t, d2.Replayed, "one debit per source")
		balance, pending, debt := e.cents(t)
		require.Equal(t, [3]int64{500, 0, 0}, [3]int64{balance, pending, debt})

		ret := "DEV-1"
		r, err := e.write(func(c *ent.Client) (*wallet.Result, error) {
			m := e.move(1230, ret)
			m.SourceKind = walletentry.SourceKindReturn
			return e.wallets.Reverse(e.ctx, c, m)
		})
		require.NoError(t, err)
		require.Equal(t, [3]int64{-1230, 0, 730}, [3]int64{r.Entry.AmountCents, r.Entry.BalanceAfterCents, r.Entry.DebtAfterCents},
			"the R$ 5.00 held taken back, the R$ 7.30 spent owed")
		_, err = debit(1, "")
		require.ErrorIs(t, err, wallet.ErrDebtOpen)
		require.True(t, errors.Is(err, wallet.ErrInsufficient), "an open debt is a shortage")

		c, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(1000, "PED-3")) })
		require.NoError(t, err)
		require.Equal(t, [2]int64{270, 0}, [2]int64{c.Entry.BalanceAfterCents, c.Entry.DebtAfterCents}, "the debt settled first")
		balance, pending, debt = e.cents(t)
		require.Equal(t, [3]int64{270, 0, 0}, [3]int64{balance, pending, debt})

		lots, err := db.Ent.WalletLot.Query().Where(walletlot.CustomerID(e.customer), walletlot.RemainingCentsGT(0)).IDs(e.ctx)
		require.NoError(t, err)
		require.Len(t, lots, 1)
		expire := func() (*wallet.Result, error) {
			return e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Expire(e.ctx, c, lots[0]) })
		}
		x, err := expire()
		require.NoError(t, err)
		require.Nil(t, x, "a lot expires when its time comes")
		e.clock.Set(e.clock.Now().AddDate(1, 0, 1))
		x, err = expire()
		require.NoError(t, err)
		require.Equal(t, [2]int64{-270, 0}, [2]int64{x.Entry.AmountCents, x.Entry.BalanceAfterCents})
		require.Equal(t, walletentry.KindExpiration, x.Entry.Kind)
		x, err = expire()
		require.NoError(t, err)
		require.Nil(t, x, "an expired lot expires once")
		balance, pending, debt = e.cents(t)
		require.Equal(t, [3]int64{0, 0, 0}, [3]int64{balance, pending, debt})
	})
}

// TestWalletPendingRelease: with a pending period a credit waits, cannot be
// spent, is released at the programme's midnight (once), and a reversal
// inside the period takes pending cents first.
func TestWalletPendingRelease(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		require.NoError(t, db.Ent.Tenant.Update().Where(tenant.ID(e.tenantID)).SetPointsPendingDays(7).
			Exec(viewer.SystemContext(e.ctx)))
		for _, src := range []string{"PED-1", "PED-2"} {
			r, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(1000, src)) })
			require.NoError(t, err)
			require.NotNil(t, r.Entry.PendingUntil)
			require.Zero(t, r.Entry.BalanceAfterCents)
		}
		balance, pending, _ := e.cents(t)
		require.Equal(t, [2]int64{0, 2000}, [2]int64{balance, pending})
		_, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Debit(e.ctx, c, e.move(1, "")) })
		require.ErrorIs(t, err, wallet.ErrInsufficient, "pending cents are not spendable")

		_, err = e.write(func(c *ent.Client) (*wallet.Result, error) {
			m := e.move(400, "DEV-1")
			m.SourceKind = walletentry.SourceKindReturn
			return e.wallets.Reverse(e.ctx, c, m)
		})
		require.NoError(t, err)
		balance, pending, _ = e.cents(t)
		require.Equal(t, [2]int64{0, 1600}, [2]int64{balance, pending}, "a reversal in the period takes pending cents")

		lots, err := db.Ent.WalletLot.Query().Where(walletlot.CustomerID(e.customer)).IDs(e.ctx)
		require.NoError(t, err)
		release := func() {
			for _, id := range lots {
				require.NoError(t, e.db.InTx(e.ctx, func(tx storage.Tx) error { return e.wallets.Release(e.ctx, tx.Ent, id) }))
			}
		}
		release()
		balance, pending, _ = e.cents(t)
		require.Equal(t, [2]int64{0, 1600}, [2]int64{balance, pending}, "not released before its day")
		e.clock.Set(e.clock.Now().AddDate(0, 0, 8))
		release()
		release()
		balance, pending, _ = e.cents(t)
		require.Equal(t, [2]int64{1600, 0}, [2]int64{balance, pending}, "released once")
	})
}

// TestWalletConcurrentDebits: 50 debits of one customer at once, their sum
// well above the balance, spend exactly what it holds and never below zero.
func TestWalletConcurrentDebits(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		for i := range 3 {
			_, err := e.write(func(c *ent.Client) (*wallet.Result, error) {
				return e.wallets.Credit(e.ctx, c, e.move(1000, fmt.Sprintf("PED-%d", i)))
			})
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		spent, refused := int64(0), 0
		for i := range 50 {
			wg.Go(func() {
				_, err := e.write(func(c *ent.Client) (*wallet.Result, error) {
					return e.wallets.Debit(e.ctx, c, e.move(170, fmt.Sprintf("D-%d", i)))
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					spent += 170
				case errors.Is(err, wallet.ErrInsufficient):
					refused++
				default:
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(17*170), spent, "as many debits as the R$ 30.00 cover")
		require.Equal(t, 50-17, refused)
		balance, pending, debt := e.cents(t)
		require.Equal(t, [3]int64{3000 - 17*170, 0, 0}, [3]int64{balance, pending, debt})
	})
}
