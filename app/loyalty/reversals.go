package loyalty

import (
	"context"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/storage"
)

// ReverseInput is a refund of an order, whole (Amount nil) or of Amount in
// R$.
type ReverseInput struct {
	CustomerID, OrderID, ReversalID string
	Amount                          *decimal.Decimal
	Reason                          string
}

func (in ReverseInput) validate() error {
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	kernel.RequireID(&p, "order_id", in.OrderID)
	kernel.RequireID(&p, "reversal_id", in.ReversalID)
	if amt := in.Amount; amt != nil && (!amt.IsPositive() || !amt.Equal(amt.Round(2)) || amt.GreaterThan(decimal.NewFromInt(kernel.MaxOrderAmount))) {
		p.Add("amount", "must be a positive value in R$ with at most 2 decimal places, up to %d", kernel.MaxOrderAmount)
	}
	if strings.TrimSpace(in.Reason) == "" || len(in.Reason) > 500 {
		p.Add("reason", "is required (at most 500 characters)")
	}
	return p.Err()
}

// orderPoints is what an order credited a customer and what was reversed
// of it so far.
type orderPoints struct {
	credit   *ent.PointsEntry
	earned   int64           // the order's credit and the bonuses of its redemptions
	reversed int64           // taken back by earlier reversals
	refunded decimal.Decimal // refunded by earlier reversals
}

func loadOrderPoints(ctx context.Context, c *ent.Client, customerID, orderID string) (*orderPoints, error) {
	credit, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(customerID), pointsentry.KindEQ(pointsentry.KindCredit),
		pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.SourceID(orderID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.Invalid("order_id", "no points were credited to this customer for this order")
	}
	if err != nil {
		return nil, err
	}
	o := &orderPoints{credit: credit, earned: credit.Points}
	reds, err := c.Redemption.Query().Where(redemption.CustomerID(customerID), redemption.OrderID(orderID)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(reds) > 0 {
		bonuses, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(customerID), pointsentry.KindEQ(pointsentry.KindBonus),
			pointsentry.SourceKindEQ(pointsentry.SourceKindRedemption), pointsentry.SourceIDIn(reds...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range bonuses {
			o.earned += b.Points
		}
	}
	prior, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(customerID), pointsentry.KindEQ(pointsentry.KindReversal),
		pointsentry.OrderID(orderID)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range prior {
		o.reversed -= e.Points
		if e.Amount != nil {
			o.refunded = o.refunded.Add(*e.Amount)
		}
	}
	return o, nil
}

// ReversePoints takes back the points an order earned (its credit and the
// bonuses of its redemptions): all of them when the refund is whole, else
// as many as the whole reais refunded earned. Points already spent become a
// debt. A whole refund also rolls back the order's redemptions (their
// cashback not yet credited is cancelled). The same reversal_id again
// answers the first reversal.
func (a *Service) ReversePoints(ctx context.Context, in ReverseInput) (*PointsMovement, error) {
	if err := Rules.ReversePoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	var out *PointsMovement
	var event map[string]any
	err := a.pointsTx(ctx, in.CustomerID, func(tx storage.Tx) error {
		c := tx.Ent
		l := a.ledger()
		cust, err := a.k.LockCustomer(ctx, c, in.CustomerID)
		if err != nil {
			return err
		}
		prior, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(cust.ID), pointsentry.KindEQ(pointsentry.KindReversal),
			pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.SourceID(in.ReversalID)).Only(ctx)
		if err == nil {
			out = &PointsMovement{Entry: prior, Replayed: true}
			return nil
		}
		if !ent.IsNotFound(err) {
			return err
		}
		o, err := loadOrderPoints(ctx, c, cust.ID, in.OrderID)
		if err != nil {
			return err
		}
		orderAmount := o.credit.Amount
		var refund *decimal.Decimal
		var target int64 // the points the customer keeps
		switch {
		case in.Amount == nil && o.reversed >= o.earned && (orderAmount == nil || !o.refunded.LessThan(*orderAmount)):
			return apperr.Invalid("order_id", "the order's points are already reversed")
		case in.Amount == nil:
			if orderAmount != nil {
				rest := orderAmount.Sub(o.refunded)
				refund = &rest
			}
		case orderAmount == nil:
			return apperr.Invalid("amount", "the order was credited in points, without an amount: reverse it whole (leave amount out)")
		default:
			left := orderAmount.Sub(o.refunded)
			if in.Amount.GreaterThan(left) {
				return apperr.Invalid("amount", "at most R$ %s of the order remains to refund", left.StringFixed(2))
			}
			refund = in.Amount
			if paid := orderAmount.Floor(); paid.IsPositive() {
				kept := left.Sub(*in.Amount).Floor()
				target = min(o.earned, decimal.NewFromInt(o.earned).Mul(kept).Div(paid).Floor().IntPart())
			}
		}
		pts := max(o.earned-o.reversed-target, 0)
		res, err := l.Reverse(ctx, c, ledger.Reversal{
			CustomerID: cust.ID, Points: pts, SourceKind: pointsentry.SourceKindOrder, SourceID: &in.ReversalID,
			OrderID: &in.OrderID, Reason: strings.TrimSpace(in.Reason), Amount: refund,
		})
		if err != nil {
			return err
		}
		out = &PointsMovement{Entry: res.Entry}
		if in.Amount == nil {
			if err := a.rollBackOrder(ctx, c, cust.ID, in.OrderID, "order "+in.OrderID+" refunded"); err != nil {
				return err
			}
		}
		if pts == 0 {
			return nil
		}
		event = map[string]any{
			"customer_id": cust.ID, "points": pts, "balance_after": res.Entry.BalanceAfter, "debt_after": res.Entry.DebtAfter,
			"source": "order", "source_id": in.ReversalID, "order_id": in.OrderID,
		}
		return outbox.Record(ctx, c, a.k.Stamp(), cust.TenantID, outbox.PointsReversed, cust.ID, event)
	})
	if err == nil && event != nil {
		a.k.Recorder().PointsReversed(kernel.SourceAPI, -out.Entry.Points)
	}
	return out, ledgerError(err)
}

// rollBackOrder rolls back an order's redemptions. Their bonus points and
// cashback were counted in the order's reversal; a cashback not yet
// credited will not be.
func (a *Service) rollBackOrder(ctx context.Context, c *ent.Client, customerID, orderID, reason string) error {
	reds, err := c.Redemption.Query().Where(redemption.CustomerID(customerID), redemption.OrderID(orderID),
		redemption.RolledBackAtIsNil()).All(ctx)
	if err != nil {
		return err
	}
	for _, red := range reds {
		if err := a.Campaigns.RollBack(ctx, c, red, reason, a.k.Stamp()); err != nil {
			return err
		}
	}
	return nil
}

// RollbackRedemption undoes a redemption (its order cancelled, say): it no
// longer counts toward the campaign's limits, the bonus points or cashback
// it credited are taken back (a debt where spent), and a cashback not yet
// credited never will be. A redemption already rolled back answers as it
// is.
func (a *Service) RollbackRedemption(ctx context.Context, id, reason string) (*ent.Redemption, error) {
	if err := Rules.RollbackRedemption.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "reason", reason); err != nil {
		return nil, err
	}
	if strings.TrimSpace(reason) == "" || len(reason) > 500 {
		return nil, apperr.Invalid("reason", "is required (at most 500 characters)")
	}
	var out *ent.Redemption
	var reversed int64
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		reversed = 0 // a run again after a conflict counts afresh
		c := tx.Ent
		red, err := c.Redemption.Get(ctx, id)
		if ent.IsNotFound(err) {
			return apperr.NotFound("redemption")
		}
		if err != nil {
			return err
		}
		l := a.ledger()
		if _, err := a.k.LockCustomer(ctx, c, red.CustomerID); err != nil {
			return err
		}
		if red, err = c.Redemption.Get(ctx, id); err != nil || red.RolledBackAt != nil {
			out = red
			return err
		}
		now := a.k.Stamp()
		if err := a.Campaigns.RollBack(ctx, c, red, strings.TrimSpace(reason), now); err != nil {
			return err
		}
		credited, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(red.CustomerID), pointsentry.KindEQ(pointsentry.KindBonus),
			pointsentry.SourceKindEQ(pointsentry.SourceKindRedemption), pointsentry.SourceID(red.ID)).All(ctx)
		if err != nil {
			return err
		}
		for _, e := range credited {
			reversed += e.Points
		}
		if reversed > 0 {
			res, err := l.Reverse(ctx, c, ledger.Reversal{
				CustomerID: red.CustomerID, Points: reversed, SourceKind: pointsentry.SourceKindRedemption, SourceID: &red.ID,
				Reason: "redemption rolled back: " + strings.TrimSpace(reason),
			})
			if err != nil {
				return err
			}
			err = outbox.Record(ctx, c, now, red.TenantID, outbox.PointsReversed, red.CustomerID, map[string]any{
				"customer_id": red.CustomerID, "points": reversed, "balance_after": res.Entry.BalanceAfter,
				"debt_after": res.Entry.DebtAfter, "source": "redemption", "source_id": red.ID,
			})
			if err != nil {
				return err
			}
			if err := a.Audiences.Refresh(ctx, tx, red.CustomerID); err != nil {
				return err
			}
		}
		// Cashback credited in R$ (a programme that keeps cashback in the
		// wallet) is taken back from the wallet the same way.
		if _, err := a.Wallets.ReverseCampaignCashback(ctx, tx, red, strings.TrimSpace(reason)); err != nil {
			return err
		}
		out, err = c.Redemption.Query().Where(redemption.ID(red.ID)).WithCampaign().Only(ctx)
		return err
	})
	if err == nil {
		a.k.Recorder().PointsReversed(kernel.SourceRedemption, reversed)
	}
	return out, ledgerError(err)
}
