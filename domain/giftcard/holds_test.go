package giftcard_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestCardHolds: a card's hold counts against its balance (not against
// its customer's cashback), is placed for a card bound to no one without
// a customer and for a bound card only for its customer, is taken by a
// sale of anyone (its code paid) and spent once as one debit of the card
// (gift_card.redeemed), a second hold of the same sale refused; released
// holds count no more, and a rolled-back hold gives its debit back once.
func TestCardHolds(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		card := e.issue(t, 5000, false).Card
		place := func(session string, cents int64, customerID string) (*ent.WalletHold, bool, error) {
			return write2(e, func(c *ent.Client) (*ent.WalletHold, bool, error) {
				return e.cards.PlaceHold(e.ctx, c, wallet.Hold{CustomerID: customerID, Unit: wallet.GiftCard, CardID: card.ID,
					Channel: wallethold.ChannelPdv, Session: session, StoreCode: "LOJA-01", Cents: cents})
			})
		}
		h, replayed, err := place("caixa-1", 3000, "")
		require.NoError(t, err)
		require.False(t, replayed)
		require.Nil(t, h.CustomerID, "a card bound to no one: the hold names no customer")
		require.Equal(t, card.ID, *h.GiftCardID)
		again, replayed, err := place("caixa-1", 3000, "")
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, h.ID, again.ID)
		_, _, err = place("caixa-1", 2000, "")
		require.ErrorIs(t, err, wallet.ErrHoldSession)
		_, _, err = place("caixa-2", 2001, "")
		require.ErrorIs(t, err, giftcard.ErrInsufficient, "R$ 20.00 are left to hold")
		available, err := e.cards.Available(e.ctx, db.Ent, card)
		require.NoError(t, err)
		require.Equal(t, int64(2000), available)
		funds, err := wallet.Available(e.ctx, db.Ent, e.customer, wallet.Cashback, e.clock.Now())
		require.NoError(t, err)
		require.Equal(t, wallet.Funds{}, funds, "a card's hold is not the customer's cashback")

		till := ledger.HoldOwner{Channel: "pdv", Store: "LOJA-01"}
		w := wallet.Wallets{Dialect: db.Dialect, Now: e.clock.Now}
		sale := "sal_1"
		take := func(id string, cents int64) error {
			return db.InTx(e.ctx, func(tx storage.Tx) error {
				return w.TakeHold(e.ctx, tx.Ent, till, id, cents, customer.ID("cus_anyone"), &sale, nil)
			})
		}
		require.NoError(t, take(h.ID, 3000), "the code paid: any customer's sale takes it")
		spend := func(id string) (*giftcard.Result, error) {
			return write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.SpendHold(e.ctx, c, id, "paid sale 1") })
		}
		res, err := spend(h.ID)
		require.NoError(t, err)
		require.False(t, res.Replayed)
		require.Equal(t, int64(-3000), res.Entry.AmountCents)
		require.Equal(t, giftcardentry.SourceKindSale, res.Entry.SourceKind)
		require.Equal(t, sale, res.Entry.SourceID)
		res, err = spend(h.ID)
		require.NoError(t, err)
		require.True(t, res.Replayed, "spent once")
		require.Equal(t, int64(2000), e.balance(t, card.ID))
		require.Equal(t, 1, e.events(t, outbox.GiftCardRedeemed, card.ID))

		second, _, err := place("caixa-2", 500, "")
		require.NoError(t, err)
		require.NoError(t, take(second.ID, 500))
		_, err = spend(second.ID)
		require.ErrorIs(t, err, wallet.ErrSourceSpent, "a sale pays once with each card")

		refund := func(id string) (*giftcard.Result, error) {
			return write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.RefundHold(e.ctx, c, id, "rolled back") })
		}
		res, err = refund(h.ID)
		require.NoError(t, err)
		require.Equal(t, int64(3000), res.Entry.AmountCents)
		res, err = refund(h.ID)
		require.NoError(t, err)
		require.True(t, res.Replayed)
		require.Equal(t, int64(5000), e.balance(t, card.ID))

		_, err = write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Bind(e.ctx, c, card.ID, e.customer) })
		require.NoError(t, err)
		_, _, err = place("caixa-3", 100, "cus_other")
		require.ErrorIs(t, err, giftcard.ErrBoundToAnother)
		bound, _, err := place("caixa-3", 100, e.customer)
		require.NoError(t, err)
		require.Equal(t, e.customer, *bound.CustomerID)
		_, err = write(e, func(c *ent.Client) (*ent.WalletHold, error) { return w.ReleaseHold(e.ctx, c, till, bound.ID) })
		require.NoError(t, err)
	})
}

// write2 runs fn, of two answers, in a transaction.
func write2[T, U any](e *cardEnv, fn func(c *ent.Client) (T, U, error)) (T, U, error) {
	var t T
	var u U
	err := e.db.InTx(e.ctx, func(tx storage.Tx) error {
		var err error
		t, u, err = fn(tx.Ent)
		return err
	})
	return t, u, err
}

// TestCardConcurrentHolds: 40 holds of R$ 3.00 asked at once of a card of
// R$ 50.00 hold exactly what it covers (16), under the card's lock.
func TestCardConcurrentHolds(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		card := e.issue(t, 5000, false).Card
		var wg sync.WaitGroup
		var held, refused atomic.Int64
		for i := range 40 {
			wg.Go(func() {
				_, _, err := write2(e, func(c *ent.Client) (*ent.WalletHold, bool, error) {
					return e.cards.PlaceHold(e.ctx, c, wallet.Hold{Unit: wallet.GiftCard, CardID: card.ID,
						Channel: wallethold.ChannelPdv, Session: fmt.Sprintf("caixa-%d", i), Cents: 300})
				})
				switch {
				case err == nil:
					held.Add(1)
				case errors.Is(err, giftcard.ErrInsufficient):
					refused.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, [2]int64{16, 24}, [2]int64{held.Load(), refused.Load()})
		available, err := e.cards.Available(e.ctx, db.Ent, card)
		require.NoError(t, err)
		require.Equal(t, int64(5000-16*300), available)
	})
}
