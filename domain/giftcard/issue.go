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

// Issue is what cards are issued with: each card's face value and expiry,
// and whether it waits for the sale that activates it.
type Issue struct {
	Cents      int64 // face value, 1 to MaxBalanceCents
	ExpiresAt  time.Time
	Inactive   bool    // issued to be sold: spendable once Activate runs
	CustomerID *string // bound to this customer (a customer the viewer sees)
	BatchID    *string
	StoreCode  string
	Note       string
}

// Issued is a card just issued and its code, normalized: the only time the
// code exists outside the holder's hands.
type Issued struct {
	Card *ent.GiftCard
	Code string
}

// Issue writes n cards of in, each with a new random code stored as its
// hash (HashCode) and last four characters; an active card's face value is
// its first entry (issue), an inactive one holds nothing until activated.
// Active cards are announced by one gift_card.issued for the batch; an
// inactive card is stock, not money, until its sale activates it
// (gift_card.activated). The cards and entries are written in a few
// statements, inside the caller's transaction: the codes are shown once,
// so either every card of the batch exists or none.
func (g Cards) Issue(ctx context.Context, c *ent.Client, in Issue, n int) ([]Issued, error) {
	now := g.now()
	switch {
	case in.Cents <= 0 || in.Cents > MaxBalanceCents:
		return nil, fmt.Errorf("a card of %d cents", in.Cents)
	case !in.ExpiresAt.After(now):
		return nil, ErrExpired
	}
	status, balance, activated := entgiftcard.StatusActive, in.Cents, &now
	if in.Inactive {
		status, balance, activated = entgiftcard.StatusInactive, 0, nil
	}
	out := make([]Issued, n)
	creates := make([]*ent.GiftCardCreate, n)
	for i := range out {
		out[i].Code = NewCode()
		creates[i] = c.GiftCard.Create().SetCreatedAt(now).
			SetCodeHash(HashCode(out[i].Code)).SetCodeLast4(Last4(out[i].Code)).SetNillableBatchID(in.BatchID).
			SetNillableCustomerID(in.CustomerID).SetStatus(status).SetInitialCents(in.Cents).SetBalanceCents(balance).
			SetExpiresAt(in.ExpiresAt.UTC()).SetNillableActivatedAt(activated).SetStoreCode(in.StoreCode).SetNote(in.Note)
	}
	cards, err := c.GiftCard.CreateBulk(creates...).Save(ctx)
	if err != nil || in.Inactive {
		for i := range cards {
			out[i].Card = cards[i]
		}
		return out, err
	}
	entries := make([]*ent.GiftCardEntryCreate, n)
	ids := make([]string, n)
	for i, card := range cards {
		out[i].Card, ids[i] = card, card.ID
		entries[i] = newEntry(c, card, Move{SourceKind: giftcardentry.SourceKindCard, SourceID: card.ID,
			StoreCode: in.StoreCode, Reason: "gift card issued"}, giftcardentry.KindIssue, now).
			SetAmountCents(in.Cents).SetBalanceAfterCents(in.Cents)
	}
	if err := c.GiftCardEntry.CreateBulk(entries...).Exec(ctx); err != nil {
		return nil, err
	}
	subject := cards[0].ID
	if in.BatchID != nil {
		subject = *in.BatchID
	}
	return out, outbox.Record(ctx, c, now, cards[0].TenantID, outbox.GiftCardIssued, subject, map[string]any{
		"batch_id": in.BatchID, "count": n, "gift_card_ids": ids, "amount": wallet.Reais(in.Cents),
		"customer_id": in.CustomerID, "expires_at": in.ExpiresAt.UTC().Format(time.RFC3339Nano),
	})
}
