package rest

import (
	"encoding/json"

	"github.com/fideliza/fideliza/app/wallets"
)

// readWalletHold reads POST /v1/wallets/holds: the R$ of a wallet to
// reserve for an online order. The same order asked again answers its
// hold.
func readWalletHold(b *binder) wallets.OrderHoldInput {
	body := jsonBody[struct {
		CustomerID  string      `json:"customer_id"`
		Wallet      string      `json:"wallet"`
		OrderID     string      `json:"order_id"`
		Amount      *jsonNumber `json:"amount"`
		OrderAmount *jsonNumber `json:"order_amount"`
	}](b)
	p := &b.problems
	return wallets.OrderHoldInput{CustomerID: body.CustomerID, Wallet: body.Wallet, OrderID: body.OrderID,
		Amount: number(p, "amount", body.Amount), OrderAmount: number(p, "order_amount", body.OrderAmount)}
}

// walletHoldJSON is an online order's wallet hold; its fields are in the
// order of their names.
type walletHoldJSON struct {
	replayMark
	Amount     json.Number          `json:"amount"`
	CustomerID *string              `json:"customer_id"`
	Entry      *walletHoldEntryJSON `json:"entry,omitempty"`
	ExpiresAt  string               `json:"expires_at"`
	HoldID     string               `json:"hold_id"`
	OrderID    string               `json:"order_id"`
	Status     string               `json:"status"`
	Wallet     string               `json:"wallet"`
}

// walletHoldEntryJSON is the wallet entry a hold's capture (debit) or
// rollback (refund) wrote.
type walletHoldEntryJSON struct {
	Amount       json.Number `json:"amount"`
	BalanceAfter json.Number `json:"balance_after"`
	EntryID      string      `json:"entry_id"`
	Kind         string      `json:"kind"`
}

func renderWalletHold(h *wallets.OrderHold) walletHoldJSON {
	out := walletHoldJSON{replayMark: replayMark{h.Replayed}, Amount: money(h.Hold.Cents), CustomerID: h.Hold.CustomerID,
		ExpiresAt: timestamp(h.Hold.ExpiresAt), HoldID: h.Hold.ID, OrderID: h.OrderID, Status: h.Hold.Status.String(),
		Wallet: h.Hold.Wallet.String()}
	if e := h.Entry; e != nil {
		out.Entry = &walletHoldEntryJSON{Amount: money(e.AmountCents), BalanceAfter: money(e.BalanceAfterCents), EntryID: e.ID,
			Kind: e.Kind.String()}
	}
	return out
}
