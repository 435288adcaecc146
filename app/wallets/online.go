package wallets

import (
	"context"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
)

// orderSession is the key of an online order's cashback hold: one hold per
// order and wallet, asking again for it answers the same hold. The wallet
// in it leaves room for an order's gift cards beside its cashback.
const orderSession = "ecommerce:cashback:"

// OrderHoldInput asks to reserve the cashback that pays Amount (R$) of the
// customer's online order OrderID.
type OrderHoldInput struct {
	CustomerID  string
	Wallet      string // cashback
	OrderID     string
	Amount      *decimal.Decimal
	OrderAmount *decimal.Decimal // the order's payable value, for the programme's share; optional here
}

// OrderHold is an online order's wallet hold, with the wallet entry its
// capture debited or its rollback gave back (nil for a hold that moved no
// cents).
type OrderHold struct {
	Hold     *ent.WalletHold
	OrderID  string
	Entry    *ent.WalletEntry
	Replayed bool
}

// HoldCashback reserves, for ledger.HoldTTL, the cashback that pays
// in.Amount of an online order, under the programme's rules
// (PlaceCashbackHold); the same order asked again answers its hold
// (Replayed).
func (a *Service) HoldCashback(ctx context.Context, in OrderHoldInput) (*OrderHold, error) {
	if err := Rules.HoldCashback.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	if in.Wallet != string(wallet.Cashback) {
		p.Add("wallet", "must be cashback")
	}
	kernel.RequireID(&p, "order_id", in.OrderID)
	if len(in.OrderID) > maxHoldSession-len(orderSession) {
		p.Add("order_id", "must be at most %d characters to pay with cashback", maxHoldSession-len(orderSession))
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
	hold, replayed, err := a.PlaceCashbackHold(ctx, tenant, HoldRequest{CustomerID: in.CustomerID,
		Channel: wallethold.ChannelEcommerce.String(), Session: orderSession + in.OrderID, Amount: *in.Amount,
		Total: in.OrderAmount})
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
	o := ledger.HoldOwner{Channel: wallethold.ChannelEcommerce.String()}
	if order != "" {
		o.Session = orderSession + order
	}
	return o
}

// lockOnlineHold reads hold id under its customer's lock for owner: an
// unknown id is not found.
func (a *Service) lockOnlineHold(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, id string) (*ent.WalletHold, error) {
	hold, err := a.wallets().LockHold(ctx, c, owner, id)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("wallet hold")
	}
	return hold, err
}

// CaptureHold turns an online order's open hold into one debit of its
// wallet, the lots expiring first first, in one transaction: the programme
// must still take cashback online and the hold's amount be within its
// share of the order. Captured again (concurrently or not), it debits
// nothing more and answers the first capture (Replayed).
func (a *Service) CaptureHold(ctx context.Context, id string, in CaptureInput) (*OrderHold, error) {
	if err := Rules.CaptureHold.Allow(ctx); err != nil {
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
		c, w, owner := tx.Ent, a.wallets(), orderOwner(in.OrderID)
		hold, err := a.lockOnlineHold(ctx, c, owner, id)
		if err != nil {
			return err
		}
		switch hold.Status {
		case wallethold.StatusOpen:
			if !slices.Contains(tenant.CashbackSpendChannels, wallethold.ChannelEcommerce.String()) {
				return cashbackPaymentOff(wallethold.ChannelEcommerce.String())
			}
			if err := CheckCashbackShare(tenant, wallet.Amount(hold.Cents), *in.OrderAmount); err != nil {
				return err
			}
			if err := w.TakeHold(ctx, c, owner, id, hold.Cents, customer.ID(*hold.CustomerID), nil, &in.OrderID); err != nil {
				return err
			}
		case wallethold.StatusSpent: // SpendHold answers its debit
		default:
			return HoldUnavailable()
		}
		res, err := w.SpendHold(ctx, c, id, "paid order "+in.OrderID+" with cashback")
		if err != nil {
			return err
		}
		out = &OrderHold{OrderID: in.OrderID, Entry: res.Entry, Replayed: res.Replayed}
		out.Hold, err = c.WalletHold.Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, HoldError(err)
	}
	return out, nil
}

// RollbackHold undoes an online order's cashback payment (the order
// cancelled or refunded): a captured hold's cents come back in one refund
// entry, spendable at once (wallet.Refund); an open hold is released. A
// hold rolled back or released already answers as it is (Replayed).
func (a *Service) RollbackHold(ctx context.Context, id, reason string) (*OrderHold, error) {
	if err := Rules.RollbackHold.Allow(ctx); err != nil {
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
		c, w, owner := tx.Ent, a.wallets(), orderOwner("")
		hold, err := a.lockOnlineHold(ctx, c, owner, id)
		if err != nil {
			return err
		}
		out = &OrderHold{OrderID: strings.TrimPrefix(hold.Session, orderSession)}
		switch hold.Status {
		case wallethold.StatusOpen:
			out.Hold, err = w.ReleaseHold(ctx, c, owner, id)
			return err
		case wallethold.StatusTaken:
			return HoldUnavailable()
		case wallethold.StatusSpent, wallethold.StatusReleased: // refunded below, or answered as refunded
		}
		res, err := w.RefundHold(ctx, c, id, "cashback paid given back: order "+out.OrderID+" rolled back: "+strings.TrimSpace(reason))
		if err != nil {
			return err
		}
		out.Entry, out.Replayed = res.Entry, res.Replayed
		out.Hold, err = c.WalletHold.Get(ctx, id)
		return err
	})
	if err != nil {
		return nil, HoldError(err)
	}
	return out, nil
}
