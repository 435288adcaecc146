package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/storage"
)

// CreditCashbackArgs credits the cashback of a redemption to the customer's
// points, at the tenant's earning rate. It is inserted with the redemption,
// in its transaction, scheduled credit_after_days later.
type CreditCashbackArgs struct {
	TenantID     string `json:"tenant_id"`
	RedemptionID string `json:"redemption_id"`
}

func (CreditCashbackArgs) Kind() string { return "credit_cashback" }

// CreditCashbackWorker works CreditCashbackArgs. The ledger credits a
// redemption once, so a retried job credits nothing more.
type CreditCashbackWorker struct {
	river.WorkerDefaults[CreditCashbackArgs]
	DB      *storage.DB
	Now     func() time.Time
	Metrics *metrics.Registry // nil: not counted
}

func (w *CreditCashbackWorker) Work(ctx context.Context, job *river.Job[CreditCashbackArgs]) error {
	ctx = viewer.TenantContext(ctx, job.Args.TenantID)
	var credited int64 // counted once committed
	err := w.DB.InTx(ctx, func(tx storage.Tx) error {
		red, err := tx.Ent.Redemption.Query().Where(redemption.ID(job.Args.RedemptionID)).
			WithCampaign().Only(ctx)
		if err != nil {
			return fmt.Errorf("redemption %s: %w", job.Args.RedemptionID, err)
		}
		tenant, err := tx.Ent.Tenant.Get(ctx, job.Args.TenantID)
		if err != nil {
			return err
		}
		pts := points.Earned(red.CashbackAmount, tenant.PointsPerReal)
		if pts <= 0 {
			return nil
		}
		res, err := ledger.Ledger{Dialect: w.DB.Dialect, Now: w.Now}.Credit(ctx, tx.Ent, ledger.Credit{
			CustomerID: red.CustomerID, Kind: pointsentry.KindBonus, Points: pts,
			SourceKind: pointsentry.SourceKindRedemption, SourceID: &red.ID,
			Reason: "cashback of " + red.Edges.Campaign.Name,
		})
		if err == nil && !res.Replayed {
			credited = res.Entry.Points
		}
		return err
	})
	if err == nil {
		w.Metrics.PointsCredited(metrics.SourceCashback, credited)
	}
	return err
}
