package loyalty

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/storage"
)

// The channels where points pay as money.
const (
	ChannelPOS       = "pdv"
	ChannelEcommerce = "ecommerce"
)

// maxHoldSession bounds the caller's key of a hold.
const maxHoldSession = 128

// The programme's rules for points spent as money a tenant has not set.
var (
	defaultPointValue    = decimal.New(1, -2) // 100 points pay R$ 1.00
	defaultPointMaxShare = decimal.New(5, -1) // half a sale
)

// SpendRules are the tenant's rules for points spent as money by a
// customer of level: the level's share where the programme sets one, else
// the programme's ("" for level: the programme's).
func SpendRules(t *ent.Tenant, level customer.Level) points.SpendRules {
	r := points.SpendRules{Value: defaultPointValue, Min: t.PointsSpendMin, MaxShare: defaultPointMaxShare}
	if t.PointsValue != nil {
		r.Value = *t.PointsValue
	}
	if t.PointsSpendMaxShare != nil {
		r.MaxShare = *t.PointsSpendMaxShare
	}
	if s := LevelShares(t)[level]; s != nil {
		r.MaxShare = *s
	}
	return r
}

// LevelShares are the shares the programme sets per level (nil: the
// programme's share).
func LevelShares(t *ent.Tenant) map[customer.Level]*decimal.Decimal {
	return map[customer.Level]*decimal.Decimal{customer.LevelSilver: t.PointsSpendMaxShareSilver,
		customer.LevelGold: t.PointsSpendMaxShareGold, customer.LevelDiamond: t.PointsSpendMaxShareDiamond}
}

// LevelFor is the level whose share of a sale applies to the customer
// where is (read through c), read only when the programme sets a share per
// level: "" (the programme's share) when it sets none or there is no such
// customer (what needs one refuses it on its own).
func LevelFor(ctx context.Context, c *ent.Client, t *ent.Tenant, where predicate.Customer) (customer.Level, error) {
	if t.PointsSpendMaxShareSilver == nil && t.PointsSpendMaxShareGold == nil && t.PointsSpendMaxShareDiamond == nil {
		return "", nil
	}
	cust, err := c.Customer.Query().Where(where).Select(customer.FieldLevel).Only(ctx)
	if ent.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return cust.Level, nil
}

// OfferFields are the customer's fields Offer reads, added to fields (each
// once): its balance, its debt and its level (for the level's share).
func OfferFields(fields ...string) []string {
	out := slices.Clip(fields)
	for _, f := range []string{customer.FieldPointsBalance, customer.FieldPointsDebt, customer.FieldLevel} {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// PointsOffer is what a customer may pay with points now on one channel.
type PointsOffer struct {
	Allowed   bool            // the channel takes points
	Balance   int64           // the customer's balance
	Available int64           // the balance less the points held; none while a debt is open
	Value     decimal.Decimal // R$ one point pays
	MinPoints int64           // the fewest points spent at once
	MaxAmount decimal.Decimal // the most R$ payable with points on the cart (or, without one, their worth)
}

// Offer is what cust (read with its balance and debt) may pay with points on
// channel for a sale of total (nil: no cart), read through c: one query of
// the customer's holds, whatever the campaigns.
func (a *Service) Offer(ctx context.Context, c *ent.Client, t *ent.Tenant, cust *ent.Customer, channel string, total *decimal.Decimal) (*PointsOffer, error) {
	rules := SpendRules(t, cust.Level)
	o := &PointsOffer{Allowed: slices.Contains(t.PointsSpendChannels, channel), Balance: cust.PointsBalance,
		Value: rules.Value, MinPoints: rules.Min, MaxAmount: decimal.Zero}
	if !o.Allowed {
		return o, nil
	}
	var err error
	if o.Available, err = ledger.Available(ctx, c, cust, a.k.Stamp()); err != nil {
		return nil, err
	}
	o.MaxAmount = rules.MaxAmount(o.Available, total)
	return o, nil
}

// HoldRequest asks to reserve the points that pay Amount (R$).
type HoldRequest struct {
	CustomerID string
	Channel    string
	Session    string // the caller's key: asking again answers the same hold
	StoreCode  string
	Amount     decimal.Decimal
	Total      *decimal.Decimal // the sale's or order's value, for the programme's share; nil: not checked here
}

// HoldPoints reserves the points that pay in.Amount for ledger.HoldTTL
// (its checks are the caller's transport's input; the rules are here): the
// channel must take points, the points be at least the programme's fewest,
// the amount within its share of the total, and the points within the
// balance less those held. replayed is a session asked again.
func (a *Service) HoldPoints(ctx context.Context, t *ent.Tenant, in HoldRequest) (hold *ent.PointsHold, replayed bool, err error) {
	var p apperr.Problems
	if s := strings.TrimSpace(in.Session); s == "" || len(s) > maxHoldSession {
		p.Add("sessionId", "is required, at most %d characters", maxHoldSession)
	}
	if !in.Amount.IsPositive() || !in.Amount.Equal(in.Amount.Truncate(2)) {
		p.Add("amount", "must be positive, in whole cents")
	}
	if err := p.Err(); err != nil {
		return nil, false, err
	}
	level, err := LevelFor(ctx, a.k.DB.Ent, t, customer.ID(in.CustomerID))
	if err != nil {
		return nil, false, err
	}
	rules := SpendRules(t, level)
	n := rules.PointsFor(in.Amount)
	switch {
	case !slices.Contains(t.PointsSpendChannels, in.Channel):
		return nil, false, pointsPaymentOff(in.Channel)
	case n < rules.Min:
		return nil, false, &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_below_minimum", Field: "amount",
			Message: "R$ " + in.Amount.StringFixed(2) + " is " + decimal.NewFromInt(n).String() + " points, fewer than the " +
				decimal.NewFromInt(rules.Min).String() + " points the programme spends at once"}
	case n > MaxPointsPerChange:
		return nil, false, apperr.Invalid("amount", "is more points than one change moves")
	case in.Total != nil && in.Amount.GreaterThan(in.Total.Mul(rules.MaxShare)):
		return nil, false, pointsOverShare(in.Amount, *in.Total, rules.MaxShare)
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		hold, replayed, err = a.ledger().PlaceHold(ctx, tx.Ent, ledger.Hold{CustomerID: in.CustomerID,
			Channel: pointshold.Channel(in.Channel), Session: in.Session, StoreCode: in.StoreCode, Points: n, Amount: in.Amount})
		return err
	})
	return hold, replayed, HoldError(err)
}

// pointsPaymentOff is a points payment on a channel the programme does not
// take points on.
func pointsPaymentOff(channel string) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_payment_off", Field: "amount",
		Message: "the programme does not take points as payment on the " + channel + " channel"}
}

// pointsOverShare is a points payment above the programme's share of a sale.
func pointsOverShare(amount, total, share decimal.Decimal) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_over_share", Field: "amount",
		Message: "R$ " + amount.StringFixed(2) + " in points is more than the programme's share (" +
			share.Mul(decimal.NewFromInt(100)).String() + "%) of R$ " + total.StringFixed(2)}
}

// CheckPointsShare refuses points payments (paid) above the programme's
// share of a sale or order of total for a customer of level (LevelFor).
func CheckPointsShare(t *ent.Tenant, level customer.Level, paid, total decimal.Decimal) error {
	if share := SpendRules(t, level).MaxShare; paid.GreaterThan(total.Mul(share).RoundUp(2)) {
		return pointsOverShare(paid, total, share)
	}
	return nil
}

// ReleaseHold gives an open hold of owner's points back (a hold released
// already answers as it is).
func (a *Service) ReleaseHold(ctx context.Context, owner ledger.HoldOwner, id string) (*ent.PointsHold, error) {
	var hold *ent.PointsHold
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		hold, err = a.ledger().ReleaseHold(ctx, tx.Ent, owner, id)
		return err
	})
	return hold, HoldError(err)
}

// HoldError maps the ledger's hold errors to operation errors.
func HoldError(err error) error {
	switch {
	case errors.Is(err, ledger.ErrHoldUnavailable):
		return HoldUnavailable()
	case errors.Is(err, ledger.ErrHoldForeign):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_hold_foreign", Field: "holdId",
			Message: "the points hold belongs to another channel, order or store: only what it was placed for may use it"}
	case errors.Is(err, ledger.ErrHoldSession):
		return apperr.Conflict("points_hold_session", "sessionId",
			"the session already holds other points or another customer's: release that hold or use another session")
	case errors.Is(err, ledger.ErrInsufficient):
		return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "insufficient_points", Field: "amount",
			Message: "the customer's balance less the points already held is lower than the points asked"}
	}
	return ledgerError(err)
}

// HoldUnavailable is a points payment whose hold is unknown, lapsed,
// released, taken by another sale or order, another customer's, or for
// another amount.
func HoldUnavailable() error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_hold_unavailable", Field: "holdId",
		Message: "the points hold is unknown, has lapsed or was released, is another customer's or another amount's, or a sale or order took it already"}
}
