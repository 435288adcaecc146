package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/ent/predicate"
)

// HoldTTL is how long a hold reserves its points unless a sale or order
// takes it.
const HoldTTL = 15 * time.Minute

// HoldGrace is how long after it lapses a hold's points still count as held:
// longer than a sale's registration may take, so that a sale taking the hold
// as it lapses never meets points held again meanwhile.
const HoldGrace = time.Minute

// ErrHoldUnavailable is a hold that is unknown, another customer's, lapsed,
// released, or already taken by a sale or order.
var ErrHoldUnavailable = errors.New("points hold unavailable")

// ErrHoldForeign is a hold used by other than its owner (HoldOwner).
var ErrHoldForeign = errors.New("points hold of another channel, order or store")

// ErrHoldSession is a hold asked again under a session already holding
// other points or for another customer.
var ErrHoldSession = errors.New("the session already holds other points")

// Hold reserves points.
type Hold struct {
	CustomerID string
	Channel    pointshold.Channel
	Session    string
	StoreCode  string
	Points     int64
	Amount     decimal.Decimal
}

// HoldOwner is whom a hold belongs to: the channel it was placed on and,
// where the caller names them, the key it was placed under (online, the
// order's) and the store whose till placed it. Only its owner takes, spends,
// releases, captures or rolls back a hold; any other use is ErrHoldForeign.
// The rule reads a hold through HoldPlaced, so a wallet's holds other than
// points are owned alike.
type HoldOwner struct {
	Channel string
	Session string // "": not named (a till's sale or release names no session)
	Store   string // "": not named (online, or a till's release)
}

// HoldPlaced is what ownership reads of a hold: where it was placed and the
// channel of what took it ("" while nothing did: a sale is the till's, an
// order online).
type HoldPlaced struct {
	Channel, Session, Store string
	TakenBy                 string
}

// PointsHoldPlaced is a points hold as HoldOwner reads it.
func PointsHoldPlaced(h *ent.PointsHold) HoldPlaced {
	p := HoldPlaced{Channel: h.Channel.String(), Session: h.Session, Store: h.StoreCode}
	switch {
	case h.SaleID != nil:
		p.TakenBy = pointshold.ChannelPdv.String()
	case h.OrderID != nil:
		p.TakenBy = pointshold.ChannelEcommerce.String()
	}
	return p
}

// Owns says whether o may use a hold placed as h: on o's channel, under
// o's session and at o's store where o names them, and taken by nothing of
// another channel (a database may keep an online hold a till's sale took).
func (o HoldOwner) Owns(h HoldPlaced) bool {
	return h.Channel == o.Channel && (o.Session == "" || h.Session == o.Session) &&
		(o.Store == "" || h.Store == o.Store) && (h.TakenBy == "" || h.TakenBy == o.Channel)
}

// Held is the points of the customer's holds that count at now.
func Held(ctx context.Context, c *ent.Client, customerID string, now time.Time) (int64, error) {
	return heldExcept(ctx, c, customerID, now, "")
}

// heldExcept is Held without the hold except.
func heldExcept(ctx context.Context, c *ent.Client, customerID string, now time.Time, except string) (int64, error) {
	q := c.PointsHold.Query().Where(pointshold.CustomerID(customerID), pointshold.Or(
		pointshold.StatusEQ(pointshold.StatusTaken),
		pointshold.And(pointshold.StatusEQ(pointshold.StatusOpen), pointshold.ExpiresAtGT(now.Add(-HoldGrace)))))
	if except != "" {
		q.Where(pointshold.IDNEQ(except))
	}
	var rows []struct {
		Sum *int64 `json:"sum"`
	}
	if err := q.Aggregate(ent.As(ent.Sum(pointshold.FieldPoints), "sum")).Scan(ctx, &rows); err != nil {
		return 0, err
	}
	if len(rows) == 0 || rows[0].Sum == nil {
		return 0, nil
	}
	return *rows[0].Sum, nil
}

// Available is what a customer may hold or spend at now: the balance less
// the points held, none while a debt is open.
func Available(ctx context.Context, c *ent.Client, cust *ent.Customer, now time.Time) (int64, error) {
	if cust.PointsDebt > 0 {
		return 0, nil
	}
	held, err := Held(ctx, c, cust.ID, now)
	return max(cust.PointsBalance-held, 0), err
}

// PlaceHold reserves h's points for HoldTTL, under the customer's lock:
// ErrInsufficient when the balance less the points held is short. The same
// session asked again answers its hold (replayed), unless it held other
// points or another customer's (ErrHoldSession).
func (l Ledger) PlaceHold(ctx context.Context, c *ent.Client, h Hold) (hold *ent.PointsHold, replayed bool, err error) {
	cust, err := LockCustomer(ctx, c, l.Dialect, h.CustomerID)
	if err != nil {
		return nil, false, err
	}
	prior, err := c.PointsHold.Query().Where(pointshold.Session(h.Session)).Only(ctx)
	switch {
	case err == nil && (prior.CustomerID != h.CustomerID || prior.Points != h.Points || prior.Channel != h.Channel):
		return nil, false, ErrHoldSession
	case err == nil:
		return prior, true, nil
	case !ent.IsNotFound(err):
		return nil, false, err
	}
	if cust.PointsDebt > 0 {
		return nil, false, ErrDebtOpen
	}
	now := l.now()
	held, err := Held(ctx, c, cust.ID, now)
	if err != nil {
		return nil, false, err
	}
	if cust.PointsBalance-held < h.Points {
		return nil, false, ErrInsufficient
	}
	hold, err = c.PointsHold.Create().SetTenantID(cust.TenantID).SetCustomerID(cust.ID).SetCreatedAt(now).
		SetChannel(h.Channel).SetSession(h.Session).SetStoreCode(h.StoreCode).
		SetPoints(h.Points).SetAmount(h.Amount).SetExpiresAt(now.Add(HoldTTL)).Save(ctx)
	return hold, false, err
}

// ReleaseHold gives an open hold of owner's points back; a hold already
// released answers as it is, one taken or spent ErrHoldUnavailable, one of
// another owner ErrHoldForeign.
func (l Ledger) ReleaseHold(ctx context.Context, c *ent.Client, owner HoldOwner, id string) (*ent.PointsHold, error) {
	hold, err := c.PointsHold.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, ErrHoldUnavailable
	}
	if err != nil {
		return nil, err
	}
	if _, err := LockCustomer(ctx, c, l.Dialect, hold.CustomerID); err != nil {
		return nil, err
	}
	if hold, err = c.PointsHold.Get(ctx, id); err != nil { // re-read under the lock
		return nil, err
	}
	if !owner.Owns(PointsHoldPlaced(hold)) {
		return nil, ErrHoldForeign
	}
	switch hold.Status {
	case pointshold.StatusReleased:
		return hold, nil
	case pointshold.StatusOpen:
		return hold.Update().SetStatus(pointshold.StatusReleased).SetClosedAt(l.now()).Save(ctx)
	default:
		return nil, ErrHoldUnavailable
	}
}

// ReleaseLapsed marks released the open holds past their grace, as the
// upkeep does; they count for nothing already. It answers how many.
func (l Ledger) ReleaseLapsed(ctx context.Context, c *ent.Client) (int, error) {
	now := l.now()
	return c.PointsHold.Update().
		Where(pointshold.StatusEQ(pointshold.StatusOpen), pointshold.ExpiresAtLTE(now.Add(-HoldGrace))).
		SetStatus(pointshold.StatusReleased).SetClosedAt(now).Save(ctx)
}

// TakeHold has a sale (saleID) or an order (orderID) of owner take an open
// hold of the customer matched by whose, paying amount: from then on it
// counts until SpendHold debits it. ErrHoldForeign when owner does not own
// it; ErrHoldUnavailable when it is unknown, not open, has lapsed, is
// another customer's, or pays another amount.
func (l Ledger) TakeHold(ctx context.Context, c *ent.Client, owner HoldOwner, id string, amount decimal.Decimal,
	whose predicate.Customer, saleID, orderID *string) error {
	hold, err := c.PointsHold.Get(ctx, id) // where it was placed never changes; the update takes only an open hold
	if ent.IsNotFound(err) {
		return ErrHoldUnavailable
	}
	if err != nil {
		return err
	}
	if !owner.Owns(PointsHoldPlaced(hold)) {
		return ErrHoldForeign
	}
	n, err := c.PointsHold.Update().
		Where(pointshold.ID(id), pointshold.StatusEQ(pointshold.StatusOpen), pointshold.ExpiresAtGT(l.now()),
			pointshold.AmountEQ(amount), pointshold.HasCustomerWith(whose)).
		SetStatus(pointshold.StatusTaken).SetNillableSaleID(saleID).SetNillableOrderID(orderID).Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrHoldUnavailable
	}
	return nil
}

// SpendHold debits a taken hold's points once, for its sale or order
// (source), under the customer's lock, the points expiring first first.
// Points that lapsed while held are not taken twice: the debit is the hold's
// points within the balance. A hold already spent answers its entry.
func (l Ledger) SpendHold(ctx context.Context, c *ent.Client, id string, sk pointsentry.SourceKind, sourceID, reason string) (*Result, error) {
	hold, err := c.PointsHold.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	cust, err := LockCustomer(ctx, c, l.Dialect, hold.CustomerID)
	if err != nil {
		return nil, err
	}
	if prior, err := findSource(ctx, c, cust.ID, pointsentry.KindDebit, sk, &sourceID); prior != nil || err != nil {
		return &Result{Entry: prior, Replayed: prior != nil}, err
	}
	if hold, err = c.PointsHold.Get(ctx, id); err != nil { // re-read under the lock
		return nil, err
	}
	if hold.Status != pointshold.StatusTaken {
		return nil, ErrHoldUnavailable
	}
	others, err := heldExcept(ctx, c, cust.ID, l.now(), id)
	if err != nil {
		return nil, err
	}
	n := min(hold.Points, cust.PointsBalance-others)
	var res *Result
	if n > 0 && cust.PointsDebt == 0 {
		if res, err = l.spendLots(ctx, c, cust, Debit{CustomerID: cust.ID, Kind: pointsentry.KindDebit, Points: n,
			SourceKind: sk, SourceID: &sourceID, Reason: reason}); err != nil {
			return nil, err
		}
	}
	if err := hold.Update().SetStatus(pointshold.StatusSpent).SetClosedAt(l.now()).Exec(ctx); err != nil {
		return nil, err
	}
	return res, nil
}
