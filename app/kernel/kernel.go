// Package kernel is what every context of the application layer shares: the
// tenant context (its settings and live campaigns kept in memory),
// transactions (the database and the jobs client), the clock, the log, the
// business counters, input guards, paging and authorization. The error kinds
// are domain/apperr's. It imports no context and no transport.
package kernel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Kernel holds the dependencies every context's operations share. Its zero
// value (with a DB) is ready; the contexts hold one pointer to it, so a
// change of a field (a test's clock) reaches them all.
type Kernel struct {
	DB    *storage.DB
	River *river.Client[*sql.Tx] // nil in commands that enqueue nothing
	Auth  *auth.Service
	Log   *slog.Logger
	Clock func() time.Time // nil: the system clock; tests set it
	// WebhookGuard says which URLs webhook endpoints may have.
	WebhookGuard webhook.Guard
	// Counts records what operations and jobs do (sales received and
	// processed, points credited, redemptions, returns); nil records
	// nothing. A *metrics.Registry is one.
	Counts Recorder
	// DocumentLookups is each client's quota of customer lookups by
	// document; zero: DefaultDocumentLookups.
	DocumentLookups ratelimit.Quota

	// InlineSales says the caller processes the sales it registers (the
	// demo's year, which plays a day's sales at its closing; Replayer): no
	// job is queued for them.
	InlineSales bool

	// The read model (tenantcache.go).
	campaigns tenantCache[*campaignrules.Live]
	settings  tenantCache[*ent.Tenant]
	// storeGroups maps the codes of a tenant's stores in groups to them.
	storeGroups tenantCache[map[string][]string]
	feed        changeFeed
	jobsOnce    sync.Once
	jobsErr     error
}

// Jobs returns the River client jobs are inserted with: River, or an
// insert-only client made on first use by commands and tests that set none.
func (k *Kernel) Jobs() (*river.Client[*sql.Tx], error) {
	k.jobsOnce.Do(func() {
		if k.River == nil {
			k.River, k.jobsErr = jobs.NewInsertClient(k.DB, k.Log)
		}
	})
	return k.River, k.jobsErr
}

// Limiter returns the counter of requests named name: in PostgreSQL, shared
// by every process of the database (ratelimit.Shared), so that a quota
// holds however many processes serve; in this process's memory on SQLite
// (one process) or without a database. now is its clock (nil: the
// system's), maxKeys bounds a memory counter's keys (0: the default).
func (k *Kernel) Limiter(name string, now func() time.Time, maxKeys int) ratelimit.Counter {
	if k.DB != nil && k.DB.Dialect == dialect.Postgres {
		return ratelimit.NewShared(k.DB.SQL, name, now, k.Log)
	}
	return ratelimit.New(now, maxKeys)
}

// Now is the application's clock: every operation and job reads the time
// here, so a test's clock governs them all.
func (k *Kernel) Now() time.Time {
	if k.Clock != nil {
		return k.Clock()
	}
	return time.Now()
}

// Stamp is the instant records are stamped with: the clock's time in UTC, to
// the microsecond both databases keep.
func (k *Kernel) Stamp() time.Time { return k.Now().UTC().Truncate(time.Microsecond) }

// LockCustomer locks a customer's row until the transaction of c ends
// (PostgreSQL: SELECT … FOR UPDATE; SQLite's write transactions are serial
// already) and reads it, erased or not; an unknown customer is not found.
//
// The lock order: every transaction that writes a customer's data (its
// profile and consents, its ledger and lots, its sales, returns and
// redemptions, its erasure) takes this lock before any other row lock it
// takes or any row it writes, then the rest in the order customer, ledger,
// lots, sales, redemptions, events. Transactions on one customer therefore
// queue on its row instead of deadlocking, and an erasure sees no write
// begun before it commit after it. docs/decisions.md, "Lock order".
func (k *Kernel) LockCustomer(ctx context.Context, c *ent.Client, id string) (*ent.Customer, error) {
	cust, err := ledger.LockCustomer(ctx, c, k.DB.Dialect, id)
	if errors.Is(err, ledger.ErrCustomerNotFound) {
		return nil, apperr.NotFound("customer")
	}
	return cust, err
}

// Recorder records what operations do, for the business metrics.
type Recorder interface {
	SaleReceived()
	SaleProcessed(status string)
	PointsCredited(source string, points int64)
	Redemptions(source string, n int)
	ReturnReceived(kind string)
	ReturnsProcessed(kind string, n int)
	PointsReversed(source string, points int64)
}

// Where points and redemptions come from, as Recorder counts them.
const (
	SourceAPI        = "api"
	SourceAdjustment = "adjustment"
	SourceRedemption = "redemption"
	SourceSale       = "sale"
	SourceCashback   = "cashback"
	SourceReturn     = "return"
)

// How a sale's processing ended, as Recorder counts it.
const (
	SaleProcessed = "processed"
	SaleFailed    = "failed"
)

// Logger is k's log, one that writes nothing when none is set (tests).
func (k *Kernel) Logger() *slog.Logger {
	if k.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.Log
}

// Recorder is the recorder of k, one that records nothing when none is set.
func (k *Kernel) Recorder() Recorder {
	if k.Counts == nil {
		return noCounts{}
	}
	return k.Counts
}

type noCounts struct{}

func (noCounts) SaleReceived()                {}
func (noCounts) SaleProcessed(string)         {}
func (noCounts) PointsCredited(string, int64) {}
func (noCounts) Redemptions(string, int)      {}
func (noCounts) ReturnReceived(string)        {}
func (noCounts) ReturnsProcessed(string, int) {}
func (noCounts) PointsReversed(string, int64) {}

// UpkeepBatch bounds how many lots, customers or campaigns one run of a
// periodic job handles; a larger backlog is left to the next run.
const UpkeepBatch = 1000

// EachActiveTenant runs fn in the context of every active tenant, one after
// the other; a tenant that fails does not stop the others, and the errors
// name their tenants (what says what failed).
func (k *Kernel) EachActiveTenant(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	tenants, err := k.DB.Ent.Tenant.Query().Where(tenant.Active(true)).IDs(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range tenants {
		if err := fn(viewer.TenantContext(ctx, id)); err != nil {
			errs = append(errs, fmt.Errorf("%s tenant %s: %w", what, id, err))
		}
	}
	return errors.Join(errs...)
}
