package wallets

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
)

// maxHoldSession bounds the caller's key of a hold (the column's length).
const maxHoldSession = 128

// CashbackOffer is what a customer's cashback wallet may pay now on one
// channel, in cents.
type CashbackOffer struct {
	Allowed   bool            // the programme takes cashback on the channel
	Balance   int64           // the wallet's balance
	Available int64           // the balance less the cents held and those past their expiry; none while a debt is open
	Min       int64           // the fewest cents spent at once
	MaxShare  decimal.Decimal // the largest share of a sale or order payable with cashback
	MaxAmount int64           // the most payable on the cart (without one: what is available); 0 below Min
}

// CashbackOffer is what the customer's cashback wallet may pay on channel
// for a sale or order of total (nil: no cart), read through c (the
// database's client or the caller's transaction), with no lock: a hold
// checks again under the customer's lock. t is the customer's tenant.
func (a *Service) CashbackOffer(ctx context.Context, c *ent.Client, t *ent.Tenant, customerID, channel string,
	total *decimal.Decimal) (*CashbackOffer, error) {
	o := &CashbackOffer{Allowed: slices.Contains(t.CashbackSpendChannels, channel), Min: wallet.Cents(t.CashbackSpendMin),
		MaxShare: t.CashbackSpendMaxShare}
	funds, err := wallet.Available(ctx, c, customerID, wallet.Cashback, a.k.Stamp())
	if err != nil {
		return nil, err
	}
	o.Balance, o.Available = funds.Balance, funds.Available
	if !o.Allowed {
		return o, nil
	}
	most := o.Available
	if total != nil {
		most = min(most, total.Mul(o.MaxShare).Shift(2).Floor().IntPart())
	}
	if most >= max(o.Min, 1) {
		o.MaxAmount = most
	}
	return o, nil
}

// HoldRequest asks to reserve the cashback that pays Amount (R$).
type HoldRequest struct {
	CustomerID string
	Channel    string // pdv or ecommerce
	Session    string // the caller's key: asking again answers the same hold
	StoreCode  string
	Amount     decimal.Decimal
	Total      *decimal.Decimal // the sale's or order's value, for the programme's share; nil: not checked here
}

// PlaceCashbackHold reserves the cashback that pays in.Amount for
// ledger.HoldTTL, in a transaction of its own: the channel must take
// cashback, the amount be at least the programme's fewest, within its share
// of the total, and within what the wallet has available. replayed is a
// session asked again. t is the viewer's tenant.
func (a *Service) PlaceCashbackHold(ctx context.Context, t *ent.Tenant, in HoldRequest) (hold *ent.WalletHold, replayed bool, err error) {
	var p apperr.Problems
	if s := strings.TrimSpace(in.Session); s == "" || len(in.Session) > maxHoldSession {
		p.Add("sessionId", "is required, at most %d characters", maxHoldSession)
	}
	if !in.Amount.IsPositive() || !in.Amount.Equal(in.Amount.Truncate(2)) {
		p.Add("amount", "must be positive, in whole cents")
	}
	if err := p.Err(); err != nil {
		return nil, false, err
	}
	switch {
	case !slices.Contains(t.CashbackSpendChannels, in.Channel):
		return nil, false, cashbackPaymentOff(in.Channel)
	case in.Amount.LessThan(t.CashbackSpendMin):
		return nil, false, &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_below_minimum", Field: "amount",
			Message: "R$ " + in.Amount.StringFixed(2) + " is less than the R$ " + t.CashbackSpendMin.StringFixed(2) +
				" of cashback the programme spends at once"}
	case in.Amount.GreaterThan(decimal.NewFromInt(kernel.MaxOrderAmount)):
		return nil, false, apperr.Invalid("amount", "must be at most R$ %d", kernel.MaxOrderAmount)
	}
	if in.Total != nil {
		if err := CheckCashbackShare(t, in.Amount, *in.Total); err != nil {
			return nil, false, err
		}
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		hold, replayed, err = a.wallets().PlaceHold(ctx, tx.Ent, wallet.Hold{CustomerID: in.CustomerID, Unit: wallet.Cashback,
			Channel: wallethold.Channel(in.Channel), Session: in.Session, StoreCode: in.StoreCode, Cents: wallet.Cents(in.Amount)})
		return err
	})
	return hold, replayed, HoldError(err)
}

// CheckCashbackShare refuses a cashback payment (paid) above the
// programme's share of a sale or order of total, with the share's cents
// rounded up.
func CheckCashbackShare(t *ent.Tenant, paid, total decimal.Decimal) error {
	if share := t.CashbackSpendMaxShare; paid.GreaterThan(total.Mul(share).RoundUp(2)) {
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_over_share", Field: "amount",
			Message: "R$ " + paid.StringFixed(2) + " of cashback is more than the programme's share (" +
				share.Shift(2).String() + "%) of R$ " + total.StringFixed(2)}
	}
	return nil
}

// cashbackPaymentOff is a cashback payment on a channel the programme does
// not take cashback on.
func cashbackPaymentOff(channel string) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_payment_off", Field: "wallet",
		Message: "the programme does not take cashback as payment on the " + channel + " channel"}
}

// HoldError maps the wallet's hold errors to operation errors.
func HoldError(err error) error {
	switch {
	case errors.Is(err, wallet.ErrHoldUnavailable):
		return HoldUnavailable()
	case errors.Is(err, wallet.ErrHoldForeign):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_hold_foreign", Field: "holdId",
			Message: "the cashback hold belongs to another channel, order or store: only what it was placed for may use it"}
	case errors.Is(err, wallet.ErrHoldSession):
		return apperr.Conflict("cashback_hold_session", "sessionId",
			"the session already holds other cashback or another customer's: release that hold or use another session")
	case errors.Is(err, wallet.ErrSourceSpent):
		return apperr.Conflict("cashback_already_paid", "holdId",
			"the sale or order already paid with another cashback hold: it pays with one")
	case errors.Is(err, wallet.ErrDebtOpen):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_insufficient", Field: "amount",
			Message: "the cashback wallet owes cashback taken back after it was spent: nothing can be spent until credits settle it"}
	case errors.Is(err, wallet.ErrInsufficient):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_insufficient", Field: "amount",
			Message: "the cashback wallet's balance less the cashback already held is lower than the amount asked"}
	case errors.Is(err, ledger.ErrCustomerNotFound):
		return apperr.NotFound("customer")
	}
	return err
}

// HoldUnavailable is a cashback payment whose hold is unknown, lapsed,
// released, taken by another sale or order, another customer's, or for
// another amount.
func HoldUnavailable() error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "cashback_hold_unavailable", Field: "holdId",
		Message: "the cashback hold is unknown, has lapsed or was released, is another customer's or another amount's, or a sale or order took it already"}
}
