package giftcards

import (
	"context"
	"errors"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
)

// CardHoldRequest asks to reserve Cents of the card of Code: Hold names
// the channel, session, store and the customer paying (none: whoever
// knows the code).
type CardHoldRequest struct {
	Code string
	Hold wallet.Hold // its Unit and CardID are set here
}

// PlaceCardHold reserves cents of the card a code names (looked up under
// the client's quota of guesses, as GiftCardByCode does) in a transaction
// of its own; replayed is a session asked again. Called by the contexts
// that pay with cards (the till, online orders).
func (a *Service) PlaceCardHold(ctx context.Context, in CardHoldRequest) (hold *ent.WalletHold, replayed bool, err error) {
	if err := Rules.PlaceCardHold.Allow(ctx); err != nil {
		return nil, false, err
	}
	card, err := a.byCode(ctx, in.Code)
	if err != nil {
		return nil, false, err
	}
	h := in.Hold
	h.Unit, h.CardID = wallet.GiftCard, card.ID
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		hold, replayed, err = a.cards().PlaceHold(ctx, tx.Ent, h)
		return err
	})
	return hold, replayed, CardHoldError(err)
}

// CardHoldError maps a card hold's errors to the operations' answers.
func CardHoldError(err error) error {
	switch {
	case errors.Is(err, wallet.ErrHoldUnavailable):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "gift_card_hold_unavailable", Field: "holdId",
			Message: "the gift card hold is unknown, has lapsed or was released, is another amount's, or a sale or order took it already"}
	case errors.Is(err, wallet.ErrHoldForeign):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "gift_card_hold_foreign", Field: "holdId",
			Message: "the gift card hold belongs to another channel, order or store: only what it was placed for may use it"}
	case errors.Is(err, wallet.ErrHoldSession):
		return apperr.Conflict("gift_card_hold_session", "sessionId",
			"the session already holds other cents of a gift card, or of another card: release that hold or use another session")
	case errors.Is(err, giftcard.ErrInsufficient):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "gift_card_insufficient", Field: "amount",
			Message: "the gift card's balance less what is already held of it is lower than the amount asked"}
	case errors.Is(err, wallet.ErrSourceSpent):
		return apperr.Conflict("gift_card_already_paid", "holdId",
			"the sale or order already paid with another hold of the gift card: it pays once with each card")
	}
	return cardError(err)
}
