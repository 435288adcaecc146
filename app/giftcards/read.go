package giftcards

import (
	"context"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/viewer"
)

// GiftCardGuessesPerClient is how many unknown codes a client may look up
// per window before every lookup is refused with 429, as coupon codes'
// guesses are counted: 100 guesses of 100-bit codes find nothing.
var GiftCardGuessesPerClient = ratelimit.Quota{Limit: 100, Window: 15 * time.Minute}

// codeGuesses counts the unknown codes each client looked up (across
// processes on PostgreSQL: Kernel.Limiter).
func (a *Service) codeGuesses() ratelimit.Counter {
	a.guessesOnce.Do(func() { a.guesses = a.k.Limiter("gift-card-guesses", a.k.Now, 0) })
	return a.guesses
}

// GiftCardByCode reads the card of a code, however it is typed (spaces,
// hyphens, lower case): its balance, status and expiry. An unknown code
// counts against the client's quota of guesses (GiftCardGuessesPerClient);
// over it, every lookup is refused until the window ends. A lookup takes
// its place in the quota before it runs and gives it back when the code
// exists, so that no burst of lookups outnumbers the quota.
func (a *Service) GiftCardByCode(ctx context.Context, code string) (*ent.GiftCard, error) {
	if err := Rules.GiftCardByCode.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("code", code); err != nil {
		return nil, err
	}
	return a.byCode(ctx, code)
}

// byCode is GiftCardByCode's lookup under the client's quota of guesses.
func (a *Service) byCode(ctx context.Context, code string) (*ent.GiftCard, error) {
	v, _ := viewer.FromContext(ctx)
	d, undo := a.codeGuesses().AllowAll(ratelimit.Key{Name: "client\x00" + v.TenantID + "\x00" + v.Subject, Quota: GiftCardGuessesPerClient})
	if !d.Allowed {
		return nil, &apperr.Error{Kind: apperr.KindRateLimited, Code: "gift_card_attempts_exceeded", Field: "code", RetryAfter: d.RetryAfter,
			Message: "too many unknown gift card codes; retry in " + d.RetryAfter.Round(time.Second).String()}
	}
	var found *ent.GiftCard
	var err error
	if normalized, ok := giftcard.NormalizeCode(code); ok {
		found, err = a.k.DB.Ent.GiftCard.Query().Where(entgiftcard.CodeHash(giftcard.HashCode(normalized))).Only(ctx)
	}
	if found == nil && (err == nil || ent.IsNotFound(err)) {
		return nil, apperr.NotFound("gift card")
	}
	undo() // not a guess: the code exists, or the lookup failed
	return found, err
}

// GiftCard reads a card by id.
func (a *Service) GiftCard(ctx context.Context, id string) (*ent.GiftCard, error) {
	if err := Rules.GiftCard.Allow(ctx); err != nil {
		return nil, err
	}
	return a.card(ctx, id)
}

// card reads a card of the viewer's tenant, not found otherwise.
func (a *Service) card(ctx context.Context, id string) (*ent.GiftCard, error) {
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	c, err := a.k.DB.Ent.GiftCard.Get(ctx, id)
	return c, kernel.NotFoundAs(err, "gift card")
}

// CardsFilter narrows the list of cards.
type CardsFilter struct {
	Status     string // inactive, active, expired or cancelled; "" any
	CustomerID string // the cards bound to this customer
	BatchID    string // the cards of one batch
}

// GiftCards lists the tenant's cards, newest first.
func (a *Service) GiftCards(ctx context.Context, f CardsFilter, after *ent.Cursor, first int) (*ent.GiftCardConnection, error) {
	if err := Rules.GiftCards.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", f); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	q := a.k.DB.Ent.GiftCard.Query()
	if f.Status != "" {
		if entgiftcard.StatusValidator(entgiftcard.Status(f.Status)) != nil {
			return nil, apperr.Invalid("status", "must be inactive, active, expired or cancelled")
		}
		q.Where(entgiftcard.StatusEQ(entgiftcard.Status(f.Status)))
	}
	if f.CustomerID != "" {
		q.Where(entgiftcard.CustomerID(f.CustomerID))
	}
	if f.BatchID != "" {
		q.Where(entgiftcard.BatchID(f.BatchID))
	}
	return q.Paginate(ctx, after, &first, nil, nil, ent.WithGiftCardOrder(&ent.GiftCardOrder{
		Direction: entgql.OrderDirectionDesc, Field: ent.DefaultGiftCardOrder.Field,
	}))
}

// GiftCardEntries lists a card's entries, newest first.
func (a *Service) GiftCardEntries(ctx context.Context, id string, after *ent.Cursor, first int) (*ent.GiftCardEntryConnection, error) {
	if err := Rules.GiftCardEntries.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	if _, err := a.card(ctx, id); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.GiftCardEntry.Query().Where(giftcardentry.GiftCardID(id)).
		Paginate(ctx, after, &first, nil, nil, ent.WithGiftCardEntryOrder(&ent.GiftCardEntryOrder{
			Direction: entgql.OrderDirectionDesc, Field: ent.DefaultGiftCardEntryOrder.Field,
		}))
}

// GiftCardConnection is a page of the cards (GraphQL's giftCards), in the
// order and under the filter the schema's arguments give.
func (a *Service) GiftCardConnection(ctx context.Context, p kernel.Page, order *ent.GiftCardOrder, where *ent.GiftCardWhereInput) (*ent.GiftCardConnection, error) {
	if err := Rules.GiftCardConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.GiftCard.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithGiftCardOrder(order), ent.WithGiftCardFilter(where.Filter))
}

// CustomerGiftCards lists the active cards bound to a customer the caller
// has read, those expiring first first: the customer's gift card wallets.
func (a *Service) CustomerGiftCards(ctx context.Context, customerID string) ([]*ent.GiftCard, error) {
	return a.k.DB.Ent.GiftCard.Query().
		Where(entgiftcard.CustomerID(customerID), entgiftcard.StatusEQ(entgiftcard.StatusActive)).
		Order(ent.Asc(entgiftcard.FieldExpiresAt), ent.Asc(entgiftcard.FieldID)).All(ctx)
}
