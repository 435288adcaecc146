package wallets

import (
	"context"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	entwallet "github.com/fideliza/fideliza/ent/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/walletlot"
)

// Units are the money wallets every customer has, listed in this order;
// a wallet never moved reads as zero. The gift cards bound to the customer
// follow, a wallet each.
var Units = []wallet.Unit{wallet.Cashback}

// Balance is one wallet of a customer, in cents.
type Balance struct {
	Unit wallet.Unit
	// GiftCard is the card of a wallet of unit gift_card.
	GiftCard *ent.GiftCard
	// Balance is released and not expired; Pending waits out the pending
	// period; Debt was reversed after it was spent.
	Balance, Pending, Debt int64
	// Spendable is what a hold or debit may take now (wallet.Available):
	// the balance, less the lots past their expiry the expiry job has not
	// reached yet and the cents held by open and taken holds; nothing
	// while a debt is open.
	Spendable int64
	// Expiring is the soonest expiry of the wallet's cents (pending or
	// not), nil when it holds none.
	Expiring *Expiry
}

// Expiry is the cents of a wallet that expire at one instant.
type Expiry struct {
	Cents     int64
	ExpiresAt time.Time
}

// Wallets lists a customer's money wallets: Units, then the active gift
// cards bound to the customer, those expiring first first.
func (a *Service) Wallets(ctx context.Context, customerID string) ([]Balance, error) {
	if err := Rules.Wallets.Allow(ctx); err != nil {
		return nil, err
	}
	if err := a.customerExists(ctx, customerID); err != nil {
		return nil, err
	}
	rows, err := a.k.DB.Ent.Wallet.Query().Where(entwallet.CustomerID(customerID)).All(ctx)
	if err != nil {
		return nil, err
	}
	lots, err := a.k.DB.Ent.WalletLot.Query().Where(walletlot.CustomerID(customerID), walletlot.RemainingCentsGT(0)).
		Order(ent.Asc(walletlot.FieldExpiresAt), ent.Asc(walletlot.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	now := a.k.Now().UTC()
	out := make([]Balance, len(Units))
	for i, u := range Units {
		b := Balance{Unit: u}
		for _, w := range rows {
			if wallet.Unit(w.Kind) == u {
				b.Balance, b.Pending, b.Debt = w.BalanceCents, w.PendingCents, w.DebtCents
			}
		}
		for _, l := range lots {
			if wallet.Unit(l.Wallet) != u {
				continue
			}
			if b.Expiring == nil {
				b.Expiring = &Expiry{ExpiresAt: l.ExpiresAt}
			}
			if l.ExpiresAt.Equal(b.Expiring.ExpiresAt) {
				b.Expiring.Cents += l.RemainingCents
			}
		}
		funds, err := wallet.Available(ctx, a.k.DB.Ent, customerID, u, now)
		if err != nil {
			return nil, err
		}
		b.Spendable = funds.Available
		out[i] = b
	}
	cards, err := a.GiftCards.CustomerGiftCards(ctx, customerID)
	if err != nil {
		return nil, err
	}
	for _, c := range cards {
		out = append(out, cardBalance(c, now))
	}
	return out, nil
}

// cardBalance is a bound gift card as a wallet: its balance, spendable
// until it expires, whole.
func cardBalance(c *ent.GiftCard, now time.Time) Balance {
	b := Balance{Unit: wallet.GiftCard, GiftCard: c, Balance: c.BalanceCents}
	if now.Before(c.ExpiresAt) {
		b.Spendable = c.BalanceCents
	}
	if c.BalanceCents > 0 {
		b.Expiring = &Expiry{Cents: c.BalanceCents, ExpiresAt: c.ExpiresAt}
	}
	return b
}

// EntriesFilter narrows a wallet's statement to a period.
type EntriesFilter struct {
	From, To *time.Time // inclusive, exclusive
}

// Entries lists a customer's entries of one wallet, newest first, as the
// points statement does.
func (a *Service) Entries(ctx context.Context, customerID string, unit wallet.Unit, f EntriesFilter, after *ent.Cursor, first int) (*ent.WalletEntryConnection, error) {
	if err := Rules.Entries.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("customer_id", customerID, "", f); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	if walletentry.WalletValidator(walletentry.Wallet(unit)) != nil {
		return nil, apperr.NotFound("wallet")
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		return nil, apperr.Invalid("to", "must be after from")
	}
	if err := a.customerExists(ctx, customerID); err != nil {
		return nil, err
	}
	q := a.k.DB.Ent.WalletEntry.Query().Where(walletentry.CustomerID(customerID), walletentry.WalletEQ(walletentry.Wallet(unit)))
	if f.From != nil {
		q.Where(walletentry.CreatedAtGTE(f.From.UTC()))
	}
	if f.To != nil {
		q.Where(walletentry.CreatedAtLT(f.To.UTC()))
	}
	return q.Paginate(ctx, after, &first, nil, nil, ent.WithWalletEntryOrder(&ent.WalletEntryOrder{
		Direction: entgql.OrderDirectionDesc, Field: ent.DefaultWalletEntryOrder.Field,
	}))
}

// customerExists is nil for a customer of the viewer's tenant, not_found
// otherwise.
func (a *Service) customerExists(ctx context.Context, customerID string) error {
	if err := kernel.Guarded("customer_id", customerID); err != nil {
		return err
	}
	exists, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(customerID)).Exist(ctx)
	if err != nil {
		return err
	}
	if !exists {
		return apperr.NotFound("customer")
	}
	return nil
}
