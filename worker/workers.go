package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/jobs"
)

// ProcessSaleWorker works jobs.ProcessSale with app.ProcessSale; after the
// last attempt the sale stays FAILED with the reason.
type ProcessSaleWorker struct {
	river.WorkerDefaults[jobs.ProcessSale]
	App *app.App
}

func (w *ProcessSaleWorker) Work(ctx context.Context, job *river.Job[jobs.ProcessSale]) error {
	return w.App.POS.ProcessSale(ctx, job.Args.TenantID, job.Args.SaleID, job.Attempt >= job.MaxAttempts)
}

// saleReturnWait is how long a return waits for its sale to be processed
// before it is tried again.
const saleReturnWait = 2 * time.Second

// ProcessSaleReturnWorker works jobs.ProcessSaleReturn with
// app.ProcessSaleReturn. A return whose sale is still being processed
// waits for it (snoozed, which spends no attempt).
type ProcessSaleReturnWorker struct {
	river.WorkerDefaults[jobs.ProcessSaleReturn]
	App *app.App
}

func (w *ProcessSaleReturnWorker) Work(ctx context.Context, job *river.Job[jobs.ProcessSaleReturn]) error {
	err := w.App.POS.ProcessSaleReturn(ctx, job.Args.TenantID, job.Args.ReturnID)
	if errors.Is(err, pos.ErrSaleNotProcessed) {
		return river.JobSnooze(saleReturnWait)
	}
	return err
}

// CreditCashbackWorker works jobs.CreditCashback with app.CreditCashback.
type CreditCashbackWorker struct {
	river.WorkerDefaults[jobs.CreditCashback]
	App *app.App
}

func (w *CreditCashbackWorker) Work(ctx context.Context, job *river.Job[jobs.CreditCashback]) error {
	return w.App.Loyalty.CreditCashback(ctx, job.Args.TenantID, job.Args.RedemptionID)
}

// DeliverWebhookWorker works jobs.DeliverWebhook with app.DeliverWebhook,
// retried on jobs.RetrySchedule.
type DeliverWebhookWorker struct {
	river.WorkerDefaults[jobs.DeliverWebhook]
	App *app.App
}

func (w *DeliverWebhookWorker) Work(ctx context.Context, job *river.Job[jobs.DeliverWebhook]) error {
	return w.App.Webhooks.DeliverWebhook(ctx, job.Args.DeliveryID, job.Attempt, job.Attempt >= job.MaxAttempts)
}

// NextRetry follows jobs.RetrySchedule from the application's clock.
func (w *DeliverWebhookWorker) NextRetry(job *river.Job[jobs.DeliverWebhook]) time.Time {
	return w.App.Now().Add(jobs.RetryAfter(job.Attempt))
}

// Timeout bounds a job: one attempt plus recording it.
func (w *DeliverWebhookWorker) Timeout(*river.Job[jobs.DeliverWebhook]) time.Duration {
	return webhook.Timeout + 20*time.Second
}

// DispatchEventsWorker works jobs.DispatchEvents: batches until the outbox
// has no undispatched event.
type DispatchEventsWorker struct {
	river.WorkerDefaults[jobs.DispatchEvents]
	App *app.App
}

func (w *DispatchEventsWorker) Work(ctx context.Context, _ *river.Job[jobs.DispatchEvents]) error {
	for {
		n, err := w.App.Webhooks.DispatchEvents(ctx)
		if err != nil || n < webhooks.DispatchBatch {
			return err
		}
	}
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *DispatchEventsWorker) Timeout(*river.Job[jobs.DispatchEvents]) time.Duration {
	return LongJobTimeout
}

// ExpirePointsWorker works jobs.ExpirePoints with app.ExpirePoints.
type ExpirePointsWorker struct {
	river.WorkerDefaults[jobs.ExpirePoints]
	App *app.App
}

func (w *ExpirePointsWorker) Work(ctx context.Context, _ *river.Job[jobs.ExpirePoints]) error {
	return w.App.Loyalty.ExpirePoints(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *ExpirePointsWorker) Timeout(*river.Job[jobs.ExpirePoints]) time.Duration {
	return LongJobTimeout
}

// ReleasePendingPointsWorker works jobs.ReleasePendingPoints with app.ReleasePendingPoints.
type ReleasePendingPointsWorker struct {
	river.WorkerDefaults[jobs.ReleasePendingPoints]
	App *app.App
}

func (w *ReleasePendingPointsWorker) Work(ctx context.Context, _ *river.Job[jobs.ReleasePendingPoints]) error {
	return w.App.Loyalty.ReleasePendingPoints(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *ReleasePendingPointsWorker) Timeout(*river.Job[jobs.ReleasePendingPoints]) time.Duration {
	return LongJobTimeout
}

// NotifyExpiringPointsWorker works jobs.NotifyExpiringPoints with app.NotifyExpiringPoints.
type NotifyExpiringPointsWorker struct {
	river.WorkerDefaults[jobs.NotifyExpiringPoints]
	App *app.App
}

func (w *NotifyExpiringPointsWorker) Work(ctx context.Context, _ *river.Job[jobs.NotifyExpiringPoints]) error {
	return w.App.Loyalty.NotifyExpiringPoints(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *NotifyExpiringPointsWorker) Timeout(*river.Job[jobs.NotifyExpiringPoints]) time.Duration {
	return LongJobTimeout
}

// RecomputeLevelsWorker works jobs.RecomputeLevels with app.RecomputeLevels.
type RecomputeLevelsWorker struct {
	river.WorkerDefaults[jobs.RecomputeLevels]
	App *app.App
}

func (w *RecomputeLevelsWorker) Work(ctx context.Context, _ *river.Job[jobs.RecomputeLevels]) error {
	return w.App.Loyalty.RecomputeLevels(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *RecomputeLevelsWorker) Timeout(*river.Job[jobs.RecomputeLevels]) time.Duration {
	return LongJobTimeout
}

// RecomputeAudiencesWorker works jobs.RecomputeAudiences with
// app.RecomputeAudiences.
type RecomputeAudiencesWorker struct {
	river.WorkerDefaults[jobs.RecomputeAudiences]
	App *app.App
}

func (w *RecomputeAudiencesWorker) Work(ctx context.Context, _ *river.Job[jobs.RecomputeAudiences]) error {
	return w.App.Audiences.RecomputeAudiences(ctx)
}

// Timeout is the long jobs' own: it walks every tenant.
func (w *RecomputeAudiencesWorker) Timeout(*river.Job[jobs.RecomputeAudiences]) time.Duration {
	return LongJobTimeout
}

// ScoreCustomersWorker works jobs.ScoreCustomers with app.ScoreAllTenants.
type ScoreCustomersWorker struct {
	river.WorkerDefaults[jobs.ScoreCustomers]
	App *app.App
}

func (w *ScoreCustomersWorker) Work(ctx context.Context, job *river.Job[jobs.ScoreCustomers]) error {
	if job.Args.TenantID == "" {
		return w.App.Insights.ScoreAllTenants(ctx)
	}
	_, err := w.App.Insights.ScoreCustomers(viewer.TenantContext(ctx, job.Args.TenantID), w.App.Now())
	return err
}

// Timeout is the long jobs' own: it walks every tenant.
func (w *ScoreCustomersWorker) Timeout(*river.Job[jobs.ScoreCustomers]) time.Duration {
	return LongJobTimeout
}

// ImportCustomersWorker works jobs.ImportCustomers with app.RunCustomerImport.
type ImportCustomersWorker struct {
	river.WorkerDefaults[jobs.ImportCustomers]
	App *app.App
}

func (w *ImportCustomersWorker) Work(ctx context.Context, job *river.Job[jobs.ImportCustomers]) error {
	ctx = viewer.TenantContext(ctx, job.Args.TenantID)
	err := w.App.Customers.RunCustomerImport(ctx, job.Args.ImportID)
	if err != nil && job.Attempt >= job.MaxAttempts {
		// No attempt is left: the import ends failed rather than running for ever.
		return errors.Join(err, w.App.Customers.FailCustomerImport(context.WithoutCancel(ctx), job.Args.ImportID, "the import could not complete; the rows loaded so far stay"))
	}
	return err
}

// Timeout is the long jobs' own: a file may hold millions of customers. A
// run cut short resumes after its last committed batch.
func (w *ImportCustomersWorker) Timeout(*river.Job[jobs.ImportCustomers]) time.Duration {
	return LongJobTimeout
}

// CampaignLifecycleWorker works jobs.CampaignLifecycle with app.RunCampaignLifecycle.
type CampaignLifecycleWorker struct {
	river.WorkerDefaults[jobs.CampaignLifecycle]
	App *app.App
}

func (w *CampaignLifecycleWorker) Work(ctx context.Context, _ *river.Job[jobs.CampaignLifecycle]) error {
	return w.App.Campaigns.RunCampaignLifecycle(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *CampaignLifecycleWorker) Timeout(*river.Job[jobs.CampaignLifecycle]) time.Duration {
	return LongJobTimeout
}

// PurgeExpiredWorker works jobs.PurgeExpired with app.PurgeExpired.
type PurgeExpiredWorker struct {
	river.WorkerDefaults[jobs.PurgeExpired]
	App *app.App
}

func (w *PurgeExpiredWorker) Work(ctx context.Context, _ *river.Job[jobs.PurgeExpired]) error {
	return w.App.Privacy.PurgeExpired(ctx)
}

// Timeout is the long jobs' own: they walk every tenant.
func (w *PurgeExpiredWorker) Timeout(*river.Job[jobs.PurgeExpired]) time.Duration {
	return LongJobTimeout
}

// PruneSigningKeysWorker works jobs.PruneSigningKeys with app.PruneSigningKeys.
type PruneSigningKeysWorker struct {
	river.WorkerDefaults[jobs.PruneSigningKeys]
	App *app.App
}

func (w *PruneSigningKeysWorker) Work(ctx context.Context, _ *river.Job[jobs.PruneSigningKeys]) error {
	return w.App.Backoffice.PruneSigningKeys(ctx)
}
