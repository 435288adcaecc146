package giftcards

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/storage"
)

// LoadInput adds Amount R$ to a card. LoadID is the caller's key of the
// load: the same key loads once and answers the first load.
type LoadInput struct {
	Amount    *decimal.Decimal
	LoadID    string
	StoreCode string
	Reason    string
}

// Moved is a card after a move and the entry the move wrote (nil when it
// moved no cents), Replayed when an earlier request had made it.
type Moved = giftcard.Result

// LoadGiftCard loads (reloads) an active card, once per load_id.
func (a *Service) LoadGiftCard(ctx context.Context, id string, in LoadInput) (*Moved, error) {
	if err := Rules.LoadGiftCard.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "id", id)
	kernel.RequireID(&p, "load_id", in.LoadID)
	cents := Cents(&p, "amount", in.Amount)
	reasonAndStore(&p, in.Reason, in.StoreCode)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return a.move(ctx, func(tx storage.Tx) (*Moved, error) {
		return a.cards().Load(ctx, tx.Ent, giftcard.Move{CardID: id, Cents: cents, SourceKind: giftcardentry.SourceKindLoad,
			SourceID: in.LoadID, StoreCode: in.StoreCode, Reason: in.Reason})
	})
}

// BindGiftCard binds a card to a customer of the tenant: listed among the
// customer's wallets from then on, and no longer transferable. Bound again
// to the same customer it answers the card as it is (Replayed).
func (a *Service) BindGiftCard(ctx context.Context, id, customerID string) (*Moved, error) {
	if err := Rules.BindGiftCard.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "customer_id", customerID); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "id", id)
	kernel.RequireID(&p, "customer_id", customerID)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return a.move(ctx, func(tx storage.Tx) (*Moved, error) { return a.cards().Bind(ctx, tx.Ent, id, customerID) })
}

// TransferInput moves Amount R$ (nil: the whole balance) of a bearer card
// to the card ToGiftCardID. TransferID is the caller's key: the same key
// transfers once and answers the first transfer.
type TransferInput struct {
	ToGiftCardID string
	Amount       *decimal.Decimal
	TransferID   string
	StoreCode    string
	Reason       string
}

// Transferred is both cards after a transfer and its two entries.
type Transferred = giftcard.Transferred

// TransferGiftCard moves the balance of an unbound card to another active
// card (giftcard.Cards.Transfer's rule).
func (a *Service) TransferGiftCard(ctx context.Context, id string, in TransferInput) (*Transferred, error) {
	if err := Rules.TransferGiftCard.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "id", id)
	kernel.RequireID(&p, "to_gift_card_id", in.ToGiftCardID)
	kernel.RequireID(&p, "transfer_id", in.TransferID)
	var cents int64
	if in.Amount != nil {
		cents = Cents(&p, "amount", in.Amount)
	}
	reasonAndStore(&p, in.Reason, in.StoreCode)
	if err := p.Err(); err != nil {
		return nil, err
	}
	var out *Transferred
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		out, err = a.cards().Transfer(ctx, tx.Ent, giftcard.Transfer{FromID: id, ToID: in.ToGiftCardID, Cents: cents,
			TransferID: in.TransferID, StoreCode: in.StoreCode, Reason: in.Reason})
		return err
	})
	if errors.Is(err, giftcard.ErrNotFound) {
		return nil, apperr.NotFound("gift card") // either card
	}
	return out, cardError(err)
}

// CancelGiftCard withdraws a card that has not expired, taking what it
// holds; cancelled again it answers the card as it is (Replayed).
func (a *Service) CancelGiftCard(ctx context.Context, id, reason string) (*Moved, error) {
	if err := Rules.CancelGiftCard.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "reason", reason); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "id", id)
	reasonAndStore(&p, reason, "")
	if err := p.Err(); err != nil {
		return nil, err
	}
	return a.move(ctx, func(tx storage.Tx) (*Moved, error) { return a.cards().Cancel(ctx, tx.Ent, id, reason) })
}

// move runs one move of a card in a transaction, its errors as the
// operations answer them.
func (a *Service) move(ctx context.Context, fn func(tx storage.Tx) (*Moved, error)) (*Moved, error) {
	var out *Moved
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		return nil, cardError(err)
	}
	return out, nil
}

func reasonAndStore(p *apperr.Problems, reason, store string) {
	if len(reason) > 500 {
		p.Add("reason", "must be at most 500 characters")
	}
	if len(store) > 128 {
		p.Add("store_code", "must be at most 128 characters")
	}
}

// cardError maps the cards' errors to the operations' answers.
func cardError(err error) error {
	conflict := func(code string, e error) error {
		return &apperr.Error{Kind: apperr.KindConflict, Code: code, Message: e.Error()}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, giftcard.ErrNotFound):
		return apperr.NotFound("gift card")
	case errors.Is(err, ledger.ErrCustomerNotFound):
		return apperr.NotFound("customer")
	case errors.Is(err, giftcard.ErrInsufficient):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "insufficient_balance", Field: "amount", Message: err.Error()}
	case errors.Is(err, giftcard.ErrBalanceLimit):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "gift_card_balance_limit", Field: "amount",
			Message: "a gift card holds at most R$ " + wallet.Reais(giftcard.MaxBalanceCents)}
	case errors.Is(err, giftcard.ErrSameCard):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "validation_error", Field: "to_gift_card_id", Message: "must be another card"}
	case errors.Is(err, giftcard.ErrTransferKeyReused):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "transfer_id_reused", Field: "transfer_id", Message: err.Error()}
	case errors.Is(err, giftcard.ErrInactive):
		return conflict("gift_card_inactive", err)
	case errors.Is(err, giftcard.ErrExpired):
		return conflict("gift_card_expired", err)
	case errors.Is(err, giftcard.ErrCancelled):
		return conflict("gift_card_cancelled", err)
	case errors.Is(err, giftcard.ErrBound):
		return conflict("gift_card_bound", err)
	case errors.Is(err, giftcard.ErrBoundToAnother):
		return conflict("gift_card_bound_to_another", err)
	case ent.IsConstraintError(err):
		// Two requests with one key between different cards at once: the
		// entries' unique index kept one.
		return apperr.Conflict("gift_card_busy", "", "another move of the same key was made at the same time; send the request again")
	}
	return err
}
