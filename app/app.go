// Package app is the application layer: the operations REST, GraphQL, the
// panel, the CLI and the River workers call. Business rules and input guards
// live here and in the domain packages beneath it; transports only decode,
// call one operation and encode.
package app

import (
	"database/sql"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/worker"
)

// App holds the dependencies of the operations GraphQL, REST, the CLI and
// the workers share.
type App struct {
	DB    *storage.DB
	River *river.Client[*sql.Tx] // nil in commands that enqueue nothing
	Auth  *auth.Service
	Log   *slog.Logger
	Clock func() time.Time // nil: the system clock; tests set it
	// NoIntrospection turns GraphQL introspection off (it is on for the
	// playground and analysts' tools unless an operator says otherwise).
	NoIntrospection bool
	// Webhooks says which URLs webhook endpoints may have.
	Webhooks webhook.Guard
	// Metrics counts what operations do (sales received, points credited,
	// redemptions) and is what GET /metrics serves; nil counts nothing
	// (rest.NewHandler sets a fresh one).
	Metrics *metrics.Registry
	// RateLimits are the request quotas of the HTTP interface (per client,
	// per tenant, per IP); the zero value is the defaults. The HTTP handler
	// reads them once, when it is made.
	RateLimits ratelimit.Config

	campaigns tenantCache[[]eligibility.Campaign]
	settings  tenantCache[*ent.Tenant]
	jobsOnce  sync.Once
	jobsErr   error
}

// jobs returns the River client jobs are inserted with: River, or an
// insert-only client made on first use by commands and tests that set none.
func (a *App) jobs() (*river.Client[*sql.Tx], error) {
	a.jobsOnce.Do(func() {
		if a.River == nil {
			a.River, a.jobsErr = worker.NewClient(a.DB, a.Log, worker.Config{})
		}
	})
	return a.River, a.jobsErr
}

// nowUTC is the time operations stamp records with: UTC, to the microsecond
// both databases keep.
func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
