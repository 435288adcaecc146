package pos

import (
	"context"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/wallethold"
)

// WalletsOffer is what the identified customer's money wallets may pay at
// the till: its cashback, and each gift card bound to it.
type WalletsOffer struct {
	Cashback  *wallets.CashbackOffer // nil: the programme takes no cashback at the till, or the wallet holds none
	GiftCards []CardOffer
}

// CardOffer is a bound gift card and what it may pay now (its balance less
// its holds), in cents.
type CardOffer struct {
	Card      *ent.GiftCard
	Available int64
}

// walletsOffer is what the customer's wallets may pay on a cart of total
// (nil: none); nil when they may pay nothing at the till: the answers of
// identify and authorize stay as they were for a customer without them.
func (a *Service) walletsOffer(ctx context.Context, t *ent.Tenant, customerID string, total *decimal.Decimal) (*WalletsOffer, error) {
	out := &WalletsOffer{}
	if slices.Contains(t.CashbackSpendChannels, wallethold.ChannelPdv.String()) {
		o, err := a.Wallets.CashbackOffer(ctx, a.k.DB.Ent, t, customerID, wallethold.ChannelPdv.String(), total)
		if err != nil {
			return nil, err
		}
		if o.Balance > 0 {
			out.Cashback = o
		}
	}
	cards, err := a.GiftCards.CustomerGiftCards(ctx, customerID)
	if err != nil {
		return nil, err
	}
	g := giftcard.Cards{Dialect: a.k.DB.Dialect, Now: a.k.Now}
	for _, card := range cards {
		n, err := g.Available(ctx, a.k.DB.Ent, card)
		if err != nil {
			return nil, err
		}
		out.GiftCards = append(out.GiftCards, CardOffer{Card: card, Available: n})
	}
	if out.Cashback == nil && len(out.GiftCards) == 0 {
		return nil, nil
	}
	return out, nil
}
