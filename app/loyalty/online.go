package loyalty

import (
	"context"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/storage"
)

// orderSession is the key of an online order's hold: one hold per order,
// asking again for it answers the same hold.
const orderSession = ChannelEcommerce + ":"

// OrderHoldInput asks to reserve the points that pay Amount (R$) of the
// customer's online order OrderID.
type OrderHoldInput struct {
	CustomerID  string
	OrderID     string
	Amount      *decimal.Decimal
	OrderAmount *decimal.Decimal // the order's payable value, for the programme's share; optional here
}

// OrderHold is an online order's hold, with the ledger entry its capture
// debited or its rollback gave back (nil for a hold that moved no points).
type OrderHold struct {
	Hold     *ent.PointsHold
	OrderID  string
	Entry    *ent.PointsEntry
	Replayed bool
}

// orderOf is the order of an online hold.
func orderOf(h *ent.PointsHold) string { return strings.TrimPrefix(h.Session, orderSession) }

// HoldOrderPoints reserves, for ledger.HoldTTL, the points that pay
// in.Amount of an online order, under the programme's rules (HoldPoints);
// the same order asked again answers its hold (Replayed).
func (a *Service) HoldOrderPoints(ctx context.Context, in OrderHoldInput) (*OrderHold, error) {
	if err := Rules.HoldOrderPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	kernel.RequireID(&p, "order_id", in.OrderID)
	if len(in.OrderID) > maxHoldSession-len(orderSession) {
		p.Add("order_id", "must be at most %d characters to pay with points", maxHoldSession-len(orderSession))
	}
	if in.Amount == nil {
		p.Add("amount", "is required")
	}
	kernel.CheckOrderAmount(&p, "order_amount", in.OrderAmount, false)
	if err := p.Err(); err != nil {
		return nil, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	hold, replayed, err := a.HoldPoints(ctx, tenant, HoldRequest{CustomerID: in.CustomerID, Channel: ChannelEcommerce,
		Session: orderSession + in.OrderID, Amount: *in.Amount, Total: in.OrderAmount})
	if err != nil {
		return nil, err
	}
	return &OrderHold{Hold: hold, OrderID: in.OrderID, Replayed: replayed}, nil
}

// CaptureInput says the order a hold pays is placed, for OrderAmount in
// all.
type CaptureInput struct {
	OrderID     string
	OrderAmount *decimal.Decimal
}

// orderOwner owns an online order's hold ("" for order: any order's).
func orderOwner(order string) ledger.HoldOwner {
	o := ledger.HoldOwner{Channel: ChannelEcommerce}
	if order != "" {
		o.Session = orderSession + order
	}
	return o
}

// onlineHold reads, under its customer's lock, the hold id (not found:
// unknown), which must be order's hold (any order's when order is "") and
// taken by no sale (else ledger.ErrHoldForeign).
func (a *Service) onlineHold(ctx context.Context, c *ent.Client, id, order string) (*ent.PointsHold, error) {
	hold, err := c.PointsHold.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("points hold")
	}
	if err != nil {
		return nil, err
	}
	if _, err := a.k.LockCustomer(ctx, c, hold.CustomerID); err != nil {
		return nil, err
	}
	if hold, err = c.PointsHold.Get(ctx, id); err != nil { // re-read under the lock
		return nil, err
	}
	if !orderOwner(order).Owns(ledger.PointsHoldPlaced(hold)) {
		return nil, ledger.ErrHoldForeign
	}
	return hold, nil
}

// CaptureOrderPoints turns an online order's open hold into one debit of
// its points, the points expiring first first, in one transaction: the
// programme must still take points online and the hold's amount be within
// its share of the order. Captured again (concurrently or not), it debits
// nothing more and answers the first capture (Replayed).
func (a *Service) CaptureOrderPoints(ctx context.Context, id string, in CaptureInput) (*OrderHold, error) {
	if err := Rules.CaptureOrderPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	if err := kernel.CheckCapture(in.OrderID, in.OrderAmount); err != nil {
		return nil, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	var out *OrderHold
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		c := tx.Ent
		hold, err := a.onlineHold(ctx, c, id, in.OrderID)
		if err != nil {
			return err
		}
		out = &OrderHold{Hold: hold, OrderID: in.OrderID}
		if hold.Status == pointshold.StatusSpent {
			out.Replayed = true
			out.Entry, err = orderEntry(ctx, c, hold, pointsentry.KindDebit)
			return err
		}
		if hold.Status != pointshold.StatusOpen {
			return HoldUnavailable()
		}
		if !slices.Contains(tenant.PointsSpendChannels, ChannelEcommerce) {
			return pointsPaymentOff(ChannelEcommerce)
		}
		level, err := LevelFor(ctx, c, tenant, customer.ID(hold.CustomerID))
		if err != nil {
			return err
		}
		if err := CheckPointsShare(tenant, level, hold.Amount, *in.OrderAmount); err != nil {
			return err
		}
		l := a.ledger()
		if err := l.TakeHold(ctx, c, orderOwner(in.OrderID), id, hold.Amount, customer.ID(hold.CustomerID), nil, &in.OrderID); err != nil {
			return err
		}
		res, err := l.SpendHold(ctx, c, id, pointsentry.SourceKindOrder, in.OrderID, "paid order "+in.OrderID+" with points")
		switch {
		case err != nil:
			return err
		case res != nil && res.Replayed:
			return apperr.Conflict("order_already_debited", "order_id",
				"the order's points were debited already (POST /points/debit with this order_id): its hold was not spent")
		case res != nil:
			out.Entry = res.Entry
			err = outbox.Record(ctx, c, res.Entry.CreatedAt, hold.TenantID, outbox.PointsSpent, res.Entry.ID, map[string]any{
				"customer_id": hold.CustomerID, "points": -res.Entry.Points, "amount": hold.Amount.StringFixed(2),
				"order_id": in.OrderID, "hold_id": hold.ID, "channel": ChannelEcommerce, "balance_after": res.Entry.BalanceAfter,
			})
			if err != nil {
				return err
			}
			if err := a.Audiences.Refresh(ctx, tx, hold.CustomerID); err != nil { // the balance moved
				return err
			}
		}
		out.Hold, err = c.PointsHold.Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, HoldError(err)
	}
	return out, nil
}

// RollbackOrderPoints undoes an online order's points payment (the order
// cancelled or refunded): a captured hold's points come back in one
// `refund` entry, spendable at once; an open hold is released. A hold
// rolled back or released already answers as it is (Replayed).
func (a *Service) RollbackOrderPoints(ctx context.Context, id, reason string) (*OrderHold, error) {
	if err := Rules.RollbackOrderPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "reason", reason); err != nil {
		return nil, err
	}
	if strings.TrimSpace(reason) == "" || len(reason) > 500 {
		return nil, apperr.Invalid("reason", "is required (at most 500 characters)")
	}
	var out *OrderHold
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		c := tx.Ent
		hold, err := a.onlineHold(ctx, c, id, "")
		if err != nil {
			return err
		}
		out = &OrderHold{Hold: hold, OrderID: orderOf(hold)}
		switch hold.Status {
		case pointshold.StatusOpen:
			out.Hold, err = a.ledger().ReleaseHold(ctx, c, orderOwner(""), id)
			return err
		case pointshold.StatusReleased:
			out.Replayed = true
			out.Entry, err = orderEntry(ctx, c, hold, pointsentry.KindRefund)
			return err
		case pointshold.StatusTaken:
			return HoldUnavailable()
		case pointshold.StatusSpent: // its points come back below
		}
		debit, err := orderEntry(ctx, c, hold, pointsentry.KindDebit)
		if err != nil {
			return err
		}
		if debit != nil { // none when the points lapsed while held
			res, err := a.ledger().Credit(ctx, c, ledger.Credit{CustomerID: hold.CustomerID, Kind: pointsentry.KindRefund,
				Points: -debit.Points, SourceKind: pointsentry.SourceKindOrder, SourceID: &out.OrderID,
				Reason: "points paid given back: order " + out.OrderID + " rolled back: " + strings.TrimSpace(reason)})
			if err != nil {
				return err
			}
			out.Entry = res.Entry
			if err := a.Audiences.Refresh(ctx, tx, hold.CustomerID); err != nil { // the balance moved
				return err
			}
		}
		out.Hold, err = hold.Update().SetStatus(pointshold.StatusReleased).SetClosedAt(a.k.Stamp()).Save(ctx)
		return err
	})
	if err != nil {
		return nil, HoldError(err)
	}
	return out, nil
}

// orderEntry is the ledger entry of kind an online hold's order wrote (its
// debit, or the refund of its rollback), nil when there is none.
func orderEntry(ctx context.Context, c *ent.Client, h *ent.PointsHold, kind pointsentry.Kind) (*ent.PointsEntry, error) {
	e, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(h.CustomerID), pointsentry.KindEQ(kind),
		pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.SourceID(orderOf(h))).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return e, err
}
