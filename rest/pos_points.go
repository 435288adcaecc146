package rest

import (
	"context"
	"encoding/json"

	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/ent"
)

// readPointsHold reads POST …/points/holds: the identified customer's
// points to reserve, as the R$ they pay of a sale at a store.
func readPointsHold(b *binder) pos.PointsHoldInput {
	body := jsonBody[struct {
		SessionID  string           `json:"sessionId"`
		Customer   *posCustomerJSON `json:"customer"`
		Store      storeJSON        `json:"store"`
		Amount     *jsonNumber      `json:"amount"`
		SaleAmount *jsonNumber      `json:"saleAmount"`
	}](b)
	p := &b.problems
	return pos.PointsHoldInput{SessionID: body.SessionID, Customer: body.Customer.input(), StoreID: body.Store.ID,
		Amount: number(p, "amount", body.Amount), SaleAmount: number(p, "saleAmount", body.SaleAmount)}
}

// readHoldID reads the hold of …/points/holds/{holdId}.
func readHoldID(b *binder) string { return b.path("holdId") }

// pointsHoldJSON is a points hold. Its fields are in the order of their
// names.
type pointsHoldJSON struct {
	Hold holdJSON `json:"hold"`
}

type holdJSON struct {
	Amount    json.Number `json:"amount"`
	ExpiresAt string      `json:"expiresAt"`
	ID        string      `json:"id"`
	Points    int64       `json:"points"`
	SaleID    *string     `json:"saleId,omitempty"`
	Status    string      `json:"status"`
}

func renderHold(h *ent.PointsHold) pointsHoldJSON {
	return pointsHoldJSON{Hold: holdJSON{Amount: json.Number(h.Amount.StringFixed(2)), ExpiresAt: timestamp(h.ExpiresAt),
		ID: h.ID, Points: h.Points, SaleID: h.SaleID, Status: h.Status.String()}}
}

// holdOp adapts a hold's operation (HoldPoints, HoldWallet) to an
// endpoint: a session asked again shows in the hold answered, the same one.
func holdOp[I, H any](op func(context.Context, I) (H, bool, error)) func(context.Context, I) (H, error) {
	return func(ctx context.Context, in I) (H, error) {
		h, _, err := op(ctx, in)
		return h, err
	}
}

// pointsOfferJSON is what the identified customer may pay with points now
// (identify and authorize, when the programme takes points at the till).
// Its fields are in the order of their names.
type pointsOfferJSON struct {
	Available int64       `json:"available"`
	Balance   int64       `json:"balance"`
	MaxAmount json.Number `json:"maxAmount"`
	MinPoints int64       `json:"minPoints"`
	Value     json.Number `json:"value"`
}

func renderOffer(o *loyalty.PointsOffer) *pointsOfferJSON {
	if o == nil || !o.Allowed {
		return nil
	}
	return &pointsOfferJSON{Available: o.Available, Balance: o.Balance, MaxAmount: json.Number(o.MaxAmount.StringFixed(2)),
		MinPoints: o.MinPoints, Value: json.Number(o.Value.String())}
}
