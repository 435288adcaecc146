package giftcard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// cardEnv is a tenant with a customer and the cards on a test clock.
type cardEnv struct {
	db       *storage.DB
	ctx      context.Context
	clock    *testclock.Clock
	cards    giftcard.Cards
	customer string
}

func newCardEnv(t *testing.T, db *storage.DB) *cardEnv {
	t.Helper()
	clock := testclock.New(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	env := apptest.New(t, db, apptest.WithClock(clock.Now))
	return &cardEnv{db: db, ctx: env.Ctx, clock: clock, cards: giftcard.Cards{Dialect: db.Dialect, Now: clock.Now},
		customer: apptest.Customer(t, env.App, env.TenantID, 1)}
}

// write runs fn in a transaction.
func write[T any](e *cardEnv, fn func(c *ent.Client) (T, error)) (T, error) {
	var out T
	err := e.db.InTx(e.ctx, func(tx storage.Tx) error {
		var err error
		out, err = fn(tx.Ent)
		return err
	})
	return out, err
}

// issue issues one card of cents expiring in a year, active or not.
func (e *cardEnv) issue(t *testing.T, cents int64, inactive bool) giftcard.Issued {
	t.Helper()
	got, err := write(e, func(c *ent.Client) ([]giftcard.Issued, error) {
		return e.cards.Issue(e.ctx, c, giftcard.Issue{Cents: cents, ExpiresAt: e.clock.Now().AddDate(1, 0, 0), Inactive: inactive}, 1)
	})
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0]
}

// balance reads a card's balance and checks it is the sum of its entries.
func (e *cardEnv) balance(t *testing.T, id string) int64 {
	t.Helper()
	var sum, balance int64
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(amount_cents), 0) FROM gift_card_entries WHERE gift_card_id = $1`, id).Scan(&sum))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT balance_cents FROM gift_cards WHERE id = $1`, id).Scan(&balance))
	require.Equal(t, sum, balance, "a card's balance is the sum of its entries")
	return balance
}

func (e *cardEnv) move(id string, cents int64, source string) giftcard.Move {
	return giftcard.Move{CardID: id, Cents: cents, SourceKind: giftcardentry.SourceKindOrder, SourceID: source, Reason: "test"}
}

// events counts the events of a type of a card.
func (e *cardEnv) events(t *testing.T, typ, card string) int {
	t.Helper()
	n, err := e.db.Ent.Event.Query().Where(event.Type(typ), event.SubjectID(card)).Count(e.ctx)
	require.NoError(t, err)
	return n
}

// TestCardMoves: each move of a card, its rule and its replay, in turn on
// one card; the balance stays the sum of the entries throughout.
func TestCardMoves(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		card := e.issue(t, 5000, true).Card.ID
		other := e.issue(t, 1000, false).Card.ID
		type op = func(c *ent.Client) (*giftcard.Result, error)
		load := func(cents int64, key string) op {
			return func(c *ent.Client) (*giftcard.Result, error) {
				m := e.move(card, cents, key)
				m.SourceKind = giftcardentry.SourceKindLoad
				return e.cards.Load(e.ctx, c, m)
			}
		}
		debit := func(cents int64, key string) op {
			return func(c *ent.Client) (*giftcard.Result, error) {
				return e.cards.Debit(e.ctx, c, e.move(card, cents, key))
			}
		}
		refund := func(cents int64, key string) op {
			return func(c *ent.Client) (*giftcard.Result, error) {
				m := e.move(card, cents, key)
				m.SourceKind = giftcardentry.SourceKindReturn
				return e.cards.Refund(e.ctx, c, m)
			}
		}
		activate := func(sale string) op {
			return func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Activate(e.ctx, c, card, sale) }
		}
		for _, s := range []struct {
			name     string
			op       op
			err      error
			replayed bool
			balance  int64
		}{
			{"an inactive card takes no debit", debit(100, "PED-0"), giftcard.ErrInactive, false, 0},
			{"nor a load", load(100, "L-0"), giftcard.ErrInactive, false, 0},
			{"its sale activates it", activate("sal_1"), nil, false, 5000},
			{"the same sale again is the first activation", activate("sal_1"), nil, true, 5000},
			{"another sale finds it active", activate("sal_2"), giftcard.ErrAlreadyActive, false, 5000},
			{"a partial redemption", debit(1230, "PED-1"), nil, false, 3770},
			{"the same order again is the first debit", debit(1230, "PED-1"), nil, true, 3770},
			{"never below zero", debit(3771, "PED-2"), giftcard.ErrInsufficient, false, 3770},
			{"the rest of it", debit(3770, "PED-2"), nil, false, 0},
			{"a refund of no more than was spent", refund(5001, "DEV-1"), giftcard.ErrRefundTooLarge, false, 0},
			{"a refund back to the card", refund(1230, "DEV-1"), nil, false, 1230},
			{"refunded once", refund(1230, "DEV-1"), nil, true, 1230},
			{"a reload", load(2000, "L-1"), nil, false, 3230},
			{"loaded once per key", load(2000, "L-1"), nil, true, 3230},
			{"up to the card's limit", load(giftcard.MaxBalanceCents, "L-2"), giftcard.ErrBalanceLimit, false, 3230},
		} {
			res, err := write(e, s.op)
			require.ErrorIs(t, err, s.err, s.name)
			if s.err == nil {
				require.Equal(t, s.replayed, res.Replayed, s.name)
				require.Equal(t, s.balance, res.Entry.BalanceAfterCents, s.name)
			}
			require.Equal(t, s.balance, e.balance(t, card), s.name)
		}
		got, err := db.Ent.GiftCard.Get(e.ctx, card)
		require.NoError(t, err)
		require.Equal(t, [3]int64{2000, 5000 - 1230, 3230}, [3]int64{got.LoadedCents, got.RedeemedCents, got.BalanceCents})
		for typ, n := range map[string]int{"gift_card.issued": 0, "gift_card.activated": 1, "gift_card.redeemed": 2,
			"gift_card.refunded": 1, "gift_card.loaded": 1} {
			require.Equal(t, n, e.events(t, typ, card), typ)
		}

		// Transfers: a bearer card's balance moves, once per key; a bound
		// card's does not.
		transfer := func(from, to string, cents int64, key string) (*giftcard.Transferred, error) {
			return write(e, func(c *ent.Client) (*giftcard.Transferred, error) {
				return e.cards.Transfer(e.ctx, c, giftcard.Transfer{FromID: from, ToID: to, Cents: cents, TransferID: key})
			})
		}
		_, err = transfer(card, card, 0, "T-0")
		require.ErrorIs(t, err, giftcard.ErrSameCard)
		tr, err := transfer(other, card, 400, "T-1")
		require.NoError(t, err)
		require.Equal(t, [2]int64{600, 3630}, [2]int64{tr.From.Card.BalanceCents, tr.To.Card.BalanceCents})
		tr, err = transfer(other, card, 400, "T-1")
		require.NoError(t, err)
		require.True(t, tr.Replayed)
		_, err = transfer(card, other, 1, "T-1")
		require.ErrorIs(t, err, giftcard.ErrTransferKeyReused)
		tr, err = transfer(other, card, 0, "T-2")
		require.NoError(t, err, "the whole balance")
		require.Equal(t, [2]int64{0, 4230}, [2]int64{tr.From.Card.BalanceCents, tr.To.Card.BalanceCents})
		_, err = transfer(other, card, 0, "T-3")
		require.ErrorIs(t, err, giftcard.ErrInsufficient, "nothing left to move")

		bind := func(id, customer string) (*giftcard.Result, error) {
			return write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Bind(e.ctx, c, id, customer) })
		}
		_, err = bind(card, "cus_00000000000000000000000000")
		require.ErrorIs(t, err, ledger.ErrCustomerNotFound)
		b, err := bind(card, e.customer)
		require.NoError(t, err)
		require.False(t, b.Replayed)
		b, err = bind(card, e.customer)
		require.NoError(t, err)
		require.True(t, b.Replayed)
		_, err = transfer(card, other, 100, "T-4")
		require.ErrorIs(t, err, giftcard.ErrBound, "a bound card's balance is its customer's")
		for _, id := range []string{card, other} {
			e.balance(t, id)
		}

		// Cancelling takes what the card holds, once; it takes no more moves.
		cancel := func() (*giftcard.Result, error) {
			return write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Cancel(e.ctx, c, card, "lost") })
		}
		x, err := cancel()
		require.NoError(t, err)
		require.Equal(t, [2]int64{-4230, 0}, [2]int64{x.Entry.AmountCents, x.Card.BalanceCents})
		x, err = cancel()
		require.NoError(t, err)
		require.True(t, x.Replayed)
		_, err = write(e, debit(1, "PED-9"))
		require.ErrorIs(t, err, giftcard.ErrCancelled)
		require.Zero(t, e.balance(t, card))
	})
}

// TestCardExpiry: a card's balance expires whole when its time comes, with
// a notice once within the window before; an unsold card expires too.
func TestCardExpiry(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		sold := e.issue(t, 2500, false).Card.ID
		unsold := e.issue(t, 2500, true).Card.ID
		notify := func(id string) bool {
			ok, err := write(e, func(c *ent.Client) (bool, error) { return e.cards.NotifyExpiring(e.ctx, c, id, 30*24*time.Hour) })
			require.NoError(t, err)
			return ok
		}
		expire := func(id string) *giftcard.Result {
			r, err := write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Expire(e.ctx, c, id) })
			require.NoError(t, err)
			return r
		}
		require.False(t, notify(sold), "not within the window yet")
		require.Nil(t, expire(sold), "not due")
		e.clock.Set(e.clock.Now().AddDate(1, 0, -10))
		require.True(t, notify(sold))
		require.False(t, notify(sold), "once")
		require.False(t, notify(unsold), "an unsold card holds nothing to announce")
		_, err := write(e, func(c *ent.Client) (*giftcard.Result, error) {
			return e.cards.Debit(e.ctx, c, e.move(sold, 500, "PED-1"))
		})
		require.NoError(t, err)

		e.clock.Set(e.clock.Now().AddDate(0, 0, 10))
		_, err = write(e, func(c *ent.Client) (*giftcard.Result, error) {
			return e.cards.Debit(e.ctx, c, e.move(sold, 1, "PED-2"))
		})
		require.ErrorIs(t, err, giftcard.ErrExpired, "spendable until its expiry, whatever the upkeep reached")
		r := expire(sold)
		require.Equal(t, [2]int64{-2000, 0}, [2]int64{r.Entry.AmountCents, r.Card.BalanceCents}, "what is left expires whole")
		require.Nil(t, expire(sold), "once")
		r = expire(unsold)
		require.Nil(t, r.Entry)
		require.Equal(t, entgiftcard.StatusExpired, r.Card.Status)
		_, err = write(e, func(c *ent.Client) (*giftcard.Result, error) { return e.cards.Activate(e.ctx, c, unsold, "sal_late") })
		require.ErrorIs(t, err, giftcard.ErrExpired)
		require.Equal(t, 1, e.events(t, "gift_card.expiring", sold))
		require.Equal(t, 1, e.events(t, "gift_card.expired", sold))
		require.Zero(t, e.events(t, "gift_card.expired", unsold), "a card never sold expires silently")
		require.Zero(t, e.balance(t, sold))
	})
}

// TestCardConcurrentDebits: 60 debits of one card at once, their sum well
// above its balance, spend exactly what it holds and never below zero.
func TestCardConcurrentDebits(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		card := e.issue(t, 5000, false).Card.ID
		var wg sync.WaitGroup
		var mu sync.Mutex
		spent, refused := int64(0), 0
		for i := range 60 {
			wg.Go(func() {
				_, err := write(e, func(c *ent.Client) (*giftcard.Result, error) {
					return e.cards.Debit(e.ctx, c, e.move(card, 300, fmt.Sprintf("PED-%d", i)))
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					spent += 300
				case errors.Is(err, giftcard.ErrInsufficient):
					refused++
				default:
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(16*300), spent, "as many debits as R$ 50.00 cover")
		require.Equal(t, 60-16, refused)
		require.Equal(t, int64(5000-16*300), e.balance(t, card))
	})
}

// TestCodes: codes are 100 random bits, unique in a batch, stored only as
// their hash and last four characters, and read back however they are
// typed.
func TestCodes(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, giftcard.CodeBits, 80)
	seen := map[string]bool{}
	for range 10_000 {
		code := giftcard.NewCode()
		require.Len(t, code, giftcard.CodeLength)
		require.False(t, seen[code])
		seen[code] = true
	}
	code := "7K3MQ0A1B2C3D4E5F6G9"
	for _, typed := range []string{code, "7k3m-q0a1-b2c3-d4e5-f6g9", " 7K3M Q0A1 B2C3 D4E5 F6G9 ", "7K3MQOA1B2C3D4E5F6G9", giftcard.FormatCode(code)} {
		got, ok := giftcard.NormalizeCode(typed)
		require.True(t, ok, typed)
		require.Equal(t, code, got, typed)
	}
	for _, typed := range []string{"", "7K3MQ0A1B2C3D4E5F6G", "7K3MQ0A1B2C3D4E5F6GU", "7K3MQ0A1B2C3D4E5F6G9X", "7K3MQ0A1B2C3D4E5F6G!", "7K3MQ0A1B2C3D4E5F6GÉ"} {
		_, ok := giftcard.NormalizeCode(typed)
		require.False(t, ok, typed)
	}
	require.Equal(t, "7K3M-Q0A1-B2C3-D4E5-F6G9", giftcard.FormatCode(code))
	require.Equal(t, "F6G9", giftcard.Last4(code))
	require.Len(t, giftcard.HashCode(code), 64)
	require.NotEqual(t, giftcard.HashCode(code), giftcard.HashCode(giftcard.NewCode()))
}

// TestCardConcurrentTransfers: 40 transfers between two bearer cards at
// once, half each way, queue on the cards' locks (taken in the order of
// their ids) instead of deadlocking; each moves once, and the two balances
// still add up to what the cards were issued with.
func TestCardConcurrentTransfers(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newCardEnv(t, db)
		a, b := e.issue(t, 5000, false).Card.ID, e.issue(t, 5000, false).Card.ID
		var wg sync.WaitGroup
		errs := make([]error, 40)
		for i := range errs {
			from, to := a, b
			if i%2 == 1 {
				from, to = b, a
			}
			wg.Go(func() {
				_, errs[i] = write(e, func(c *ent.Client) (*giftcard.Transferred, error) {
					return e.cards.Transfer(e.ctx, c, giftcard.Transfer{FromID: from, ToID: to, Cents: 100 + int64(i), TransferID: fmt.Sprintf("T-%d", i)})
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "transfer %d", i)
		}
		var out, in int64
		for i := range errs {
			if i%2 == 0 {
				out += 100 + int64(i)
			} else {
				in += 100 + int64(i)
			}
		}
		require.Equal(t, [2]int64{5000 - out + in, 5000 + out - in}, [2]int64{e.balance(t, a), e.balance(t, b)})
	})
}
