package wallets

import (
	"context"
	"errors"

	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
)

// A sale at the till pays with the cashback wallet and with gift cards
// through holds: the till places one (PlaceCashbackHold, or the gift cards
// context's PlaceCardHold), the sale's registration takes it
// (TakeSaleHold), its processing spends it (SpendSaleHold), and a return
// gives back each wallet's share (returns.go).

// cards are the gift cards on the service's database and clock.
func (a *Service) cards() giftcard.Cards {
	return giftcard.Cards{Dialect: a.k.DB.Dialect, Now: a.k.Now}
}

// holdError maps a hold's errors as its wallet's answers.
func holdError(u wallet.Unit, err error) error {
	if u == wallet.GiftCard {
		return giftcards.CardHoldError(err)
	}
	return HoldError(err)
}

// TakeSaleHold has the sale saleID of owner take hold id of wallet u,
// paying cents, inside the registration's transaction c: a cashback hold
// must be the customer's matched by whose, a gift card's anyone's (its code
// paid). A hold of another wallet is unavailable.
func (a *Service) TakeSaleHold(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, u wallet.Unit, id string,
	cents int64, whose predicate.Customer, saleID string) error {
	if err := Rules.TakeSaleHold.Allow(ctx); err != nil {
		return err
	}
	err := a.wallets().TakeHold(ctx, c, owner, id, cents, whose, &saleID, nil)
	if err == nil {
		var n int
		n, err = c.WalletHold.Query().Where(wallethold.ID(id), wallethold.WalletEQ(wallethold.Wallet(u))).Count(ctx)
		if err == nil && n == 0 {
			err = wallet.ErrHoldUnavailable // the transaction rolls the take back
		}
	}
	return holdError(u, err)
}

// SpentHold is what spending a sale's hold debited: cents (0: nothing, the
// wallet or card short or gone since it was held), once.
type SpentHold struct {
	Cents    int64
	Replayed bool // spent before: a replayed job
}

// SpendSaleHold debits a hold a sale took, once, inside the processing's
// transaction c: the cashback wallet (cashback.spent) or the gift card
// (gift_card.redeemed) it holds.
func (a *Service) SpendSaleHold(ctx context.Context, c *ent.Client, id, reason string) (*SpentHold, error) {
	if err := Rules.SpendSaleHold.Allow(ctx); err != nil {
		return nil, err
	}
	hold, err := c.WalletHold.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if hold.GiftCardID != nil {
		res, err := a.cards().SpendHold(ctx, c, id, reason)
		if err != nil || res.Entry == nil {
			return &SpentHold{Replayed: res != nil && res.Replayed}, err
		}
		return &SpentHold{Cents: -res.Entry.AmountCents, Replayed: res.Replayed}, nil
	}
	res, err := a.wallets().SpendHold(ctx, c, id, reason)
	if err != nil || res.Entry == nil {
		return &SpentHold{Replayed: res != nil && res.Replayed}, err
	}
	return &SpentHold{Cents: -res.Entry.AmountCents, Replayed: res.Replayed}, nil
}

// ReleaseTillHold gives an open hold of owner back before it lapses, in a
// transaction of its own.
func (a *Service) ReleaseTillHold(ctx context.Context, owner ledger.HoldOwner, id string) (hold *ent.WalletHold, err error) {
	if err := Rules.ReleaseTillHold.Allow(ctx); err != nil {
		return nil, err
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		hold, err = a.wallets().ReleaseHold(ctx, tx.Ent, owner, id)
		return err
	})
	if err != nil {
		return nil, HoldError(err)
	}
	return hold, nil
}

// GiveBack is what a return (ReturnID) of a sale gives back to each wallet
// the sale paid with: Share says how many of the cents a wallet paid this
// return brings back.
type GiveBack struct {
	SaleID, ReturnID, StoreCode, Reason string
	Share                               func(paid int64) int64
}

// GiveBackSale refunds, inside the return's transaction c, each wallet the
// sale's processing debited (its cashback, each gift card) its share of
// what the return brings back, once per return (the refund's source is
// the return): a replayed job finds it given back. A card expired or
// cancelled since takes nothing back (its balance is gone with it).
func (a *Service) GiveBackSale(ctx context.Context, c *ent.Client, g GiveBack) error {
	if err := Rules.GiveBackSale.Allow(ctx); err != nil {
		return err
	}
	cashback, err := c.WalletEntry.Query().Where(walletentry.WalletEQ(walletentry.WalletCashback),
		walletentry.KindEQ(walletentry.KindDebit), walletentry.SourceKindEQ(walletentry.SourceKindSale),
		walletentry.SourceID(g.SaleID)).All(ctx)
	if err != nil {
		return err
	}
	for _, e := range cashback {
		if n := g.Share(-e.AmountCents); n > 0 {
			_, err := a.wallets().Refund(ctx, c, wallet.Move{CustomerID: e.CustomerID, Unit: wallet.Cashback, Cents: n,
				SourceKind: walletentry.SourceKindReturn, SourceID: &g.ReturnID, StoreCode: g.StoreCode, Reason: g.Reason})
			if err != nil {
				return err
			}
		}
	}
	cards, err := c.GiftCardEntry.Query().Where(giftcardentry.KindEQ(giftcardentry.KindDebit),
		giftcardentry.SourceKindEQ(giftcardentry.SourceKindSale), giftcardentry.SourceID(g.SaleID)).All(ctx)
	if err != nil {
		return err
	}
	for _, e := range cards {
		if n := g.Share(-e.AmountCents); n > 0 {
			_, err := a.cards().Refund(ctx, c, giftcard.Move{CardID: e.GiftCardID, Cents: n,
				SourceKind: giftcardentry.SourceKindReturn, SourceID: g.ReturnID, StoreCode: g.StoreCode, Reason: g.Reason})
			if err != nil && !errors.Is(err, giftcard.ErrExpired) && !errors.Is(err, giftcard.ErrCancelled) {
				return err
			}
		}
	}
	return nil
}
