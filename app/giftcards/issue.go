package giftcards

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/storage"
)

// Bounds of issuing.
const (
	// MaxIssuedAtOnce is the most cards one request issues: the whole
	// batch is one transaction, so that every code shown exists, and its
	// answer holds every code.
	MaxIssuedAtOnce = 1000
	// DefaultValidity is how long a card is spendable when issued without
	// an expiry.
	DefaultValidity = 12 // months
	// maxValidity bounds an expiry given at issue.
	maxValidity = 10 // years
)

// IssueInput issues Count cards (1 when nil) of Amount R$ each.
type IssueInput struct {
	Count     *int
	Amount    *decimal.Decimal
	ExpiresAt *time.Time // nil: DefaultValidity months after issue
	// Inactive cards are issued to be sold: they hold nothing until the
	// sale that sells them is processed.
	Inactive bool
	// CustomerID binds the card to the customer; only one card at a time.
	CustomerID string
	StoreCode  string
	Note       string
}

// IssuedCards is the cards just issued, each with its code: the only
// answer that ever shows the codes. BatchID groups a batch of more than
// one card.
type IssuedCards struct {
	BatchID *string
	Cards   []giftcard.Issued
}

// Cents reads an amount of R$ given to a card: positive, in whole cents,
// at most a card's limit. It adds a problem of field otherwise.
func Cents(p *apperr.Problems, field string, amount *decimal.Decimal) int64 {
	switch {
	case amount == nil:
		p.Add(field, "is required")
	case !amount.IsPositive() || !amount.Equal(amount.Truncate(2)) || amount.GreaterThan(wallet.Amount(giftcard.MaxBalanceCents)):
		p.Add(field, "must be positive, in whole cents, at most %s", wallet.Reais(giftcard.MaxBalanceCents))
	default:
		return wallet.Cents(*amount)
	}
	return 0
}

// validate reads in as the cards to issue and how many.
func (in IssueInput) validate(now time.Time) (giftcard.Issue, int, error) {
	var p apperr.Problems
	n := 1
	if in.Count != nil {
		n = *in.Count
	}
	if n < 1 || n > MaxIssuedAtOnce {
		p.Add("count", "must be between 1 and %d", MaxIssuedAtOnce)
	}
	issue := giftcard.Issue{Cents: Cents(&p, "amount", in.Amount), Inactive: in.Inactive, StoreCode: in.StoreCode, Note: in.Note}
	switch {
	case in.ExpiresAt == nil:
		issue.ExpiresAt = now.AddDate(0, DefaultValidity, 0)
	case !in.ExpiresAt.After(now) || in.ExpiresAt.After(now.AddDate(maxValidity, 0, 0)):
		p.Add("expires_at", "must be in the future, within %d years", maxValidity)
	default:
		issue.ExpiresAt = *in.ExpiresAt
	}
	if in.CustomerID != "" {
		kernel.RequireID(&p, "customer_id", in.CustomerID)
		if n > 1 {
			p.Add("customer_id", "binds one card: issue bound cards one at a time")
		}
		issue.CustomerID = &in.CustomerID
	}
	if len(in.StoreCode) > 128 {
		p.Add("store_code", "must be at most 128 characters")
	}
	if len(in.Note) > 200 {
		p.Add("note", "must be at most 200 characters")
	}
	if n > 1 {
		issue.BatchID = new(pid.New(pid.GiftCardBatch))
	}
	return issue, n, p.Err()
}

// IssueGiftCards issues in.Count cards in one transaction, each with a new
// code of giftcard.CodeBits random bits, answered here and never again (the
// database keeps its hash and last four characters). A bound card's
// customer is locked first, as every write of a customer's data.
func (a *Service) IssueGiftCards(ctx context.Context, in IssueInput) (*IssuedCards, error) {
	if err := Rules.IssueGiftCards.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	issue, n, err := in.validate(a.k.Stamp())
	if err != nil {
		return nil, err
	}
	out := &IssuedCards{BatchID: issue.BatchID}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if issue.CustomerID != nil {
			if _, err := a.k.LockCustomer(ctx, tx.Ent, *issue.CustomerID); err != nil {
				return err
			}
		}
		var err error
		out.Cards, err = a.cards().Issue(ctx, tx.Ent, issue, n)
		return err
	})
	if err != nil {
		return nil, cardError(err)
	}
	return out, nil
}
