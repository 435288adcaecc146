package giftcard

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
)

// Bind binds a card to a customer: its balance becomes the customer's (it
// is listed among the customer's wallets and no longer transfers to
// another card). The customer is locked first, the lock order of every
// write of a customer's data, then the card. Bound again to the same
// customer it changes nothing (Replayed); a card bound to another customer
// is ErrBoundToAnother (a binding is not undone here); a cancelled or
// expired card is refused. ledger.ErrCustomerNotFound for a customer the
// viewer does not see.
func (g Cards) Bind(ctx context.Context, c *ent.Client, cardID, customerID string) (*Result, error) {
	if _, err := ledger.LockCustomer(ctx, c, g.Dialect, customerID); err != nil {
		return nil, err
	}
	card, err := g.lock(ctx, c, cardID)
	if err != nil {
		return nil, err
	}
	switch {
	case card.CustomerID != nil && *card.CustomerID == customerID:
		return &Result{Card: card, Replayed: true}, nil
	case card.CustomerID != nil:
		return nil, ErrBoundToAnother
	case card.Status == entgiftcard.StatusCancelled:
		return nil, ErrCancelled
	case card.Status == entgiftcard.StatusExpired || !g.now().Before(card.ExpiresAt):
		return nil, ErrExpired
	}
	card, err = c.GiftCard.UpdateOne(card).SetCustomerID(customerID).Save(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Card: card}, nil
}

// Cancel withdraws a card that has not expired: its balance leaves it (a
// cancellation entry) and it takes no more moves. Cancelled again it
// answers the first cancellation (Replayed). It records
// gift_card.cancelled.
func (g Cards) Cancel(ctx context.Context, c *ent.Client, cardID, reason string) (*Result, error) {
	card, err := g.lock(ctx, c, cardID)
	if err != nil {
		return nil, err
	}
	m := Move{CardID: card.ID, Cents: card.BalanceCents, SourceKind: giftcardentry.SourceKindCard, SourceID: card.ID, Reason: reason}
	switch card.Status {
	case entgiftcard.StatusCancelled:
		prior, err := findSource(ctx, c, m, giftcardentry.KindCancellation)
		return &Result{Card: card, Entry: prior, Replayed: true}, err
	case entgiftcard.StatusExpired:
		return nil, ErrExpired
	case entgiftcard.StatusInactive, entgiftcard.StatusActive: // cancelled below
	}
	now := g.now()
	res, err := g.end(ctx, c, card, m, giftcardentry.KindCancellation, now,
		c.GiftCard.UpdateOne(card).SetStatus(entgiftcard.StatusCancelled).SetCancelledAt(now))
	if err != nil {
		return nil, err
	}
	return res, record(ctx, c, now, outbox.GiftCardCancelled, res.Card, map[string]any{"amount": wallet.Reais(m.Cents), "reason": reason})
}

// Expire ends a card whose time has come, active or never activated: what
// it holds leaves it (an expiration entry), whole. It does nothing for a
// card not due, expired or cancelled, so a retried job is harmless. It
// records gift_card.expired when the card loses a balance (a card spent
// to zero or never sold expires silently, as it was issued).
func (g Cards) Expire(ctx context.Context, c *ent.Client, cardID string) (*Result, error) {
	card, err := g.lock(ctx, c, cardID)
	if err != nil {
		return nil, err
	}
	now := g.now()
	if card.ExpiresAt.After(now) || (card.Status != entgiftcard.StatusActive && card.Status != entgiftcard.StatusInactive) {
		return nil, nil
	}
	m := Move{CardID: card.ID, Cents: card.BalanceCents, SourceKind: giftcardentry.SourceKindCard, SourceID: card.ID, Reason: "gift card expired"}
	res, err := g.end(ctx, c, card, m, giftcardentry.KindExpiration, now,
		c.GiftCard.UpdateOne(card).SetStatus(entgiftcard.StatusExpired))
	if err != nil || m.Cents == 0 {
		return res, err
	}
	return res, record(ctx, c, now, outbox.GiftCardExpired, res.Card, map[string]any{"amount": wallet.Reais(m.Cents)})
}

// end writes u, the card's last status, taking its balance with an entry
// of kind when it holds any.
func (g Cards) end(ctx context.Context, c *ent.Client, card *ent.GiftCard, m Move, kind giftcardentry.Kind,
	now time.Time, u *ent.GiftCardUpdateOne) (*Result, error) {
	if m.Cents > 0 {
		return g.move(ctx, c, card, m, kind, now, u)
	}
	ended, err := u.Save(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Card: ended}, nil
}

// NotifyExpiring records the gift_card.expiring event of an active card
// holding a balance that expires within window, once: the conditional
// update claims the card, so a concurrent or later run records nothing,
// and the notice tells what the card holds now. It reports whether it
// recorded the notice.
func (g Cards) NotifyExpiring(ctx context.Context, c *ent.Client, cardID string, window time.Duration) (bool, error) {
	if _, err := g.lock(ctx, c, cardID); err != nil {
		return false, err
	}
	now := g.now()
	n, err := c.GiftCard.Update().
		Where(entgiftcard.ID(cardID), entgiftcard.ExpiringNotifiedAtIsNil(), entgiftcard.StatusEQ(entgiftcard.StatusActive),
			entgiftcard.BalanceCentsGT(0), entgiftcard.ExpiresAtGT(now), entgiftcard.ExpiresAtLTE(now.Add(window))).
		SetExpiringNotifiedAt(now).Save(ctx)
	if err != nil || n == 0 {
		return false, err
	}
	card, err := c.GiftCard.Get(ctx, cardID)
	if err != nil {
		return false, err
	}
	return true, record(ctx, c, now, outbox.GiftCardExpiring, card, map[string]any{"amount": wallet.Reais(card.BalanceCents)})
}
