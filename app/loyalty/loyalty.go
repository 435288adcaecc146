package loyalty

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/contrib/entgql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Bounds of a points operation.
const (
	MaxPointsPerChange = 1_000_000_000
	expiringWindow     = 30 * 24 * time.Hour
)

// CreditInput credits the points of an order.
type CreditInput struct {
	CustomerID string
	OrderID    string
	Amount     *decimal.Decimal // order value in R$; earns points at the tenant's rate
	Points     *int64           // points to credit; wins over Amount
}

// DebitInput spends points.
type DebitInput struct {
	CustomerID string
	Points     int64
	OrderID    *string // when set, the debit of this order happens once
	Reason     string
}

// AdjustInput corrects a balance by hand.
type AdjustInput struct {
	CustomerID string
	Points     int64 // signed, not zero
	Reason     string
}

// PointsMovement is the entry an operation wrote or, for a retried one,
// the entry its first call wrote.
type PointsMovement struct {
	Entry    *ent.PointsEntry
	Replayed bool
}

// CreditPoints credits an order once: a repeated call answers with the
// first result and credits nothing more.
func (a *Service) CreditPoints(ctx context.Context, in CreditInput) (*PointsMovement, error) {
	if err := Rules.CreditPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	kernel.RequireID(&p, "order_id", in.OrderID)
	if amt := in.Amount; amt != nil {
		switch {
		case amt.IsNegative() || !amt.Equal(amt.Round(2)):
			p.Add("amount", "must be a non-negative value in R$ with at most 2 decimal places")
		case amt.GreaterThan(decimal.NewFromInt(kernel.MaxOrderAmount)):
			p.Add("amount", "must be at most R$ %d", kernel.MaxOrderAmount)
		}
	}
	if in.Points != nil && (*in.Points <= 0 || *in.Points > MaxPointsPerChange) {
		p.Add("points", "must be between 1 and %d", MaxPointsPerChange)
	}
	// Neither amount nor points: the order's redemption gives the amount,
	// below; without one it is a 422 on amount.
	if err := p.Err(); err != nil {
		return nil, err
	}
	var out *PointsMovement
	var credited int64 // by this call, counted once committed
	err := a.pointsTx(ctx, in.CustomerID, func(tx storage.Tx) error {
		credited = 0 // a run again after a conflict counts afresh
		// A repeated call answers with the first result whatever it sends
		// now: look for it before reading amounts (the ledger checks again
		// under the customer's lock).
		prior, err := tx.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(in.CustomerID),
			pointsentry.KindEQ(pointsentry.KindCredit), pointsentry.SourceKindEQ(pointsentry.SourceKindOrder),
			pointsentry.SourceID(in.OrderID)).Only(ctx)
		if err == nil {
			out = &PointsMovement{Entry: prior, Replayed: true}
			return nil
		}
		if !ent.IsNotFound(err) {
			return err
		}
		if in.Amount == nil && in.Points == nil {
			// The order's redemption says what was paid (flow 1 of the
			// document: validate, redeem, then credit the order).
			red, err := tx.Ent.Redemption.Query().
				Where(redemption.CustomerID(in.CustomerID), redemption.OrderID(in.OrderID)).
				Order(ent.Desc(redemption.FieldCreatedAt)).First(ctx)
			if ent.IsNotFound(err) {
				return apperr.Invalid("amount", "amount or points is required: the order has no redemption to take the amount from")
			}
			if err != nil {
				return err
			}
			in.Amount = &red.AmountPaid
		}
		pts := int64(0)
		if in.Points != nil {
			pts = *in.Points
		} else {
			cust, err := tx.Ent.Customer.Query().Where(customer.ID(in.CustomerID)).WithTenant().Only(ctx)
			if ent.IsNotFound(err) {
				return ledger.ErrCustomerNotFound
			}
			if err != nil {
				return err
			}
			rate := cust.Edges.Tenant.PointsPerReal
			if in.Amount.Mul(rate).GreaterThan(decimal.NewFromInt(MaxPointsPerChange)) {
				return apperr.Invalid("amount", "earns more than %d points at the tenant's rate", MaxPointsPerChange)
			}
			pts = points.Earned(*in.Amount, rate)
		}
		if pts == 0 {
			return apperr.Invalid("amount", "earns no points: less than R$ 1 at the tenant's rate")
		}
		res, err := a.ledger().Credit(ctx, tx.Ent, ledger.Credit{
			CustomerID: in.CustomerID, Kind: pointsentry.KindCredit, Points: pts,
			SourceKind: pointsentry.SourceKindOrder, SourceID: &in.OrderID, Amount: in.Amount,
		})
		if err != nil {
			return err
		}
		out = &PointsMovement{Entry: res.Entry, Replayed: res.Replayed}
		if !res.Replayed {
			credited = res.Entry.Points
		}
		bonus, err := a.creditOrderBonuses(ctx, tx.Ent, in.CustomerID, in.OrderID)
		credited += bonus
		return err
	})
	if err == nil {
		a.k.Recorder().PointsCredited(kernel.SourceAPI, credited)
	}
	return out, ledgerError(err)
}

// creditOrderBonuses credits the bonus points of the order's bonus-points
// redemptions, now that the order's points are credited (each once), and
// returns the points it credited.
func (a *Service) creditOrderBonuses(ctx context.Context, c *ent.Client, customerID, orderID string) (int64, error) {
	reds, err := c.Redemption.Query().Where(
		redemption.CustomerID(customerID), redemption.OrderID(orderID), redemption.BonusPointsGT(0),
	).All(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, red := range reds {
		n, err := a.CreditBonus(ctx, c, red)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// DebitPoints spends points, those expiring first first; a balance never
// goes below zero.
func (a *Service) DebitPoints(ctx context.Context, in DebitInput) (*PointsMovement, error) {
	if err := Rules.DebitPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	if in.OrderID != nil {
		kernel.RequireID(&p, "order_id", *in.OrderID)
	}
	if in.Points <= 0 || in.Points > MaxPointsPerChange {
		p.Add("points", "must be between 1 and %d", MaxPointsPerChange)
	}
	if len(in.Reason) > 500 {
		p.Add("reason", "must be at most 500 characters")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	var out *PointsMovement
	err := a.pointsTx(ctx, in.CustomerID, func(tx storage.Tx) error {
		res, err := a.ledger().Debit(ctx, tx.Ent, ledger.Debit{
			CustomerID: in.CustomerID, Kind: pointsentry.KindDebit, Points: in.Points,
			SourceKind: pointsentry.SourceKindOrder, SourceID: in.OrderID, Reason: in.Reason,
		})
		if err != nil {
			return err
		}
		out = &PointsMovement{Entry: res.Entry, Replayed: res.Replayed}
		return nil
	})
	return out, ledgerError(err)
}

// AdjustPoints is an operator's correction, with the reason recorded.
func (a *Service) AdjustPoints(ctx context.Context, in AdjustInput) (*PointsMovement, error) {
	if err := Rules.AdjustPoints.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", in.CustomerID)
	if in.Points == 0 || in.Points > MaxPointsPerChange || in.Points < -MaxPointsPerChange {
		p.Add("points", "must be a non-zero number of points up to %d either way", MaxPointsPerChange)
	}
	if strings.TrimSpace(in.Reason) == "" || len(in.Reason) > 500 {
		p.Add("reason", "is required (at most 500 characters)")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	v, _ := viewer.FromContext(ctx)
	reason := strings.TrimSpace(in.Reason) + " (by " + v.Subject + ")"
	var out *PointsMovement
	err := a.pointsTx(ctx, in.CustomerID, func(tx storage.Tx) error {
		var res *ledger.Result
		var err error
		if in.Points > 0 {
			res, err = a.ledger().Credit(ctx, tx.Ent, ledger.Credit{
				CustomerID: in.CustomerID, Kind: pointsentry.KindAdjustment, Points: in.Points,
				SourceKind: pointsentry.SourceKindOperator, Reason: reason,
			})
		} else {
			res, err = a.ledger().Debit(ctx, tx.Ent, ledger.Debit{
				CustomerID: in.CustomerID, Kind: pointsentry.KindAdjustment, Points: -in.Points,
				SourceKind: pointsentry.SourceKindOperator, Reason: reason,
			})
		}
		if err != nil {
			return err
		}
		out = &PointsMovement{Entry: res.Entry}
		return nil
	})
	if err == nil && in.Points > 0 {
		a.k.Recorder().PointsCredited(kernel.SourceAdjustment, in.Points)
	}
	return out, ledgerError(err)
}

// ledgerError maps the ledger's errors to the operation errors.
func ledgerError(err error) error {
	switch {
	case errors.Is(err, ledger.ErrDebtOpen):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "insufficient_points", Field: "points",
			Message: "the customer owes points taken back by a return or refund: nothing can be spent until new credits settle the debt"}
	case errors.Is(err, ledger.ErrInsufficient):
		return &apperr.Error{Kind: apperr.KindInvalid, Code: "insufficient_points", Field: "points",
			Message: "the customer's balance is lower than the points asked"}
	case errors.Is(err, ledger.ErrCustomerNotFound):
		return apperr.NotFound("customer")
	}
	return err
}

// ExpiringLot is points that expire soon.
type ExpiringLot struct {
	Points    int64
	ExpiresAt time.Time
}

// PointsBalance is a customer's balance with what is about to expire and
// how far the next level is.
type PointsBalance struct {
	Customer           *ent.Customer
	Expiring           []ExpiringLot // the next 30 days, soonest first
	ExpiringPoints     int64
	EarnedLast12Months int64
	NextLevel          points.Level // "" at the top level
	PointsToNextLevel  int64
}

// Balance reads a customer's points balance.
func (a *Service) Balance(ctx context.Context, customerID string) (*PointsBalance, error) {
	if err := Rules.Balance.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("customer_id", customerID); err != nil {
		return nil, err
	}
	cust, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(customerID)).WithTenant().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("customer")
	}
	if err != nil {
		return nil, err
	}
	now := a.k.Now().UTC()
	lots, err := a.k.DB.Ent.PointsLot.Query().
		Where(pointslot.CustomerID(cust.ID), pointslot.RemainingGT(0), pointslot.ExpiresAtLTE(now.Add(expiringWindow))).
		Order(ent.Asc(pointslot.FieldExpiresAt), ent.Asc(pointslot.FieldID)).
		All(ctx)
	if err != nil {
		return nil, err
	}
	b := &PointsBalance{Customer: cust, Expiring: []ExpiringLot{}}
	for _, l := range lots {
		b.Expiring = append(b.Expiring, ExpiringLot{Points: l.Remaining, ExpiresAt: l.ExpiresAt})
		b.ExpiringPoints += l.Remaining
	}
	loc, err := points.Zone(cust.Edges.Tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	if b.EarnedLast12Months, err = ledger.EarnedSince(ctx, a.k.DB.Ent, cust.ID, points.LevelWindowStart(now, loc)); err != nil {
		return nil, err
	}
	if next, missing, ok := ledger.Thresholds(cust.Edges.Tenant).Next(b.EarnedLast12Months); ok {
		b.NextLevel, b.PointsToNextLevel = next, missing
	}
	return b, nil
}

// StatementFilter narrows a statement to a period.
type StatementFilter struct {
	From, To *time.Time // inclusive, exclusive
}

// Statement lists a customer's ledger entries, newest first.
func (a *Service) Statement(ctx context.Context, customerID string, f StatementFilter, after *ent.Cursor, first int) (*ent.PointsEntryConnection, error) {
	if err := Rules.Statement.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("customer_id", customerID, "", f); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		return nil, apperr.Invalid("to", "must be after from")
	}
	exists, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(customerID)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apperr.NotFound("customer")
	}
	q := a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(customerID))
	if f.From != nil {
		q.Where(pointsentry.CreatedAtGTE(f.From.UTC()))
	}
	if f.To != nil {
		q.Where(pointsentry.CreatedAtLT(f.To.UTC()))
	}
	return q.Paginate(ctx, after, &first, nil, nil, ent.WithPointsEntryOrder(&ent.PointsEntryOrder{
		Direction: entgql.OrderDirectionDesc, Field: ent.DefaultPointsEntryOrder.Field,
	}))
}

// ByLevel counts the viewer's tenant's customers and their points per
// level, every level listed, lowest first.
func (a *Service) ByLevel(ctx context.Context) ([]LevelLiability, error) {
	if err := Rules.ByLevel.Allow(ctx); err != nil {
		return nil, err
	}
	return a.byLevel(ctx)
}

// byLevel is ByLevel without its policy check, for the operations
// of this context that call it.
func (a *Service) byLevel(ctx context.Context) ([]LevelLiability, error) {
	var rows []struct {
		Level  string `json:"level"`
		Count  int    `json:"count"`
		Points int64  `json:"points"`
	}
	err := a.k.DB.Ent.Customer.Query().GroupBy(customer.FieldLevel).
		Aggregate(ent.As(ent.Count(), "count"), ent.As(ent.Sum(customer.FieldPointsBalance), "points")).
		Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	levels := make([]LevelLiability, len(points.Levels))
	for i, lv := range points.Levels {
		levels[i].Level = lv
		for _, r := range rows {
			if r.Level == string(lv) {
				levels[i].Customers, levels[i].Points = r.Count, r.Points
			}
		}
	}
	return levels, nil
}

// Liability is what a tenant's customers could still spend.
type Liability struct {
	Total         int64
	ByLevel       []LevelLiability // every level, lowest first
	ByExpiryMonth []MonthLiability // soonest first
}

// LevelLiability is the points held by the customers of one level.
type LevelLiability struct {
	Level     points.Level
	Customers int
	Points    int64
}

// MonthLiability is the unspent points that expire in one month (UTC).
type MonthLiability struct {
	Month  string // YYYY-MM
	Points int64
}

// PointsLiability sums the viewer's tenant's outstanding points.
func (a *Service) PointsLiability(ctx context.Context) (*Liability, error) {
	if err := Rules.PointsLiability.Allow(ctx); err != nil {
		return nil, err
	}
	byLevel, err := a.byLevel(ctx)
	if err != nil {
		return nil, err
	}
	l := &Liability{ByLevel: byLevel}
	for _, ll := range byLevel {
		l.Total += ll.Points
	}
	lots, err := a.k.DB.Ent.PointsLot.Query().Where(pointslot.RemainingGT(0)).
		Order(ent.Asc(pointslot.FieldExpiresAt)).
		Select(pointslot.FieldExpiresAt, pointslot.FieldRemaining).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, lot := range lots {
		month := lot.ExpiresAt.UTC().Format("2006-01")
		if n := len(l.ByExpiryMonth); n > 0 && l.ByExpiryMonth[n-1].Month == month {
			l.ByExpiryMonth[n-1].Points += lot.Remaining
			continue
		}
		l.ByExpiryMonth = append(l.ByExpiryMonth, MonthLiability{Month: month, Points: lot.Remaining})
	}
	return l, nil
}

// CreditBonus credits a bonus-points redemption once, and returns the points
// it credited (none when they already were).
func (a *Service) CreditBonus(ctx context.Context, c *ent.Client, red *ent.Redemption) (int64, error) {
	if red.BonusPoints <= 0 || red.RolledBackAt != nil {
		return 0, nil
	}
	res, err := a.ledger().Credit(ctx, c, ledger.Credit{
		CustomerID: red.CustomerID, Kind: pointsentry.KindBonus, Points: red.BonusPoints,
		SourceKind: pointsentry.SourceKindRedemption, SourceID: &red.ID, Reason: "bonus points of campaign " + red.CampaignID,
	})
	if err != nil || res.Replayed {
		return 0, err
	}
	return res.Entry.Points, nil
}
