package jobs

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// SaleQueue is the queue of the sales' jobs. It is apart from the default
// queue (returns, webhooks, the periodic jobs), and its order is fair
// across tenants (Fair).
const SaleQueue = "sales"

// Fair orders the sales queue so that a tenant's backlog cannot hold
// another tenant's sales back: start-time fair queuing, with a job's
// scheduled_at as its virtual time. River works a queue's available jobs
// by priority, then scheduled_at, then id; a tenant's next sale is placed
// one fairStep after the later of the queue's head (the virtual time being
// worked) and the tenant's own last sale. A tenant that sends 20,000 sales
// at once spreads them over 20,000 steps ahead of the head; a tenant that
// sends one lands one step past the head, ahead of all but the first of the
// other's. A tenant's sales keep their order.
//
// Virtual times are fairHorizon in the past, so that every sale job is
// available at once (a scheduled_at to come would make River hold it). A
// process remembers its tenants' last times; several serve processes each
// place the sales they receive, so a tenant sending through P processes
// gets up to P steps per step of the others.
type Fair struct {
	mu   sync.Mutex
	last map[string]time.Time
}

const (
	// fairStep is the virtual time of one sale: a millisecond, which both
	// databases store exactly.
	fairStep = time.Millisecond
	// fairHorizon is how far in the past the virtual clock runs: a tenant's
	// backlog reaches the present (and its jobs wait for their time) only
	// past fairHorizon/fairStep, 2.6 billion sales.
	fairHorizon = 30 * 24 * time.Hour
	// fairForget is how many tenants a Fair remembers before it forgets
	// those whose last sale is behind the head (they restart from it anyway).
	fairForget = 10_000
)

// SaleJobs returns the jobs of a tenant's new sales, in the sales' order,
// each at its place in the sales queue; head is the queue's head
// (SaleQueueHead).
func (f *Fair) SaleJobs(tenantID string, head time.Time, saleIDs []string) []river.InsertManyParams {
	if head.IsZero() {
		head = time.Now().Add(-fairHorizon)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		f.last = map[string]time.Time{}
	}
	if len(f.last) >= fairForget {
		for t, at := range f.last {
			if at.Before(head) {
				delete(f.last, t)
			}
		}
	}
	at := head
	if last := f.last[tenantID]; last.After(at) {
		at = last
	}
	out := make([]river.InsertManyParams, len(saleIDs))
	for i, id := range saleIDs {
		at = at.Add(fairStep)
		out[i] = river.InsertManyParams{Args: ProcessSale{TenantID: tenantID, SaleID: id},
			InsertOpts: &river.InsertOpts{Queue: SaleQueue, ScheduledAt: at}}
	}
	f.last[tenantID] = at
	return out
}

// fairInsert makes the sales placed by Fair available as they are inserted:
// River holds a job given a ScheduledAt as scheduled, for its scheduler to
// make available when the time comes (every 5 s, in batches), and the
// sales' times are in the past.
type fairInsert struct {
	river.MiddlewareDefaults
}

func (*fairInsert) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error),
) ([]*rivertype.JobInsertResult, error) {
	now := time.Now()
	for _, p := range many {
		if p.Queue == SaleQueue && p.State == rivertype.JobStateScheduled && p.ScheduledAt != nil && !p.ScheduledAt.After(now) {
			p.State = rivertype.JobStateAvailable
		}
	}
	return doInner(ctx)
}

// SaleQueueHead is the virtual time of the sales queue's next job (zero when
// none waits), read in tx: one probe of River's fetching index.
func SaleQueueHead(ctx context.Context, rc *river.Client[*sql.Tx], tx *sql.Tx) (time.Time, error) {
	res, err := rc.JobListTx(ctx, tx, river.NewJobListParams().Queues(SaleQueue).
		States(rivertype.JobStateAvailable).Priorities(1).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1))
	if err != nil || len(res.Jobs) == 0 {
		return time.Time{}, err
	}
	return res.Jobs[0].ScheduledAt, nil
}
