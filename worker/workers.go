package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/jobs"
)

// policy is how a kind of job is worked besides the operation it calls.
type policy struct {
	// timeout is how long an attempt may run; 0 keeps the client's
	// JobTimeout, two thirds of RescueAfter (the short jobs).
	timeout time.Duration
	// nextRetry, when set, says when a failed attempt n is tried again
	// (River's own backoff otherwise).
	nextRetry func(n int) time.Time
	// tooEarly, when set, is the error of an operation whose job came before
	// what it waits for: the job is tried again after tooEarlyWait, snoozed,
	// which spends no attempt.
	tooEarly error
}

// short is the policy of the jobs of one change (a sale, a return, a
// cashback credit): the client's timeout, retried within a minute of a
// crash.
var short = policy{}

// long is the policy of the jobs that walk every tenant with work, or a
// whole customer file (a run cut short resumes after its last committed
// batch).
var long = policy{timeout: LongJobTimeout}

// tooEarlyWait is how long a job that came too early waits before it is
// tried again: a return waiting for its sale's processing.
const tooEarlyWait = 2 * time.Second

// table is every job of the platform: its kind, the operation of the
// context that works it (jobs' convention: func(ctx, args) error) and its
// policy.
func table(a *app.App) []registration {
	return []registration{
		job(a.POS.ProcessSale, short),
		job(a.POS.ProcessSaleReturn, policy{tooEarly: pos.ErrSaleNotProcessed}),
		job(a.Loyalty.CreditCashback, short),
		job(a.Webhooks.DeliverWebhook, policy{timeout: webhook.Timeout + 20*time.Second,
			nextRetry: func(n int) time.Time { return a.Now().Add(jobs.RetryAfter(n)) }}),
		job(a.Webhooks.DispatchEvents, long),
		job(a.Customers.RunCustomerImport, long),
		job(a.Scoring.RunCustomerScoring, long),
		job(a.Loyalty.ExpirePoints, long),
		job(a.Loyalty.ReleasePendingPoints, long),
		job(a.Loyalty.NotifyExpiringPoints, long),
		job(a.Loyalty.RecomputeLevels, long),
		job(a.Wallets.UpkeepWallets, long),
		job(a.GiftCards.UpkeepGiftCards, long),
		job(a.Audiences.RecomputeAudiences, long),
		job(a.Campaigns.RunCampaignLifecycle, long),
		job(a.Privacy.PurgeExpired, long),
		job(a.Backoffice.PruneSigningKeys, long),
	}
}

// Register adds a worker for every job of the platform; a.Counts counts
// what they do.
func Register(workers *river.Workers, a *app.App) {
	for _, r := range table(a) {
		r.register(workers)
	}
}

// For is the worker of jobs T, as Register adds it (for tests that work
// one job by hand).
func For[T river.JobArgs](a *app.App) river.Worker[T] {
	for _, r := range table(a) {
		if w, ok := r.(*jobWorker[T]); ok {
			return w
		}
	}
	var args T
	panic(fmt.Sprintf("worker: no worker for %s", args.Kind()))
}

// registration is an entry of the table, whatever its job's type.
type registration interface{ register(*river.Workers) }

// jobWorker works the jobs T with one operation and its policy: the one
// wrapper every job of the platform goes through.
type jobWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	work func(ctx context.Context, args T) error
	policy
}

func job[T river.JobArgs](work func(ctx context.Context, args T) error, p policy) *jobWorker[T] {
	return &jobWorker[T]{work: work, policy: p}
}

func (j *jobWorker[T]) register(workers *river.Workers) { river.AddWorker(workers, j) }

// Work calls the operation with the attempt in its context (jobs.AttemptOf),
// which records a failure for good on the last one.
func (j *jobWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	err := j.work(jobs.WithAttempt(ctx, jobs.Attempt{N: job.Attempt, Max: job.MaxAttempts}), job.Args)
	if j.tooEarly != nil && errors.Is(err, j.tooEarly) {
		return river.JobSnooze(tooEarlyWait)
	}
	return err
}

func (j *jobWorker[T]) Timeout(*river.Job[T]) time.Duration { return j.timeout }

func (j *jobWorker[T]) NextRetry(job *river.Job[T]) time.Time {
	if j.nextRetry == nil {
		return time.Time{}
	}
	return j.nextRetry(job.Attempt)
}
