// Package worker holds River's job arguments and workers (one file per job)
// and builds the River client both dialects share. It never imports graph or
// rest: jobs depend on the data model and small packages only.
package worker

import (
	"cmp"
	"database/sql"
	"log/slog"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/storage"
)

// Deps are what workers need.
type Deps struct {
	DB     *storage.DB
	Log    *slog.Logger
	Now    func() time.Time
	Sender *webhook.Sender // webhook deliveries go through it
	// Metrics counts sales processed, points credited and redemptions; nil
	// counts nothing.
	Metrics *metrics.Registry
}

// Register adds every worker of the platform to workers.
func Register(workers *river.Workers, deps Deps) {
	river.AddWorker(workers, &PruneSigningKeysWorker{DB: deps.DB})
	river.AddWorker(workers, &ExpirePointsWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &NotifyExpiringPointsWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &RecomputeLevelsWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &CreditCashbackWorker{DB: deps.DB, Now: deps.Now, Metrics: deps.Metrics})
	river.AddWorker(workers, &CampaignLifecycleWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &PurgeExpiredWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &ProcessSaleWorker{DB: deps.DB, Now: deps.Now, Metrics: deps.Metrics})
	river.AddWorker(workers, &DispatchEventsWorker{DB: deps.DB, Now: deps.Now})
	river.AddWorker(workers, &DeliverWebhookWorker{DB: deps.DB, Now: deps.Now, Sender: deps.Sender})
}

// Kinds are the kinds of every job of the platform.
func Kinds() []string {
	return []string{
		PruneSigningKeysArgs{}.Kind(), ExpirePointsArgs{}.Kind(), NotifyExpiringPointsArgs{}.Kind(),
		RecomputeLevelsArgs{}.Kind(), CreditCashbackArgs{}.Kind(), CampaignLifecycleArgs{}.Kind(),
		PurgeExpiredArgs{}.Kind(), ProcessSaleArgs{}.Kind(), DispatchEventsArgs{}.Kind(), DeliverWebhookArgs{}.Kind(),
	}
}

// PeriodicJobs are the jobs the leader enqueues on a schedule; the points
// jobs run every pointsEvery (a day by default), the webhook dispatcher every
// dispatchEvery.
func PeriodicJobs(pointsEvery, dispatchEvery time.Duration) []*river.PeriodicJob {
	every := func(d time.Duration, args river.JobArgs) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(d),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: args.Kind()})
	}
	return []*river.PeriodicJob{
		every(time.Hour, PruneSigningKeysArgs{}),
		every(time.Minute, CampaignLifecycleArgs{}),
		every(time.Hour, PurgeExpiredArgs{}),
		every(pointsEvery, ExpirePointsArgs{}),
		every(pointsEvery, NotifyExpiringPointsArgs{}),
		every(pointsEvery, RecomputeLevelsArgs{}),
		every(dispatchEvery, DispatchEventsArgs{}),
	}
}

// Config says whether a client works jobs or only inserts them.
type Config struct {
	Work           bool // false: insert-only (serve --no-worker)
	MaxWorkers     int
	PointsInterval time.Duration // how often points expire and levels are recomputed; 0 means daily
	// RescueAfter is how long a job may stay running before another worker
	// takes it over (its process died); jobs time out at half of it. 0 means
	// an hour, River's default.
	RescueAfter time.Duration
	// DispatchInterval is how often new events are handed to webhook
	// delivery; 0 means DefaultDispatchInterval.
	DispatchInterval time.Duration
	// Webhooks says which destinations deliveries may reach.
	Webhooks webhook.Guard
	// Metrics, when set, times the jobs this client works, counts their
	// failures and what the jobs do (sales processed, points credited).
	Metrics *metrics.Registry
}

// DefaultDispatchInterval is how often new events go to webhook delivery
// unless configured otherwise: the most an event waits before its first
// attempt.
const DefaultDispatchInterval = 2 * time.Second

// NewClient returns the River client of db. With cfg.Work it works the
// default queue and runs the periodic jobs; otherwise it only inserts.
func NewClient(db *storage.DB, log *slog.Logger, cfg Config) (*river.Client[*sql.Tx], error) {
	rc := &river.Config{Logger: log}
	if db.Dialect == dialect.SQLite {
		// No LISTEN/NOTIFY on SQLite: jobs are found by polling, so poll often.
		rc.FetchPollInterval = 100 * time.Millisecond
	}
	rc.FetchCooldown = 10 * time.Millisecond
	// The dispatcher runs every few seconds: keep its finished jobs an hour,
	// not River's default day.
	rc.CompletedJobRetentionPeriod = time.Hour
	if cfg.RescueAfter > 0 {
		rc.RescueStuckJobsAfter = cfg.RescueAfter
		rc.JobTimeout = cfg.RescueAfter / 2
	}
	if cfg.Metrics != nil {
		cfg.Metrics.JobKinds(Kinds()...)
		rc.Middleware = []rivertype.Middleware{cfg.Metrics.RiverMiddleware()}
	}
	if cfg.Work {
		workers := river.NewWorkers()
		Register(workers, Deps{DB: db, Log: log, Now: time.Now, Sender: webhook.NewSender(cfg.Webhooks), Metrics: cfg.Metrics})
		rc.Workers = workers
		rc.PeriodicJobs = PeriodicJobs(cmp.Or(cfg.PointsInterval, 24*time.Hour), cmp.Or(cfg.DispatchInterval, DefaultDispatchInterval))
		rc.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: max(cfg.MaxWorkers, 1)},
		}
	}
	return river.NewClient(db.RiverDriver(), rc)
}
