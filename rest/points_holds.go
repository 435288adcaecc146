package rest

import (
	"encoding/json"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/loyalty"
)

// readOrderHold reads POST /v1/points/holds: the points to reserve for an
// online order, as the R$ they pay. The same order asked again answers its
// hold.
func readOrderHold(b *binder) loyalty.OrderHoldInput {
	body := jsonBody[struct {
		CustomerID  string      `json:"customer_id"`
		OrderID     string      `json:"order_id"`
		Amount      *jsonNumber `json:"amount"`
		OrderAmount *jsonNumber `json:"order_amount"`
	}](b)
	p := &b.problems
	return loyalty.OrderHoldInput{CustomerID: body.CustomerID, OrderID: body.OrderID,
		Amount: number(p, "amount", body.Amount), OrderAmount: number(p, "order_amount", body.OrderAmount)}
}

// captureInput is what a hold's capture names, whichever wallet it holds:
// the order, placed, and its payable total.
type captureInput = struct {
	OrderID     string
	OrderAmount *decimal.Decimal
}

// readCapture reads POST /v1/points/holds/{id}/capture and
// /v1/wallets/holds/{id}/capture.
func readCapture[In ~captureInput](b *binder) onPath[In] {
	body := jsonBody[struct {
		OrderID     string      `json:"order_id"`
		OrderAmount *jsonNumber `json:"order_amount"`
	}](b)
	return onPath[In]{id: pathID(b), in: In(captureInput{OrderID: body.OrderID,
		OrderAmount: number(&b.problems, "order_amount", body.OrderAmount)})}
}

// orderHoldJSON is an online order's points hold; its fields are in the
// order of their names.
type orderHoldJSON struct {
	replayMark
	Amount     json.Number    `json:"amount"`
	CustomerID string         `json:"customer_id"`
	Entry      *holdEntryJSON `json:"entry,omitempty"`
	ExpiresAt  string         `json:"expires_at"`
	HoldID     string         `json:"hold_id"`
	OrderID    string         `json:"order_id"`
	Points     int64          `json:"points"`
	Status     string         `json:"status"`
}

// holdEntryJSON is the ledger entry a hold's capture (debit) or rollback
// (refund) wrote.
type holdEntryJSON struct {
	EntryID    string `json:"entry_id"`
	Kind       string `json:"kind"`
	NewBalance int64  `json:"new_balance"`
	Points     int64  `json:"points"`
}

func renderOrderHold(h *loyalty.OrderHold) orderHoldJSON {
	out := orderHoldJSON{replayMark: replayMark{h.Replayed}, Amount: json.Number(h.Hold.Amount.StringFixed(2)),
		CustomerID: h.Hold.CustomerID, ExpiresAt: timestamp(h.Hold.ExpiresAt), HoldID: h.Hold.ID, OrderID: h.OrderID,
		Points: h.Hold.Points, Status: h.Hold.Status.String()}
	if e := h.Entry; e != nil {
		out.Entry = &holdEntryJSON{EntryID: e.ID, Kind: e.Kind.String(), NewBalance: e.BalanceAfter, Points: e.Points}
	}
	return out
}
