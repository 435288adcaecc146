// Package worker is the River adapter: it builds the River client both
// dialects share and works each job of package jobs by calling one
// operation of package app. Rules live in app, never here.
package worker

import (
	"cmp"
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/metrics"
)

// ScoreEvery is how often the customers' churn scores are computed; each
// tenant's model is refitted every churn_refit_days of its settings.
const ScoreEvery = 24 * time.Hour

// AudiencesEvery is how often every audience is recomputed whole; the
// changes of a customer's facts refresh its membership as they commit.
const AudiencesEvery = time.Hour

// PeriodicJobs are the jobs the leader enqueues on a schedule; the points
// jobs run every pointsEvery (an hour by default, so points expire and are
// released soon after the tenant's midnight), the webhook dispatcher every
// dispatchEvery.
func PeriodicJobs(pointsEvery, dispatchEvery time.Duration) []*river.PeriodicJob {
	every := func(d time.Duration, args river.JobArgs) *river.PeriodicJob {
		return river.NewPeriodicJob(river.PeriodicInterval(d),
			func() (river.JobArgs, *river.InsertOpts) { return args, nil },
			&river.PeriodicJobOpts{ID: args.Kind()})
	}
	return []*river.PeriodicJob{
		every(time.Hour, jobs.PruneSigningKeys{}),
		every(time.Minute, jobs.CampaignLifecycle{}),
		every(time.Hour, jobs.PurgeExpired{}),
		every(pointsEvery, jobs.ExpirePoints{}),
		every(pointsEvery, jobs.ReleasePendingPoints{}),
		every(pointsEvery, jobs.NotifyExpiringPoints{}),
		every(pointsEvery, jobs.RecomputeLevels{}),
		every(pointsEvery, jobs.UpkeepWallets{}),
		every(pointsEvery, jobs.UpkeepGiftCards{}),
		every(ScoreEvery, jobs.ScoreCustomers{}),
		every(AudiencesEvery, jobs.RecomputeAudiences{}),
		every(dispatchEvery, jobs.DispatchEvents{}),
	}
}

// Config says whether a client works jobs or only inserts them.
type Config struct {
	Work           bool // false: insert-only (serve --no-worker)
	MaxWorkers     int
	PointsInterval time.Duration // how often points expire and are released and levels are recomputed; 0 means hourly
	// RescueAfter is how long a short job may stay running before another
	// worker takes it over (its process died); short jobs time out at two
	// thirds of it. 0 means DefaultRescueAfter. Long jobs keep
	// LongJobTimeout.
	RescueAfter time.Duration
	// DispatchInterval is how often new events are handed to webhook
	// delivery; 0 means DefaultDispatchInterval.
	DispatchInterval time.Duration
	// Metrics, when set, times the jobs this client works and counts their
	// failures; what the jobs do (sales processed, points credited) the
	// application counts (app.App.Counts).
	Metrics *metrics.Registry
	// PollInterval is how often a worker looks for jobs besides hearing of
	// them (LISTEN on PostgreSQL); 0 means River's default (1 s; 100 ms on
	// SQLite, which polls only).
	PollInterval time.Duration
}

// MinSaleWorkers is the fewest workers of the sales queue. Sales are
// processed in groups (app/pos: one transaction for the jobs of a tenant
// worked at the same moment) and a job waiting for its group holds its
// worker: enough for a group in its transaction and the next one filling.
// Few workers made small groups, each waiting for River's next fetch.
const MinSaleWorkers = 128

// Client is a River client as a process runs it. On PostgreSQL a working
// client runs on pgx (River's LISTEN needs it) and the application's jobs
// are inserted by another client on database/sql, in ent's *sql.Tx: one
// interface stands for both clients' types.
type Client interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Recovery from a process death. River's leader retries a job left running
// once it has run for RescueAfter, or for its own Timeout when that is
// longer, looking every 30 s; a killed leader keeps leadership for 15 s at
// most and its successor looks at once. With DefaultRescueAfter a short job
// (a sale, a cashback credit) is retried within a minute of the death; the
// jobs that walk every tenant have LongJobTimeout of their own.
const (
	DefaultRescueAfter = 12 * time.Second
	LongJobTimeout     = 30 * time.Minute
)

// DefaultDispatchInterval is how often new events go to webhook delivery
// unless configured otherwise: the most an event waits before its first
// attempt.
const DefaultDispatchInterval = 2 * time.Second

// NewClient returns the River client of a's database. With cfg.Work it works
// the queues and runs the periodic jobs; otherwise it only inserts. The
// application inserts its jobs with it too (a.River), except on PostgreSQL
// when it works: the working client is then River's pgx driver's, which
// LISTENs for the notification River sends as a job's transaction commits,
// and a.River an insert-only client on database/sql over the same pgx pool,
// so that jobs are still inserted in the transaction of the change that
// causes them.
func NewClient(a *app.App, cfg Config) (Client, error) {
	rc := jobs.Config(a.DB, a.Log)
	if cfg.PollInterval > 0 {
		rc.FetchPollInterval = cfg.PollInterval
	}
	rc.RescueStuckJobsAfter = cmp.Or(cfg.RescueAfter, DefaultRescueAfter)
	rc.JobTimeout = rc.RescueStuckJobsAfter * 2 / 3
	if cfg.Metrics != nil {
		cfg.Metrics.JobKinds(jobs.Kinds()...)
		rc.Middleware = append(rc.Middleware, cfg.Metrics.RiverMiddleware())
	}
	if cfg.Work {
		workers := river.NewWorkers()
		Register(workers, a)
		rc.Workers = workers
		rc.PeriodicJobs = PeriodicJobs(cmp.Or(cfg.PointsInterval, time.Hour), cmp.Or(cfg.DispatchInterval, DefaultDispatchInterval))
		rc.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: max(cfg.MaxWorkers, 1)},
			jobs.SaleQueue:     {MaxWorkers: max(cfg.MaxWorkers, MinSaleWorkers)},
		}
	}
	if !cfg.Work || a.DB.Pgx() == nil {
		client, err := river.NewClient(a.DB.RiverDriver(), rc)
		if err != nil {
			return nil, err
		}
		a.River = client
		return client, nil
	}
	client, err := river.NewClient(riverpgxv5.New(a.DB.Pgx()), rc)
	if err != nil {
		return nil, err
	}
	inserts, err := jobs.NewInsertClient(a.DB, a.Log)
	if err != nil {
		return nil, err
	}
	a.River = inserts
	return client, nil
}
