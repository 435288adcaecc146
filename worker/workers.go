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
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/viewer"
)

// Job works one kind of job T with a function of the application: every
// job of the platform is one, so they differ only in what they call and
// how long they may run.
type Job[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	work func(ctx context.Context, job *river.Job[T]) error
	// timeout is how long an attempt may run; 0 keeps the client's
	// JobTimeout, two thirds of RescueAfter (the short jobs).
	timeout time.Duration
	// nextRetry, when set, says when a failed attempt is tried again
	// (River's own backoff otherwise).
	nextRetry func(job *river.Job[T]) time.Time
}

func (j *Job[T]) Work(ctx context.Context, job *river.Job[T]) error { return j.work(ctx, job) }

func (j *Job[T]) Timeout(*river.Job[T]) time.Duration { return j.timeout }

func (j *Job[T]) NextRetry(job *river.Job[T]) time.Time {
	if j.nextRetry == nil {
		return time.Time{}
	}
	return j.nextRetry(job)
}

// lastAttempt says whether no attempt of job is left after this one: the
// operation then records its failure for good.
func lastAttempt[T river.JobArgs](job *river.Job[T]) bool { return job.Attempt >= job.MaxAttempts }

// short is a job with the client's timeout.
func short[T river.JobArgs](work func(ctx context.Context, job *river.Job[T]) error) *Job[T] {
	return &Job[T]{work: work}
}

// everyTenant is a periodic job that walks every tenant with work, under
// LongJobTimeout.
func everyTenant[T river.JobArgs](work func(ctx context.Context) error) *Job[T] {
	return &Job[T]{work: func(ctx context.Context, _ *river.Job[T]) error { return work(ctx) }, timeout: LongJobTimeout}
}

// Register adds a worker for every job of the platform; a.Counts counts
// what they do.
func Register(workers *river.Workers, a *app.App) {
	river.AddWorker(workers, everyTenant[jobs.PruneSigningKeys](a.Backoffice.PruneSigningKeys))
	river.AddWorker(workers, ExpirePoints(a))
	river.AddWorker(workers, everyTenant[jobs.ReleasePendingPoints](a.Loyalty.ReleasePendingPoints))
	river.AddWorker(workers, NotifyExpiringPoints(a))
	river.AddWorker(workers, RecomputeLevels(a))
	river.AddWorker(workers, everyTenant[jobs.RecomputeAudiences](a.Audiences.RecomputeAudiences))
	river.AddWorker(workers, scoreCustomers(a))
	river.AddWorker(workers, importCustomers(a))
	river.AddWorker(workers, CreditCashback(a))
	river.AddWorker(workers, CampaignLifecycle(a))
	river.AddWorker(workers, PurgeExpired(a))
	river.AddWorker(workers, ProcessSale(a))
	river.AddWorker(workers, ProcessSaleReturn(a))
	river.AddWorker(workers, dispatchEvents(a))
	river.AddWorker(workers, DeliverWebhook(a))
}

// ProcessSale works jobs.ProcessSale; after the last attempt the sale stays
// FAILED with the reason.
func ProcessSale(a *app.App) *Job[jobs.ProcessSale] {
	return short(func(ctx context.Context, job *river.Job[jobs.ProcessSale]) error {
		return a.POS.ProcessSale(ctx, job.Args.TenantID, job.Args.SaleID, lastAttempt(job))
	})
}

// saleReturnWait is how long a return waits for its sale to be processed
// before it is tried again.
const saleReturnWait = 2 * time.Second

// ProcessSaleReturn works jobs.ProcessSaleReturn. A return whose sale is
// still being processed waits for it (snoozed, which spends no attempt).
func ProcessSaleReturn(a *app.App) *Job[jobs.ProcessSaleReturn] {
	return short(func(ctx context.Context, job *river.Job[jobs.ProcessSaleReturn]) error {
		err := a.POS.ProcessSaleReturn(ctx, job.Args.TenantID, job.Args.ReturnID)
		if errors.Is(err, pos.ErrSaleNotProcessed) {
			return river.JobSnooze(saleReturnWait)
		}
		return err
	})
}

// CreditCashback works jobs.CreditCashback.
func CreditCashback(a *app.App) *Job[jobs.CreditCashback] {
	return short(func(ctx context.Context, job *river.Job[jobs.CreditCashback]) error {
		return a.Loyalty.CreditCashback(ctx, job.Args.TenantID, job.Args.RedemptionID)
	})
}

// DeliverWebhook works jobs.DeliverWebhook, retried on jobs.RetrySchedule
// from the application's clock; an attempt is one delivery plus recording
// it.
func DeliverWebhook(a *app.App) *Job[jobs.DeliverWebhook] {
	return &Job[jobs.DeliverWebhook]{
		work: func(ctx context.Context, job *river.Job[jobs.DeliverWebhook]) error {
			return a.Webhooks.DeliverWebhook(ctx, job.Args.DeliveryID, job.Attempt, lastAttempt(job))
		},
		timeout:   webhook.Timeout + 20*time.Second,
		nextRetry: func(job *river.Job[jobs.DeliverWebhook]) time.Time { return a.Now().Add(jobs.RetryAfter(job.Attempt)) },
	}
}

// dispatchEvents works jobs.DispatchEvents: batches until the outbox has no
// undispatched event.
func dispatchEvents(a *app.App) *Job[jobs.DispatchEvents] {
	return everyTenant[jobs.DispatchEvents](func(ctx context.Context) error {
		for {
			n, err := a.Webhooks.DispatchEvents(ctx)
			if err != nil || n < webhooks.DispatchBatch {
				return err
			}
		}
	})
}

// ExpirePoints works jobs.ExpirePoints.
func ExpirePoints(a *app.App) *Job[jobs.ExpirePoints] {
	return everyTenant[jobs.ExpirePoints](a.Loyalty.ExpirePoints)
}

// NotifyExpiringPoints works jobs.NotifyExpiringPoints.
func NotifyExpiringPoints(a *app.App) *Job[jobs.NotifyExpiringPoints] {
	return everyTenant[jobs.NotifyExpiringPoints](a.Loyalty.NotifyExpiringPoints)
}

// RecomputeLevels works jobs.RecomputeLevels.
func RecomputeLevels(a *app.App) *Job[jobs.RecomputeLevels] {
	return everyTenant[jobs.RecomputeLevels](a.Loyalty.RecomputeLevels)
}

// CampaignLifecycle works jobs.CampaignLifecycle.
func CampaignLifecycle(a *app.App) *Job[jobs.CampaignLifecycle] {
	return everyTenant[jobs.CampaignLifecycle](a.Campaigns.RunCampaignLifecycle)
}

// PurgeExpired works jobs.PurgeExpired.
func PurgeExpired(a *app.App) *Job[jobs.PurgeExpired] {
	return everyTenant[jobs.PurgeExpired](a.Privacy.PurgeExpired)
}

// scoreCustomers works jobs.ScoreCustomers: every tenant's daily run, or
// one tenant's when asked for.
func scoreCustomers(a *app.App) *Job[jobs.ScoreCustomers] {
	return &Job[jobs.ScoreCustomers]{timeout: LongJobTimeout,
		work: func(ctx context.Context, job *river.Job[jobs.ScoreCustomers]) error {
			if job.Args.TenantID == "" {
				return a.Insights.ScoreAllTenants(ctx)
			}
			_, err := a.Insights.ScoreCustomers(viewer.TenantContext(ctx, job.Args.TenantID), a.Now())
			return err
		}}
}

// importCustomers works jobs.ImportCustomers under LongJobTimeout (a file
// may hold millions of customers; a run cut short resumes after its last
// committed batch). After the last attempt the import ends failed rather
// than running for ever.
func importCustomers(a *app.App) *Job[jobs.ImportCustomers] {
	return &Job[jobs.ImportCustomers]{timeout: LongJobTimeout,
		work: func(ctx context.Context, job *river.Job[jobs.ImportCustomers]) error {
			ctx = viewer.TenantContext(ctx, job.Args.TenantID)
			err := a.Customers.RunCustomerImport(ctx, job.Args.ImportID)
			if err != nil && lastAttempt(job) {
				return errors.Join(err, a.Customers.FailCustomerImport(context.WithoutCancel(ctx), job.Args.ImportID,
					"the import could not complete; the rows loaded so far stay"))
			}
			return err
		}}
}
