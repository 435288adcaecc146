package rest

import (
	"encoding/json"

	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
)

// readTillWalletHold reads POST …/wallets/holds: the cashback of the
// identified customer, or a gift card's balance, to reserve as the R$ they
// pay of a sale at a store.
func readTillWalletHold(b *binder) pos.WalletHoldInput {
	body := jsonBody[struct {
		SessionID    string           `json:"sessionId"`
		Customer     *posCustomerJSON `json:"customer"`
		Store        storeJSON        `json:"store"`
		Wallet       string           `json:"wallet"`
		GiftCardCode string           `json:"giftCardCode"`
		Amount       *jsonNumber      `json:"amount"`
		SaleAmount   *jsonNumber      `json:"saleAmount"`
	}](b)
	p := &b.problems
	return pos.WalletHoldInput{SessionID: body.SessionID, Customer: body.Customer.input(), StoreID: body.Store.ID,
		Wallet: body.Wallet, GiftCardCode: body.GiftCardCode, Amount: number(p, "amount", body.Amount),
		SaleAmount: number(p, "saleAmount", body.SaleAmount)}
}

// tillWalletHoldJSON is a till's wallet hold. Its fields are in the order
// of their names.
type tillWalletHoldJSON struct {
	Hold tillWalletHoldFields `json:"hold"`
}

type tillWalletHoldFields struct {
	Amount     json.Number `json:"amount"`
	ExpiresAt  string      `json:"expiresAt"`
	GiftCardID *string     `json:"giftCardId,omitempty"`
	ID         string      `json:"id"`
	SaleID     *string     `json:"saleId,omitempty"`
	Status     string      `json:"status"`
	Wallet     string      `json:"wallet"`
}

func renderTillWalletHold(h *ent.WalletHold) tillWalletHoldJSON {
	method := pos.MethodCashback
	if h.GiftCardID != nil {
		method = pos.MethodGiftCard
	}
	return tillWalletHoldJSON{Hold: tillWalletHoldFields{Amount: json.Number(wallet.Reais(h.Cents)),
		ExpiresAt: timestamp(h.ExpiresAt), GiftCardID: h.GiftCardID, ID: h.ID, SaleID: h.SaleID, Status: h.Status.String(),
		Wallet: method}}
}

// cashbackOfferJSON is what the identified customer's cashback may pay at
// the till (identify and authorize). Its fields are in the order of their
// names.
type cashbackOfferJSON struct {
	Available json.Number `json:"available"`
	Balance   json.Number `json:"balance"`
	MaxAmount json.Number `json:"maxAmount"`
	MinAmount json.Number `json:"minAmount"`
}

// cardOfferJSON is a gift card bound to the identified customer and what
// it may pay. Its fields are in the order of their names.
type cardOfferJSON struct {
	Available json.Number `json:"available"`
	Balance   json.Number `json:"balance"`
	ExpiresAt string      `json:"expiresAt"`
	ID        string      `json:"id"`
	Last4     string      `json:"last4"`
}

func renderWalletsOffer(o *pos.WalletsOffer) (*cashbackOfferJSON, []cardOfferJSON) {
	if o == nil {
		return nil, nil
	}
	var cashback *cashbackOfferJSON
	if c := o.Cashback; c != nil {
		cashback = &cashbackOfferJSON{Available: json.Number(wallet.Reais(c.Available)), Balance: json.Number(wallet.Reais(c.Balance)),
			MaxAmount: json.Number(wallet.Reais(c.MaxAmount)), MinAmount: json.Number(wallet.Reais(c.Min))}
	}
	var cards []cardOfferJSON
	for _, c := range o.GiftCards {
		cards = append(cards, cardOfferJSON{Available: json.Number(wallet.Reais(c.Available)),
			Balance: json.Number(wallet.Reais(c.Card.BalanceCents)), ExpiresAt: timestamp(c.Card.ExpiresAt), ID: c.Card.ID,
			Last4: c.Card.CodeLast4})
	}
	return cashback, cards
}
