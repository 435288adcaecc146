package giftcard

import (
	"context"
	"errors"
	"fmt"

	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ent/wallethold"
)

// A card's holds are wallet holds of wallet gift_card naming the card
// (domain/wallet keeps them: placing, taking, releasing); this file places
// them under the card's rules and moves the card's balance when they are
// spent or refunded.

// PlaceHold reserves h.Cents of the spendable card h.CardID for the hold's
// lifetime, under the card's lock: within the balance less its holds that
// count (ErrInsufficient otherwise). A card bound to a customer is
// held only for that customer (h.CustomerID, ErrBoundToAnother), or for no
// one named (the code is known); the hold names the card's customer, none
// for a card bound to no one. The same session asked again answers its
// hold (replayed).
func (g Cards) PlaceHold(ctx context.Context, c *ent.Client, h wallet.Hold) (hold *ent.WalletHold, replayed bool, err error) {
	card, err := g.lock(ctx, c, h.CardID)
	if err != nil {
		return nil, false, err
	}
	if err := Spendable(card, g.now()); err != nil {
		return nil, false, err
	}
	if h.CustomerID != "" && card.CustomerID != nil && *card.CustomerID != h.CustomerID {
		return nil, false, ErrBoundToAnother
	}
	hold, replayed, err = g.wallets().PlaceCardHold(ctx, c, card, h)
	if errors.Is(err, wallet.ErrInsufficient) {
		return nil, false, ErrInsufficient
	}
	return hold, replayed, err
}

// wallets are the holds' writer on the cards' database and clock.
func (g Cards) wallets() wallet.Wallets { return wallet.Wallets{Dialect: g.Dialect, Now: g.Now} }

// Available is what a card may pay now, read without a lock (an offer's
// read: a hold checks again under the lock): its balance less its holds
// that count, nothing when it is not spendable.
func (g Cards) Available(ctx context.Context, c *ent.Client, card *ent.GiftCard) (int64, error) {
	if Spendable(card, g.now()) != nil {
		return 0, nil
	}
	return g.wallets().CardAvailable(ctx, c, card, "")
}

// paid is the move of a card's hold a sale or order took: its source is
// what took it.
func paid(h *ent.WalletHold, reason string) Move {
	m := Move{CardID: *h.GiftCardID, StoreCode: h.StoreCode, Reason: reason, SourceKind: giftcardentry.SourceKindOrder}
	if h.SaleID != nil {
		m.SourceKind, m.SourceID = giftcardentry.SourceKindSale, *h.SaleID
	} else if h.OrderID != nil {
		m.SourceID = *h.OrderID
	}
	return m
}

// SpendHold debits a taken card hold's cents once, for the sale or order
// that took it (the entry's source), and records gift_card.redeemed (Debit).
// A card that stopped being spendable while held (expired, cancelled) pays
// nothing, and one whose balance fell pays what is left besides its other
// holds: the Result's Entry is nil when nothing was debited. A hold spent
// already answers its entry (Replayed); wallet.ErrSourceSpent when another
// hold of the card paid its sale or order.
func (g Cards) SpendHold(ctx context.Context, c *ent.Client, id, reason string) (*Result, error) {
	hold, card, err := g.wallets().LockCardHold(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if hold.Status != wallethold.StatusTaken && hold.Status != wallethold.StatusSpent {
		return nil, wallet.ErrHoldUnavailable
	}
	m := paid(hold, reason)
	if m.SourceID == "" {
		return nil, fmt.Errorf("hold %s taken by nothing", id)
	}
	prior, err := findSource(ctx, c, m, giftcardentry.KindDebit)
	switch {
	case err != nil:
		return nil, err
	case hold.Status == wallethold.StatusSpent:
		return &Result{Card: card, Entry: prior, Replayed: true}, nil
	case prior != nil:
		return nil, wallet.ErrSourceSpent
	}
	res := &Result{Card: card}
	if Spendable(card, g.now()) == nil {
		n, err := g.wallets().CardAvailable(ctx, c, card, id)
		if err != nil {
			return nil, err
		}
		if m.Cents = min(hold.Cents, n); m.Cents > 0 {
			if res, err = g.Debit(ctx, c, m); err != nil {
				return nil, err
			}
		}
	}
	return res, hold.Update().SetStatus(wallethold.StatusSpent).SetClosedAt(g.now()).Exec(ctx)
}

// RefundHold gives back to the card, once, what a spent hold debited (its
// sale or order rolled back) with Refund, and marks the hold released. A
// hold refunded already answers its refund (Replayed); an open or taken
// hold is wallet.ErrHoldUnavailable; a hold released unspent answers as it
// is (Replayed, no entry).
func (g Cards) RefundHold(ctx context.Context, c *ent.Client, id, reason string) (*Result, error) {
	hold, card, err := g.wallets().LockCardHold(ctx, c, id)
	if err != nil {
		return nil, err
	}
	m := paid(hold, reason)
	switch {
	case hold.Status == wallethold.StatusReleased && m.SourceID == "":
		return &Result{Card: card, Replayed: true}, nil
	case hold.Status == wallethold.StatusReleased: // its refund, if it was spent
		prior, err := findSource(ctx, c, m, giftcardentry.KindRefund)
		return &Result{Card: card, Entry: prior, Replayed: true}, err
	case hold.Status != wallethold.StatusSpent:
		return nil, wallet.ErrHoldUnavailable
	}
	debit, err := findSource(ctx, c, m, giftcardentry.KindDebit)
	if err != nil {
		return nil, err
	}
	res := &Result{Card: card}
	if debit != nil {
		m.Cents = -debit.AmountCents
		if res, err = g.Refund(ctx, c, m); err != nil {
			return nil, err
		}
	}
	return res, hold.Update().SetStatus(wallethold.StatusReleased).SetClosedAt(g.now()).Exec(ctx)
}
