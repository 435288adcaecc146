// Package giftcard writes gift cards: R$ of stored value behind a code,
// each card its own balance in whole cents. A card is its own single lot:
// its face value, loads, refunds and transfers in all join one balance,
// spent in part or whole, never below zero, that expires whole at the
// card's expires_at (loads do not move it). The card's balance is the sum
// of its entries, every entry naming its source, unique per kind, so a
// move of one source happens once. Each function runs inside the caller's
// transaction (c is bound to it) and locks the card's row first
// (PostgreSQL: SELECT … FOR UPDATE; SQLite's write transactions are serial
// already), so the moves of one card are serialised; the conditional
// updates and the balance's check refuse a negative balance even if a lock
// were missed. Other contexts (the till's sale processing, holds) call
// Activate, Debit and Refund inside their own transactions.
package giftcard

import (
	"context"
	"errors"
	"time"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
)

// MaxBalanceCents is the most a card may hold: R$ 100,000.00. A load or
// transfer beyond it is refused (ErrBalanceLimit).
const MaxBalanceCents = 100_000_00

// Errors of the card's rules; the application maps them to its answers.
var (
	ErrNotFound       = errors.New("gift card not found")
	ErrInactive       = errors.New("the gift card is not active yet: its sale has not been processed")
	ErrExpired        = errors.New("the gift card has expired")
	ErrCancelled      = errors.New("the gift card was cancelled")
	ErrInsufficient   = errors.New("the gift card's balance is lower than the amount")
	ErrBalanceLimit   = errors.New("the gift card would hold more than its limit")
	ErrRefundTooLarge = errors.New("the refund is larger than what was spent with the gift card")
	ErrAlreadyActive  = errors.New("the gift card is already active")
	ErrBoundToAnother = errors.New("the gift card is bound to another customer")
	ErrBound          = errors.New("the gift card is bound to a customer: its balance is the customer's and does not move to another card")
	ErrSameCard       = errors.New("a card's balance cannot move to itself")
	// ErrTransferKeyReused is a transfer's key already used by a transfer
	// between other cards.
	ErrTransferKeyReused = errors.New("the transfer id was used by a transfer between other cards")
)

// Cards writes gift card moves.
type Cards struct {
	Dialect string
	Now     func() time.Time // the clock of entries and expiries
}

// Move is what every move of a card's balance names: which card, how many
// cents, and why. SourceID is required: with SourceKind, a move of one
// source happens once per kind.
type Move struct {
	CardID     string
	Cents      int64 // positive
	SourceKind giftcardentry.SourceKind
	SourceID   string
	StoreCode  string
	Reason     string
}

// Result is the card after a move and the entry the move wrote, or found
// when it had been written.
type Result struct {
	Card     *ent.GiftCard
	Entry    *ent.GiftCardEntry // nil for a move of no cents (cancelling or expiring an empty card)
	Replayed bool               // the source had already moved the card: nothing was written
}

// now is the cards' clock in UTC, to the microsecond both databases keep.
func (g Cards) now() time.Time { return g.Now().UTC().Truncate(time.Microsecond) }

// lock reads the card and locks its row until the transaction of c ends.
func (g Cards) lock(ctx context.Context, c *ent.Client, id string) (*ent.GiftCard, error) {
	card, err := wallet.LockCard(ctx, c, g.Dialect, id)
	if errors.Is(err, wallet.ErrCardNotFound) {
		return nil, ErrNotFound
	}
	return card, err
}

// Spendable tells whether a card takes moves of its balance now: active and
// before its expiry (which the upkeep may not have reached yet).
func Spendable(card *ent.GiftCard, now time.Time) error {
	switch card.Status {
	case entgiftcard.StatusInactive:
		return ErrInactive
	case entgiftcard.StatusCancelled:
		return ErrCancelled
	case entgiftcard.StatusExpired:
		return ErrExpired
	case entgiftcard.StatusActive: // until its expiry
	}
	if !now.Before(card.ExpiresAt) {
		return ErrExpired
	}
	return nil
}

// Activate makes an inactive card's face value spendable when the sale that
// sold it is processed, inside that processing's transaction. Activated
// again by the same sale it answers the first activation (Replayed); a card
// already active (issued active, or sold by another sale) is
// ErrAlreadyActive. It records gift_card.activated.
func (g Cards) Activate(ctx context.Context, c *ent.Client, cardID, saleID string) (*Result, error) {
	card, err := g.lock(ctx, c, cardID)
	if err != nil {
		return nil, err
	}
	m := Move{CardID: card.ID, Cents: card.InitialCents, SourceKind: giftcardentry.SourceKindSale, SourceID: saleID,
		Reason: "gift card sold"}
	if prior, err := findSource(ctx, c, m, giftcardentry.KindIssue); prior != nil || err != nil {
		return &Result{Card: card, Entry: prior, Replayed: prior != nil}, err
	}
	now := g.now()
	switch err := Spendable(card, now); {
	case err == nil:
		return nil, ErrAlreadyActive
	case !errors.Is(err, ErrInactive):
		return nil, err
	}
	if !now.Before(card.ExpiresAt) {
		return nil, ErrExpired
	}
	card, err = c.GiftCard.UpdateOne(card).Where(entgiftcard.StatusEQ(entgiftcard.StatusInactive)).
		SetStatus(entgiftcard.StatusActive).SetActivatedAt(now).AddBalanceCents(card.InitialCents).Save(ctx)
	if err != nil {
		return nil, err
	}
	entry, err := newEntry(c, card, m, giftcardentry.KindIssue, now).
		SetAmountCents(m.Cents).SetBalanceAfterCents(card.BalanceCents).Save(ctx)
	if err != nil {
		return nil, err
	}
	if err := record(ctx, c, now, outbox.GiftCardActivated, card, map[string]any{"sale_id": saleID, "amount": wallet.Reais(m.Cents)}); err != nil {
		return nil, err
	}
	return &Result{Card: card, Entry: entry}, nil
}

// newEntry is the entry of m on card, its amounts left to the caller.
func newEntry(c *ent.Client, card *ent.GiftCard, m Move, kind giftcardentry.Kind, now time.Time) *ent.GiftCardEntryCreate {
	return c.GiftCardEntry.Create().
		SetTenantID(card.TenantID).SetGiftCardID(card.ID).SetCreatedAt(now).SetKind(kind).
		SetSourceKind(m.SourceKind).SetSourceID(m.SourceID).SetStoreCode(m.StoreCode).SetReason(m.Reason)
}

// findSource returns the entry an earlier move of the same source and kind
// wrote on the card.
func findSource(ctx context.Context, c *ent.Client, m Move, kind giftcardentry.Kind) (*ent.GiftCardEntry, error) {
	e, err := c.GiftCardEntry.Query().Where(
		giftcardentry.GiftCardID(m.CardID), giftcardentry.KindEQ(kind),
		giftcardentry.SourceKindEQ(m.SourceKind), giftcardentry.SourceID(m.SourceID),
	).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return e, err
}

// record writes an event of card (eventData).
func record(ctx context.Context, c *ent.Client, now time.Time, typ string, card *ent.GiftCard, extra map[string]any) error {
	return outbox.Record(ctx, c, now, card.TenantID, typ, card.ID, eventData(card, extra))
}

// eventData is what every gift card event says (the card, its visible
// tail, its customer, status, balance after the move and expiry) and
// extra.
func eventData(card *ent.GiftCard, extra map[string]any) map[string]any {
	data := map[string]any{
		"gift_card_id": card.ID, "code_last4": card.CodeLast4, "customer_id": card.CustomerID,
		"status": string(card.Status), "balance": wallet.Reais(card.BalanceCents),
		"expires_at": card.ExpiresAt.UTC().Format(time.RFC3339Nano),
	}
	for k, v := range extra {
		data[k] = v
	}
	return data
}
