package wallet_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// hold places a till's hold of cents under session at store LOJA-01.
func (e *walletEnv) hold(session string, cents int64) (*ent.WalletHold, bool, error) {
	var h *ent.WalletHold
	var replayed bool
	err := e.db.InTx(e.ctx, func(tx storage.Tx) error {
		var err error
		h, replayed, err = e.wallets.PlaceHold(e.ctx, tx.Ent, wallet.Hold{CustomerID: e.customer, Unit: wallet.Cashback,
			Channel: wallethold.ChannelPdv, Session: session, StoreCode: "LOJA-01", Cents: cents})
		return err
	})
	return h, replayed, err
}

// take has sale take hold id for owner, paying cents.
func (e *walletEnv) take(owner ledger.HoldOwner, id string, cents int64, sale string) error {
	return e.db.InTx(e.ctx, func(tx storage.Tx) error {
		return e.wallets.TakeHold(e.ctx, tx.Ent, owner, id, cents, customer.ID(e.customer), &sale, nil)
	})
}

// TestWalletHoldsAtTheTill: a till's hold reserves cents (the same session
// answers it, other cents under it are refused), counts against what may
// be held, is taken only by its own store's sale for its cents, spent once
// for the sale (cashback.spent), and a second hold of the same sale is
// refused; the refund gives the cents back once (cashback.refunded), and
// the wallet's invariants hold throughout.
func TestWalletHoldsAtTheTill(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		_, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(1000, "PED-0")) })
		require.NoError(t, err)

		h, replayed, err := e.hold("caixa-1", 600)
		require.NoError(t, err)
		require.False(t, replayed)
		again, replayed, err := e.hold("caixa-1", 600)
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, h.ID, again.ID)
		_, _, err = e.hold("caixa-1", 500)
		require.ErrorIs(t, err, wallet.ErrHoldSession)
		_, _, err = e.hold("caixa-2", 401)
		require.ErrorIs(t, err, wallet.ErrInsufficient, "R$ 4.00 are left to hold")
		second, _, err := e.hold("caixa-2", 400)
		require.NoError(t, err)
		funds, err := wallet.Available(e.ctx, db.Ent, e.customer, wallet.Cashback, e.clock.Now())
		require.NoError(t, err)
		require.Equal(t, wallet.Funds{Balance: 1000, Available: 0}, funds)

		till := ledger.HoldOwner{Channel: "pdv", Store: "LOJA-01"}
		require.ErrorIs(t, e.take(ledger.HoldOwner{Channel: "pdv", Store: "LOJA-02"}, h.ID, 600, "sal_1"), wallet.ErrHoldForeign)
		require.ErrorIs(t, e.take(ledger.HoldOwner{Channel: "ecommerce"}, h.ID, 600, "sal_1"), wallet.ErrHoldForeign)
		require.ErrorIs(t, e.take(till, h.ID, 599, "sal_1"), wallet.ErrHoldUnavailable, "another amount")
		require.NoError(t, e.take(till, h.ID, 600, "sal_1"))
		require.ErrorIs(t, e.take(till, h.ID, 600, "sal_1"), wallet.ErrHoldUnavailable, "taken once")

		spend := func(id string) (*wallet.Result, error) {
			return e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.SpendHold(e.ctx, c, id, "paid sale 1") })
		}
		r, err := spend(h.ID)
		require.NoError(t, err)
		require.False(t, r.Replayed)
		require.Equal(t, [3]any{walletentry.KindDebit, int64(-600), "sal_1"}, [3]any{r.Entry.Kind, r.Entry.AmountCents, *r.Entry.SourceID})
		require.Equal(t, walletentry.SourceKindSale, r.Entry.SourceKind)
		again2, err := spend(h.ID)
		require.NoError(t, err)
		require.True(t, again2.Replayed)
		require.Equal(t, r.Entry.ID, again2.Entry.ID)
		require.NoError(t, e.take(till, second.ID, 400, "sal_1"))
		_, err = spend(second.ID)
		require.ErrorIs(t, err, wallet.ErrSourceSpent, "a sale pays once with a wallet")
		balance, _, _ := e.cents(t)
		require.Equal(t, int64(400), balance)

		spent, err := db.Ent.Event.Query().Where(event.Type(outbox.CashbackSpent)).Only(e.ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"customer_id": e.customer, "entry_id": r.Entry.ID, "hold_id": h.ID, "wallet": "cashback",
			"amount": "6.00", "channel": "pdv", "store_code": "LOJA-01", "sale_id": "sal_1", "balance_after": "4.00"}, spent.Data)

		refund := func() (*wallet.Result, error) {
			return e.write(func(c *ent.Client) (*wallet.Result, error) {
				return e.wallets.RefundHold(e.ctx, c, h.ID, "sale cancelled")
			})
		}
		r, err = refund()
		require.NoError(t, err)
		require.Equal(t, [3]any{walletentry.KindRefund, int64(600), int64(1000)}, [3]any{r.Entry.Kind, r.Entry.AmountCents, r.Entry.BalanceAfterCents})
		again2, err = refund()
		require.NoError(t, err)
		require.True(t, again2.Replayed)
		require.Equal(t, r.Entry.ID, again2.Entry.ID)
		balance, pending, debt := e.cents(t)
		require.Equal(t, [3]int64{1000, 0, 0}, [3]int64{balance, pending, debt})
		n, err := db.Ent.Event.Query().Where(event.Type(outbox.CashbackRefunded)).Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

// TestWalletHoldLapses: an open hold counts for its 15 minutes and the
// grace after; then its cents are available again, ReleaseLapsed marks it
// released once, and a lapsed hold is taken by no sale.
func TestWalletHoldLapses(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		_, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(500, "PED-0")) })
		require.NoError(t, err)
		h, _, err := e.hold("caixa-1", 500)
		require.NoError(t, err)
		available := func() int64 {
			f, err := wallet.Available(e.ctx, db.Ent, e.customer, wallet.Cashback, e.clock.Now())
			require.NoError(t, err)
			return f.Available
		}
		release := func() int {
			var n int
			require.NoError(t, db.InTx(e.ctx, func(tx storage.Tx) error {
				var err error
				n, err = e.wallets.ReleaseLapsed(e.ctx, tx.Ent)
				return err
			}))
			return n
		}
		e.clock.Advance(ledger.HoldTTL + ledger.HoldGrace/2)
		require.Zero(t, available(), "held through its grace")
		require.Zero(t, release())
		require.ErrorIs(t, e.take(ledger.HoldOwner{Channel: "pdv"}, h.ID, 500, "sal_1"), wallet.ErrHoldUnavailable, "lapsed")
		e.clock.Advance(ledger.HoldGrace)
		require.Equal(t, int64(500), available())
		require.Equal(t, 1, release())
		require.Zero(t, release())
		h, err = db.Ent.WalletHold.Get(e.ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, wallethold.StatusReleased, h.Status)
	})
}

// TestWalletHoldExpiredWhileHeld: cents whose lot expires while they are
// held are not spent twice: the hold's debit takes what is left, here
// nothing, and the hold is spent with no entry.
func TestWalletHoldExpiredWhileHeld(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newWalletEnv(t, db)
		r, err := e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.Credit(e.ctx, c, e.move(500, "PED-0")) })
		require.NoError(t, err)
		expires := *r.Entry.ExpiresAt
		e.clock.Set(expires.Add(-5 * time.Minute))
		h, _, err := e.hold("caixa-1", 500)
		require.NoError(t, err)
		e.clock.Set(expires.Add(time.Minute))
		require.NoError(t, e.take(ledger.HoldOwner{Channel: "pdv"}, h.ID, 500, "sal_1"))
		r, err = e.write(func(c *ent.Client) (*wallet.Result, error) { return e.wallets.SpendHold(e.ctx, c, h.ID, "paid sale 1") })
		require.NoError(t, err)
		require.Nil(t, r.Entry, "the cents expired meanwhile")
		h, err = db.Ent.WalletHold.Get(e.ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, wallethold.StatusSpent, h.Status)
		balance, _, _ := e.cents(t)
		require.Equal(t, int64(500), balance, "the expiry job takes them")
	})
}
