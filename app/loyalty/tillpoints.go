package loyalty

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/predicate"
)

// The points of sales at the till and of their returns move inside the
// point of sale's transaction (c is bound to it), so that a sale's points,
// redemptions and status, or a return's, commit together; its processing
// has locked the customer first (kernel.LockCustomer's lock order).

// SalePoints names a sale at the till whose points are credited.
type SalePoints struct {
	Tenant     *ent.Tenant // the customer's, read in the transaction
	CustomerID string
	SaleID     string
	Reason     string // what the entry says
	// Customer is the customer's row as the caller locked it in the
	// transaction, unchanged since; nil has CreditSale lock it again.
	Customer *ent.Customer
}

// CreditSale credits, once per sale, the points that paid (the money the
// sale was paid with) earns at the tenant's rate, and adds paid to the
// customer's lifetime value, also when it earns none (under R$ 1, or a rate
// of 0). The caller credits a sale once, as it processes it, the sale
// locked while RECEIVED (ledger.Credit's FirstMove). It answers the points
// of the sale's credit.
func (a *Service) CreditSale(ctx context.Context, c *ent.Client, sale SalePoints, paid decimal.Decimal) (int64, error) {
	if pts := points.Earned(paid, sale.Tenant.PointsPerReal); pts > 0 {
		res, err := a.ledger().Credit(ctx, c, ledger.Credit{
			CustomerID: sale.CustomerID, Kind: pointsentry.KindCredit, Points: pts, SourceKind: pointsentry.SourceKindSale,
			SourceID: &sale.SaleID, Amount: &paid, Reason: sale.Reason, Tenant: sale.Tenant, FirstMove: true,
			Locked: sale.Customer,
		})
		if err != nil {
			return 0, err
		}
		return res.Entry.Points, nil
	}
	if !paid.IsPositive() {
		return 0, nil
	}
	// No points, but the money was spent: the lifetime value grows all the
	// same.
	locked := sale.Customer
	if locked == nil {
		var err error
		if locked, err = a.k.LockCustomer(ctx, c, sale.CustomerID); err != nil {
			return 0, err
		}
	}
	return 0, c.Customer.UpdateOneID(sale.CustomerID).SetLifetimeValue(locked.LifetimeValue.Add(paid)).Exec(ctx)
}

// CreditSaleBonus credits the bonus points a sale's campaigns give, once per
// sale (as CreditSale), and answers the points of the sale's bonus entry.
func (a *Service) CreditSaleBonus(ctx context.Context, c *ent.Client, sale SalePoints, bonus int64) (int64, error) {
	res, err := a.ledger().Credit(ctx, c, ledger.Credit{
		CustomerID: sale.CustomerID, Kind: pointsentry.KindBonus, Points: bonus, SourceKind: pointsentry.SourceKindSale,
		SourceID: &sale.SaleID, Reason: sale.Reason, Tenant: sale.Tenant, FirstMove: true,
	})
	if err != nil {
		return 0, err
	}
	return res.Entry.Points, nil
}

// TakeHoldForSale has a sale at the till (saleID) take owner's open hold,
// of the customer whose matches, paying amount: its points count as held
// until SpendSaleHold debits them. A hold unknown, not open, lapsed, another
// customer's or amount's, or another owner's is refused (HoldError).
func (a *Service) TakeHoldForSale(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, holdID string,
	amount decimal.Decimal, whose predicate.Customer, saleID string) error {
	err := a.ledger().TakeHold(ctx, c, owner, holdID, amount, whose, &saleID, nil)
	if errors.Is(err, ledger.ErrHoldUnavailable) || errors.Is(err, ledger.ErrHoldForeign) {
		return HoldError(err)
	}
	return err
}

// SpendSaleHold debits the points of the hold a sale took (TakeHoldForSale),
// once, for the sale, the points expiring first first; a sale's hold spent
// already answers its entry (Replayed). Nil when nothing was debited: the
// points lapsed while held, or a debt is open.
func (a *Service) SpendSaleHold(ctx context.Context, c *ent.Client, holdID, saleID, reason string) (*PointsMovement, error) {
	res, err := a.ledger().SpendHold(ctx, c, holdID, pointsentry.SourceKindSale, saleID, reason)
	if err != nil || res == nil {
		return nil, err
	}
	return &PointsMovement{Entry: res.Entry, Replayed: res.Replayed}, nil
}

// ReturnPoints names points a return of a sale at the till moves.
type ReturnPoints struct {
	CustomerID string
	ReturnID   string
	Points     int64
	Reason     string // what the entry says
}

// ReverseReturnPoints takes back, once per return, the points of the sale
// the return undoes: from the pending points and the balance as far as they
// go, the rest owed as a debt; the refunded value leaves the lifetime value
// and the level is recomputed. A reversal of no points still records the
// refund. It answers the entry.
func (a *Service) ReverseReturnPoints(ctx context.Context, c *ent.Client, ret ReturnPoints, refunded decimal.Decimal) (*ent.PointsEntry, error) {
	res, err := a.ledger().Reverse(ctx, c, ledger.Reversal{
		CustomerID: ret.CustomerID, Points: ret.Points, SourceKind: pointsentry.SourceKindReturn, SourceID: &ret.ReturnID,
		Reason: ret.Reason, Amount: &refunded,
	})
	if err != nil {
		return nil, err
	}
	return res.Entry, nil
}

// RefundReturnPoints gives back, once per return, points the sale was paid
// with that the return brings back: spendable at once.
func (a *Service) RefundReturnPoints(ctx context.Context, c *ent.Client, ret ReturnPoints) error {
	_, err := a.ledger().Credit(ctx, c, ledger.Credit{
		CustomerID: ret.CustomerID, Kind: pointsentry.KindRefund, Points: ret.Points, SourceKind: pointsentry.SourceKindReturn,
		SourceID: &ret.ReturnID, Reason: ret.Reason,
	})
	return err
}
