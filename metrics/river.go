package metrics

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river/rivertype"
)

// Outcomes of a River job attempt, the outcome label of
// fideliza_river_job_duration_seconds.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	OutcomeSnoozed   = "snoozed"
)

// QueueStates are the states of river_job whose counts
// fideliza_river_jobs reports: the jobs waiting or running.
var QueueStates = []string{"available", "scheduled", "retryable", "running"}

// JobKinds starts the per-kind River series of kinds at zero, so a kind that
// never failed still has fideliza_river_job_failures_total and every queue
// state in fideliza_river_jobs.
func (r *Registry) JobKinds(kinds ...string) {
	if r == nil {
		return
	}
	r.init()
	for _, k := range kinds {
		r.jobKinds.Store(k, true)
		r.jobFailures.WithLabelValues(k)
	}
}

// RiverMiddleware times each job attempt a River client works and counts its
// failures; install it in river.Config.Middleware.
func (r *Registry) RiverMiddleware() rivertype.WorkerMiddleware {
	r.init()
	return &riverMiddleware{r: r}
}

type riverMiddleware struct{ r *Registry }

func (*riverMiddleware) IsMiddleware() bool { return true }

func (m *riverMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(ctx context.Context) error) (err error) {
	m.r.JobKinds(job.Kind)
	if job.AttemptedAt != nil {
		// AttemptedAt is when this attempt locked the job; ScheduledAt when
		// it became available (for a retry, when the retry was due).
		m.r.jobQueueWait.WithLabelValues(job.Kind).Observe(max(job.AttemptedAt.Sub(job.ScheduledAt), 0).Seconds())
	}
	start := time.Now()
	defer func() {
		outcome := OutcomeCompleted
		p := recover()
		var cancel *rivertype.JobCancelError
		var snooze *rivertype.JobSnoozeError
		switch {
		case p != nil:
			outcome = OutcomeFailed
		case err == nil:
		case errors.As(err, &cancel):
			outcome = OutcomeCancelled
		case errors.As(err, &snooze):
			outcome = OutcomeSnoozed
		default:
			outcome = OutcomeFailed
		}
		m.r.jobDuration.WithLabelValues(job.Kind, outcome).Observe(time.Since(start).Seconds())
		if outcome == OutcomeFailed {
			m.r.jobFailures.WithLabelValues(job.Kind).Inc()
		}
		if p != nil {
			panic(p) // River's executor recovers it and retries the job
		}
	}()
	return doInner(ctx)
}

// queueTimeout bounds the query of river_job made at each scrape.
const queueTimeout = 2 * time.Second

// WatchQueue adds fideliza_river_jobs, the jobs of river_job waiting or
// running per state and kind, counted at each scrape from db (a pool of
// SQLite or PostgreSQL). Calls after the first do nothing.
func (r *Registry) WatchQueue(db *sql.DB) {
	if r == nil || db == nil {
		return
	}
	r.init()
	r.queueOnce.Do(func() {
		r.reg.MustRegister(&queueCollector{r: r, db: db, desc: prometheus.NewDesc(
			prometheus.BuildFQName(Namespace, "river", "jobs"),
			"River jobs waiting or running (queue depth), by state (available, scheduled, retryable, running) and kind; counted from river_job at each scrape.",
			[]string{"state", "kind"}, nil)})
	})
}

type queueCollector struct {
	r    *Registry
	db   *sql.DB
	desc *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// queueQuery reads the counts through River's index on (state, queue,
// priority, scheduled_at, id); finished jobs are not read.
const queueQuery = `SELECT state, kind, COUNT(*) FROM river_job
WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY state, kind`

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueTimeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	type key struct{ state, kind string }
	c.r.jobKinds.Range(func(k, _ any) bool {
		for _, s := range QueueStates {
			if _, ok := counts[key{s, k.(string)}]; !ok {
				ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 0, s, k.(string))
			}
		}
		return true
	})
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.state, k.kind)
	}
}

func (c *queueCollector) count(ctx context.Context) (map[struct{ state, kind string }]int64, error) {
	rows, err := c.db.QueryContext(ctx, queueQuery)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[struct{ state, kind string }]int64{}
	for rows.Next() {
		var state, kind string
		var n int64
		if err := rows.Scan(&state, &kind, &n); err != nil {
			return nil, err
		}
		out[struct{ state, kind string }{state, kind}] = n
		c.r.jobKinds.Store(kind, true)
	}
	return out, rows.Err()
}
