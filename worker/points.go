package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
)

// pointsBatch bounds how many lots or customers one job run handles; a
// larger backlog is left to the next run.
const pointsBatch = 1000

// ExpiringNoticeWindow is how long before expiry points.expiring is recorded.
const ExpiringNoticeWindow = 30 * 24 * time.Hour

// ExpirePointsArgs expires the lots whose time has come, one transaction per
// lot: a crash loses at most the lot in progress, and a rerun skips what is
// done (an expiration entry per lot is unique).
type ExpirePointsArgs struct{}

func (ExpirePointsArgs) Kind() string { return "expire_points" }

// ExpirePointsWorker works ExpirePointsArgs.
type ExpirePointsWorker struct {
	river.WorkerDefaults[ExpirePointsArgs]
	DB  *storage.DB
	Now func() time.Time
}

func (w *ExpirePointsWorker) Work(ctx context.Context, _ *river.Job[ExpirePointsArgs]) error {
	l := ledger.Ledger{Dialect: w.DB.Dialect, Now: w.Now}
	lots, err := w.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiresAtLTE(w.Now().UTC())).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(pointsBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return eachLot(ctx, w.DB, lots, "expiring", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		_, err := l.Expire(ctx, tx.Ent, lot.ID)
		return err
	})
}

// eachLot runs fn for each lot in a transaction of its own, as the lot's
// tenant: a failure stops the run and leaves the lots before it done.
func eachLot(ctx context.Context, db *storage.DB, lots []*ent.PointsLot, doing string,
	fn func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error) error {
	for _, lot := range lots {
		tctx := viewer.TenantContext(ctx, lot.TenantID)
		if err := db.InTx(tctx, func(tx storage.Tx) error { return fn(tctx, tx, lot) }); err != nil {
			return fmt.Errorf("%s lot %s: %w", doing, lot.ID, err)
		}
	}
	return nil
}

// NotifyExpiringPointsArgs records a points.expiring event, once per lot,
// for lots that expire within ExpiringNoticeWindow.
type NotifyExpiringPointsArgs struct{}

func (NotifyExpiringPointsArgs) Kind() string { return "notify_expiring_points" }

// NotifyExpiringPointsWorker works NotifyExpiringPointsArgs.
type NotifyExpiringPointsWorker struct {
	river.WorkerDefaults[NotifyExpiringPointsArgs]
	DB  *storage.DB
	Now func() time.Time
}

func (w *NotifyExpiringPointsWorker) Work(ctx context.Context, _ *river.Job[NotifyExpiringPointsArgs]) error {
	now := w.Now().UTC().Truncate(time.Microsecond)
	lots, err := w.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiringNotifiedAtIsNil(),
			pointslot.ExpiresAtGT(now), pointslot.ExpiresAtLTE(now.Add(ExpiringNoticeWindow))).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(pointsBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return eachLot(ctx, w.DB, lots, "notifying", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		// The conditional update claims the lot: a concurrent run finds it
		// claimed and records nothing, and a lot spent since the listing gets
		// no notice.
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

// RecomputeLevelsArgs lowers the levels that points leaving the trailing
// 12-month window no longer hold. Credits and expirations update levels in
// their own transactions; only time passing needs this job.
type RecomputeLevelsArgs struct{}

func (RecomputeLevelsArgs) Kind() string { return "recompute_levels" }

// RecomputeLevelsWorker works RecomputeLevelsArgs.
type RecomputeLevelsWorker struct {
	river.WorkerDefaults[RecomputeLevelsArgs]
	DB  *storage.DB
	Now func() time.Time
}

func (w *RecomputeLevelsWorker) Work(ctx context.Context, _ *river.Job[RecomputeLevelsArgs]) error {
	l := ledger.Ledger{Dialect: w.DB.Dialect, Now: w.Now}
	after := ""
	for {
		// Bronze is the floor: only higher levels can fall with time.
		q := w.DB.Ent.Customer.Query().Where(customer.LevelNEQ(customer.LevelBronze)).
			Order(ent.Asc(customer.FieldID)).Limit(pointsBatch)
		if after != "" {
			q.Where(customer.IDGT(after))
		}
		custs, err := q.All(viewer.SystemContext(ctx))
		if err != nil {
			return err
		}
		for _, c := range custs {
			tctx := viewer.TenantContext(ctx, c.TenantID)
			err := w.DB.InTx(tctx, func(tx storage.Tx) error {
				cust, err := l.LockCustomer(tctx, tx.Ent, c.ID)
				if err != nil {
					return err
				}
				tenant, err := tx.Ent.Tenant.Get(tctx, c.TenantID)
				if err != nil {
					return err
				}
				return l.UpdateLevel(tctx, tx.Ent, cust, tenant)
			})
			if err != nil {
				return fmt.Errorf("level of %s: %w", c.ID, err)
			}
		}
		if len(custs) < pointsBatch {
			return nil
		}
		after = custs[len(custs)-1].ID
	}
}
