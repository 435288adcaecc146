package loyalty

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// ExpiringNoticeWindow is how long before expiry points.expiring is recorded.
const ExpiringNoticeWindow = 30 * 24 * time.Hour

// ExpirePoints expires the lots whose time has come, one transaction per
// lot: a crash loses at most the lot in progress, and a rerun skips what is
// done (an expiration entry per lot is unique).
func (a *Service) ExpirePoints(ctx context.Context, _ jobs.ExpirePoints) error {
	if err := Rules.ExpirePoints.Allow(ctx); err != nil {
		return err
	}
	l := a.ledger()
	lots, err := a.k.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiresAtLTE(a.k.Now().UTC()), pointslot.PendingUntilIsNil()).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(kernel.UpkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "expiring", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		if _, err := l.Expire(ctx, tx.Ent, lot.ID); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, lot.CustomerID)
	})
}

// ReleasePendingPoints makes spendable the lots whose pending period is
// over, one transaction per lot, as ExpirePoints does; and marks released
// the points holds that lapsed (their points count as available already).
func (a *Service) ReleasePendingPoints(ctx context.Context, _ jobs.ReleasePendingPoints) error {
	if err := Rules.ReleasePendingPoints.Allow(ctx); err != nil {
		return err
	}
	l := a.ledger()
	if _, err := l.ReleaseLapsed(viewer.SystemContext(ctx), a.k.DB.Ent); err != nil {
		return fmt.Errorf("releasing lapsed points holds: %w", err)
	}
	lots, err := a.k.DB.Ent.PointsLot.Query().
		Where(pointslot.PendingUntilLTE(a.k.Now().UTC())).
		Order(ent.Asc(pointslot.FieldPendingUntil)).Limit(kernel.UpkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "releasing", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		if err := l.Release(ctx, tx.Ent, lot.ID); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, lot.CustomerID)
	})
}

// eachLot runs fn for each lot in a transaction of its own, as the lot's
// tenant: a failure stops the run and leaves the lots before it done.
func (a *Service) eachLot(ctx context.Context, lots []*ent.PointsLot, doing string,
	fn func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error) error {
	for _, lot := range lots {
		tctx := viewer.TenantContext(ctx, lot.TenantID)
		if err := a.k.DB.InTx(tctx, func(tx storage.Tx) error { return fn(tctx, tx, lot) }); err != nil {
			return fmt.Errorf("%s lot %s: %w", doing, lot.ID, err)
		}
	}
	return nil
}

// NotifyExpiringPoints records a points.expiring event, once per lot, for
// lots that expire within ExpiringNoticeWindow.
func (a *Service) NotifyExpiringPoints(ctx context.Context, _ jobs.NotifyExpiringPoints) error {
	if err := Rules.NotifyExpiringPoints.Allow(ctx); err != nil {
		return err
	}
	now := a.k.Stamp()
	lots, err := a.k.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiringNotifiedAtIsNil(),
			pointslot.ExpiresAtGT(now), pointslot.ExpiresAtLTE(now.Add(ExpiringNoticeWindow))).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(kernel.UpkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "notifying", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		// The customer first (lockCustomer's lock order). The conditional
		// update claims the lot: a concurrent run finds it claimed and
		// records nothing, and a lot spent since the listing gets no notice.
		if _, err := a.k.LockCustomer(ctx, tx.Ent, lot.CustomerID); err != nil {
			return err
		}
		n, err := tx.Ent.PointsLot.Update().
			Where(pointslot.ID(lot.ID), pointslot.ExpiringNotifiedAtIsNil(), pointslot.RemainingGT(0)).
			SetExpiringNotifiedAt(now).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		// The listing may be a batch old: the notice tells what is left now
		// (the claim holds the lot until the notice commits).
		lot, err = tx.Ent.PointsLot.Get(ctx, lot.ID)
		if err != nil {
			return err
		}
		return outbox.Record(ctx, tx.Ent, now, lot.TenantID, outbox.PointsExpiring, lot.CustomerID, map[string]any{
			"customer_id": lot.CustomerID, "lot_id": lot.ID, "points": lot.Remaining,
			"expires_at": lot.ExpiresAt.UTC().Format(time.RFC3339Nano),
		})
	})
}

// RecomputeLevels lowers the levels that points leaving the trailing
// 12-month window no longer hold. Credits and expirations update levels in
// their own transactions; only time passing needs this.
func (a *Service) RecomputeLevels(ctx context.Context, _ jobs.RecomputeLevels) error {
	if err := Rules.RecomputeLevels.Allow(ctx); err != nil {
		return err
	}
	l := a.ledger()
	after := ""
	for {
		// Bronze is the floor: only higher levels can fall with time.
		q := a.k.DB.Ent.Customer.Query().Where(customer.LevelNEQ(customer.LevelBronze)).
			Order(ent.Asc(customer.FieldID)).Limit(kernel.UpkeepBatch)
		if after != "" {
			q.Where(customer.IDGT(after))
		}
		custs, err := q.All(viewer.SystemContext(ctx))
		if err != nil {
			return err
		}
		for _, c := range custs {
			tctx := viewer.TenantContext(ctx, c.TenantID)
			err := a.k.DB.InTx(tctx, func(tx storage.Tx) error {
				cust, err := a.k.LockCustomer(tctx, tx.Ent, c.ID)
				if err != nil {
					return err
				}
				tenant, err := tx.Ent.Tenant.Get(tctx, c.TenantID)
				if err != nil {
					return err
				}
				if err := l.UpdateLevel(tctx, tx.Ent, cust, tenant); err != nil {
					return err
				}
				// Only a level that fell changes a fact: most runs move none.
				after, err := tx.Ent.Customer.Query().Where(customer.ID(c.ID)).Select(customer.FieldLevel).Only(tctx)
				if err != nil || after.Level == cust.Level {
					return err
				}
				return a.Audiences.Refresh(tctx, tx, c.ID)
			})
			if err != nil {
				return fmt.Errorf("level of %s: %w", c.ID, err)
			}
		}
		if len(custs) < kernel.UpkeepBatch {
			return nil
		}
		after = custs[len(custs)-1].ID
	}
}

// CreditCashback credits the cashback of a redemption to the customer's
// points, at the tenant's earning rate, and counts the points it credited;
// or, when the tenant keeps cashback in R$ (cashback_as_points false), to
// the customer's cashback wallet (app/wallets). The ledger and the wallet
// credit a redemption once, so a rerun credits nothing more.
func (a *Service) CreditCashback(ctx context.Context, args jobs.CreditCashback) error {
	if err := Rules.CreditCashback.Allow(ctx); err != nil {
		return err
	}
	tenantID, redemptionID := args.TenantID, args.RedemptionID
	ctx = viewer.TenantContext(ctx, tenantID)
	var credited int64
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		red, err := tx.Ent.Redemption.Query().Where(redemption.ID(redemptionID)).WithCampaign().Only(ctx)
		if err != nil {
			return fmt.Errorf("redemption %s: %w", redemptionID, err)
		}
		if red.RolledBackAt != nil {
			return nil // undone before its cashback was due: cancelled
		}
		tenant, err := tx.Ent.Tenant.Get(ctx, tenantID)
		if err != nil {
			return err
		}
		if !tenant.CashbackAsPoints {
			_, err := a.Wallets.CreditCampaignCashback(ctx, tx, red, red.Edges.Campaign.Name)
			return err
		}
		pts := points.Earned(red.CashbackAmount, tenant.PointsPerReal)
		if pts <= 0 {
			return nil
		}
		res, err := a.ledger().Credit(ctx, tx.Ent, ledger.Credit{
			CustomerID: red.CustomerID, Kind: pointsentry.KindBonus, Points: pts,
			SourceKind: pointsentry.SourceKindRedemption, SourceID: &red.ID,
			Reason: "cashback of " + red.Edges.Campaign.Name,
		})
		if err != nil || res.Replayed {
			return err
		}
		credited = res.Entry.Points
		return a.Audiences.Refresh(ctx, tx, red.CustomerID)
	})
	if err == nil {
		a.k.Recorder().PointsCredited(kernel.SourceCashback, credited)
	}
	return err
}
