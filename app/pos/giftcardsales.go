package pos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/saleitem"
)

// A till sells a gift card by scanning the code of a pre-printed card,
// issued inactive beforehand (POST /v1/gift-cards with inactive): the line
// names the card, is registered with the sale, and the card becomes
// spendable when the sale is processed. The line's value is the card's
// money, not a purchase: it earns no points, no bonus and no cashback.

// errGiftCardNotSellable is a gift card line the till cannot sell.
func errGiftCardNotSellable(field, msg string) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "gift_card_not_sellable", Field: field, Message: msg}
}

// errGiftCardSoldMeanwhile is a card a concurrent sale sold first.
var errGiftCardSoldMeanwhile = &apperr.Error{Kind: apperr.KindConflict, Code: "gift_card_not_sellable",
	Message: "a gift card of the sale was sold by another sale registered at the same moment"}

// giftCards resolves the cards the sale's lines sell (line id → card id):
// each an inactive card of the tenant, sold by no other sale, on a line of
// one unit without discounts whose price is the card's face value. The
// receipt already registered by storeID with the same card is the same
// sale sent again.
func (in SaleInput) giftCards(ctx context.Context, c *ent.Client, storeID string) (map[string]string, error) {
	var p apperr.Problems
	sold := map[string]string{}
	seen := map[string]bool{}
	for i, it := range in.Items {
		if it.GiftCardCode == "" {
			continue
		}
		f := "sale.items[" + strconv.Itoa(i) + "]."
		code, ok := giftcard.NormalizeCode(it.GiftCardCode)
		switch {
		case !ok:
			p.Add(f+"giftCard.code", "is not a gift card code")
			continue
		case seen[code]:
			p.Add(f+"giftCard.code", "the sale sells this card on another line")
			continue
		case !it.Quantity.Equal(decimal.NewFromInt(1)):
			p.Add(f+"quantity", "must be 1 on a gift card line: each card is a line")
			continue
		case len(it.Discounts) > 0:
			p.Add(f+"discounts", "a gift card line takes no discount")
			continue
		}
		seen[code] = true
		card, err := c.GiftCard.Query().Where(entgiftcard.CodeHash(giftcard.HashCode(code))).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: f + "giftCard.code", Message: "no gift card has this code"}
		}
		if err != nil {
			return nil, err
		}
		seller, err := c.SaleItem.Query().Where(saleitem.GiftCardID(card.ID)).QuerySale().Only(ctx)
		switch {
		case err == nil && seller.StoreID == storeID && seller.ExternalID == in.SaleID:
			sold[it.ID] = card.ID // the receipt sent again: answered as first registered
			continue
		case err == nil:
			return nil, errGiftCardNotSellable(f+"giftCard.code", "the gift card was sold by another sale")
		case !ent.IsNotFound(err):
			return nil, err
		}
		if card.Status != entgiftcard.StatusInactive {
			return nil, errGiftCardNotSellable(f+"giftCard.code", "the gift card is "+string(card.Status)+": only a card issued inactive is sold at the till")
		}
		if face := decimal.New(card.InitialCents, -2); !it.UnitPrice.Equal(face) {
			return nil, errGiftCardNotSellable(f+"unitPrice", "the gift card's face value is "+face.StringFixed(2))
		}
		sold[it.ID] = card.ID
	}
	return sold, p.Malformed()
}

// activateGiftCards makes the cards the sale sold spendable, in the sale's
// processing transaction: once per sale (Activate answers a replay with the
// first activation). A card cancelled, expired or activated otherwise since
// the sale was registered stays as it is: the sale is processed all the
// same, and the store settles that card with the buyer.
func (a *Service) activateGiftCards(ctx context.Context, c *ent.Client, s *ent.Sale) error {
	cards := giftcard.Cards{Dialect: a.k.DB.Dialect, Now: a.k.Now}
	for _, it := range s.Edges.Items {
		if it.GiftCardID == nil {
			continue
		}
		_, err := cards.Activate(ctx, c, *it.GiftCardID, s.ID)
		if err != nil && !errors.Is(err, giftcard.ErrAlreadyActive) && !errors.Is(err, giftcard.ErrExpired) &&
			!errors.Is(err, giftcard.ErrCancelled) {
			return err
		}
	}
	return nil
}

// giftCardsSold is the value of the gift cards items sell (a line of one
// unit, undiscounted): of the units given per line, or of every unit when
// units is nil.
func giftCardsSold(items []*ent.SaleItem, units map[string]decimal.Decimal) decimal.Decimal {
	v := decimal.Zero
	for _, it := range items {
		if it.GiftCardID == nil {
			continue
		}
		q := it.Quantity
		if units != nil {
			q = units[it.LineID]
		}
		v = v.Add(it.UnitPrice.Mul(q))
	}
	return v
}

// refuseSpentGiftCards refuses returning a gift card line whose card was
// spent, moved, loaded or has expired: a card comes back only as it was
// sold (or still inactive, its sale not processed yet).
func refuseSpentGiftCards(ctx context.Context, c *ent.Client, items map[string]*ent.SaleItem, lines []returnLine) error {
	for _, l := range lines {
		it := items[l.LineID]
		if it.GiftCardID == nil {
			continue
		}
		card, err := c.GiftCard.Get(ctx, *it.GiftCardID)
		if err != nil {
			return err
		}
		moved := card.Status == entgiftcard.StatusActive &&
			(card.BalanceCents != card.InitialCents || card.LoadedCents > 0 || card.RedeemedCents > 0)
		if moved || card.Status == entgiftcard.StatusExpired {
			return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "gift_card_not_returnable", Field: "items",
				Message: "the gift card of item " + l.LineID + " was spent, loaded or has expired: it is no longer returned with the sale"}
		}
	}
	return nil
}

// giftCardOf is the gift card line sells, nil for a line of goods.
func (w *saleWrite) giftCardOf(line string) *string {
	if id, ok := w.giftCards[line]; ok {
		return &id
	}
	return nil
}

// cancelReturnedGiftCards cancels the cards of the gift card lines a
// return brings back: the money goes back to the buyer, not to the card.
func (r *saleReturns) cancelReturnedGiftCards(ctx context.Context, ret *ent.SaleReturn) error {
	var lines []returnLine
	if err := json.Unmarshal(ret.Lines, &lines); err != nil {
		return fmt.Errorf("lines of return %s: %w", ret.ID, err)
	}
	cards := giftcard.Cards{Dialect: r.a.k.DB.Dialect, Now: r.a.k.Now}
	for _, l := range lines {
		for _, it := range r.items {
			if it.LineID != l.LineID || it.GiftCardID == nil {
				continue
			}
			_, err := cards.Cancel(ctx, r.c, *it.GiftCardID, string(ret.Kind)+" of sale "+r.s.ExternalID+" at "+r.store)
			if err != nil && !errors.Is(err, giftcard.ErrExpired) {
				return err
			}
		}
	}
	return nil
}
