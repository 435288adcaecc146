package giftcard

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
)

// Load adds cents to a spendable card (a reload), once per source: loaded
// again it answers the first load (Replayed). ErrBalanceLimit when the card
// would hold more than MaxBalanceCents. It records gift_card.loaded.
func (g Cards) Load(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	return g.single(ctx, c, m, giftcardentry.KindLoad, outbox.GiftCardLoaded, func(card *ent.GiftCard) error {
		if card.BalanceCents+m.Cents > MaxBalanceCents {
			return ErrBalanceLimit
		}
		return nil
	})
}

// Debit spends cents of a spendable card (a partial redemption, or the
// whole balance), once per source; ErrInsufficient when the balance is
// short: a card never goes below zero. It records gift_card.redeemed.
func (g Cards) Debit(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	return g.single(ctx, c, m, giftcardentry.KindDebit, outbox.GiftCardRedeemed, func(card *ent.GiftCard) error {
		if card.BalanceCents < m.Cents {
			return ErrInsufficient
		}
		return nil
	})
}

// Refund gives cents spent back to the card they were spent from (a
// return, a cancelled order), once per source; never more than the card's
// debits less its refunds (ErrRefundTooLarge). The card must still be
// spendable: an expired or cancelled card takes nothing back. It records
// gift_card.refunded.
func (g Cards) Refund(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	return g.single(ctx, c, m, giftcardentry.KindRefund, outbox.GiftCardRefunded, func(card *ent.GiftCard) error {
		if card.RedeemedCents < m.Cents {
			return ErrRefundTooLarge
		}
		return nil
	})
}

// single is a move of one card by its holder: locked, found written
// before (Replayed), spendable, allowed by check, then written with its
// event.
func (g Cards) single(ctx context.Context, c *ent.Client, m Move, kind giftcardentry.Kind, event string,
	check func(*ent.GiftCard) error) (*Result, error) {
	if m.Cents <= 0 {
		return nil, fmt.Errorf("%s of %d cents", kind, m.Cents)
	}
	card, err := g.lock(ctx, c, m.CardID)
	if err != nil {
		return nil, err
	}
	if prior, err := findSource(ctx, c, m, kind); prior != nil || err != nil {
		return &Result{Card: card, Entry: prior, Replayed: prior != nil}, err
	}
	now := g.now()
	if err := Spendable(card, now); err != nil {
		return nil, err
	}
	if err := check(card); err != nil {
		return nil, err
	}
	res, err := g.move(ctx, c, card, m, kind, now, nil)
	if err != nil {
		return nil, err
	}
	return res, record(ctx, c, now, event, res.Card, moveData(res.Entry))
}

// move writes a move of m.Cents of kind on the locked card: its balance
// and totals by one conditional update (u, when given, sets more of the
// card), then the entry. What leaves the balance is taken only from a
// balance that holds it, what a refund gives back only from what was
// spent.
func (g Cards) move(ctx context.Context, c *ent.Client, card *ent.GiftCard, m Move, kind giftcardentry.Kind,
	now time.Time, u *ent.GiftCardUpdateOne) (*Result, error) {
	if u == nil {
		u = c.GiftCard.UpdateOne(card)
	}
	delta := m.Cents
	switch kind {
	case giftcardentry.KindDebit, giftcardentry.KindTransferOut, giftcardentry.KindExpiration, giftcardentry.KindCancellation:
		delta = -m.Cents
		u.Where(entgiftcard.BalanceCentsGTE(m.Cents))
	case giftcardentry.KindIssue, giftcardentry.KindLoad, giftcardentry.KindRefund, giftcardentry.KindTransferIn: // cents in
	}
	switch kind {
	case giftcardentry.KindLoad, giftcardentry.KindTransferIn:
		u.AddLoadedCents(m.Cents)
	case giftcardentry.KindDebit:
		u.AddRedeemedCents(m.Cents)
	case giftcardentry.KindRefund:
		u.AddRedeemedCents(-m.Cents).Where(entgiftcard.RedeemedCentsGTE(m.Cents))
	case giftcardentry.KindIssue, giftcardentry.KindTransferOut, giftcardentry.KindExpiration, giftcardentry.KindCancellation:
		// the face value is the initial cents; what leaves is neither loaded nor redeemed
	}
	moved, err := u.AddBalanceCents(delta).Save(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("gift card %s changed under its lock: %w", card.ID, ErrInsufficient)
	}
	if err != nil {
		return nil, err
	}
	entry, err := newEntry(c, moved, m, kind, now).SetAmountCents(delta).SetBalanceAfterCents(moved.BalanceCents).Save(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Card: moved, Entry: entry}, nil
}

// moveData is what an event of a move says of its entry.
func moveData(e *ent.GiftCardEntry) map[string]any {
	return map[string]any{
		"entry_id": e.ID, "amount": wallet.Reais(abs(e.AmountCents)), "store_code": e.StoreCode, "reason": e.Reason,
		"source": map[string]any{"kind": string(e.SourceKind), "id": e.SourceID},
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Transfer moves cents of an unbound card to another card.
type Transfer struct {
	FromID, ToID string
	Cents        int64  // 0: the whole balance
	TransferID   string // the caller's key: a transfer of one key happens once
	StoreCode    string
	Reason       string
}

// Transferred is the two entries of a transfer and the cards after it.
type Transferred struct {
	From, To *Result
	Replayed bool
}

// Transfer moves a bearer card's balance (whole, or t.Cents of it) to
// another spendable card, once per TransferID: asked again it answers the
// first transfer (Replayed); the key of a transfer between other cards is
// ErrTransferKeyReused. The source must be unbound (ErrBound): a
// bound card's balance is its customer's, and no one but the customer may
// move it off. The destination keeps its own expiry. The two cards are
// locked in the order of their ids, so two transfers between the same
// cards in opposite directions queue instead of deadlocking. It records
// gift_card.transferred, of the source card.
func (g Cards) Transfer(ctx context.Context, c *ent.Client, t Transfer) (*Transferred, error) {
	if t.FromID == t.ToID { // a card the viewer cannot see is not found first
		if _, err := g.lock(ctx, c, t.FromID); err != nil {
			return nil, err
		}
		return nil, ErrSameCard
	}
	if t.Cents < 0 {
		return nil, fmt.Errorf("transfer of %d cents", t.Cents)
	}
	first, second := min(t.FromID, t.ToID), max(t.FromID, t.ToID)
	locked := map[string]*ent.GiftCard{}
	for _, id := range []string{first, second} {
		card, err := g.lock(ctx, c, id)
		if err != nil {
			return nil, err
		}
		locked[id] = card
	}
	from, to := locked[t.FromID], locked[t.ToID]
	out := Move{CardID: from.ID, SourceKind: giftcardentry.SourceKindTransfer, SourceID: t.TransferID, StoreCode: t.StoreCode, Reason: t.Reason}
	if prior, err := g.priorTransfer(ctx, c, out, to.ID); prior != nil || err != nil {
		return prior, err
	}
	now := g.now()
	for _, card := range []*ent.GiftCard{from, to} {
		if err := Spendable(card, now); err != nil {
			return nil, err
		}
	}
	out.Cents = t.Cents
	if out.Cents == 0 {
		out.Cents = from.BalanceCents
	}
	switch {
	case from.CustomerID != nil:
		return nil, ErrBound
	case out.Cents == 0 || from.BalanceCents < out.Cents:
		return nil, ErrInsufficient
	case to.BalanceCents+out.Cents > MaxBalanceCents:
		return nil, ErrBalanceLimit
	}
	sent, err := g.move(ctx, c, from, out, giftcardentry.KindTransferOut, now, nil)
	if err != nil {
		return nil, err
	}
	in := out
	in.CardID = to.ID
	got, err := g.move(ctx, c, to, in, giftcardentry.KindTransferIn, now, nil)
	if err != nil {
		return nil, err
	}
	data := moveData(sent.Entry)
	data["to_gift_card_id"], data["to_balance"] = to.ID, wallet.Reais(got.Card.BalanceCents)
	return &Transferred{From: sent, To: got}, record(ctx, c, now, outbox.GiftCardTransferred, sent.Card, data)
}

// priorTransfer is the transfer of out's key already made, both its
// entries and cards as they are now; nil when the key is new. A key names
// one transfer in the tenant: made between other cards, it is
// ErrTransferKeyReused.
func (g Cards) priorTransfer(ctx context.Context, c *ent.Client, out Move, toID string) (*Transferred, error) {
	byKey := func(kind giftcardentry.Kind) (*ent.GiftCardEntry, error) {
		return c.GiftCardEntry.Query().Where(giftcardentry.KindEQ(kind),
			giftcardentry.SourceKindEQ(out.SourceKind), giftcardentry.SourceID(out.SourceID)).
			WithGiftCard().Order(ent.Asc(giftcardentry.FieldID)).First(ctx)
	}
	sent, err := byKey(giftcardentry.KindTransferOut)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	got, err := byKey(giftcardentry.KindTransferIn)
	if err != nil {
		return nil, err
	}
	if sent.GiftCardID != out.CardID || got.GiftCardID != toID {
		return nil, ErrTransferKeyReused
	}
	return &Transferred{From: &Result{Card: sent.Edges.GiftCard, Entry: sent, Replayed: true},
		To: &Result{Card: got.Edges.GiftCard, Entry: got, Replayed: true}, Replayed: true}, nil
}
