// Package app is the application layer: the operations REST, GraphQL, the
// panel, the CLI and the River workers call. Business rules and input guards
// live here and in the domain packages beneath it; transports only decode,
// call one operation and encode.
package app

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
)

// App holds the dependencies of the operations GraphQL, REST, the CLI and
// the workers share.
type App struct {
	DB    *storage.DB
	River *river.Client[*sql.Tx] // nil in commands that enqueue nothing
	Auth  *auth.Service
	Log   *slog.Logger
	Clock func() time.Time // nil: the system clock; tests set it
	// Webhooks says which URLs webhook endpoints may have.
	Webhooks webhook.Guard
	// Counts records what operations and jobs do (sales received and
	// processed, points credited, redemptions, returns); nil records
	// nothing. A *metrics.Registry is one.
	Counts Recorder
	// DocumentLookups is each client's quota of customer lookups by
	// document; zero: DefaultDocumentLookups.
	DocumentLookups ratelimit.Quota

	// History plays the living demo's history into serve --demo's tenant
	// and every new or reset sandbox (demoyear.Play); nil: they hold the
	// seed alone.
	History HistoryFunc

	// inlineSales says the caller processes the sales it registers (the
	// demo's year, which plays a day's sales at its closing; Replayer): no
	// job is queued for them.
	inlineSales bool

	campaigns tenantCache[[]eligibility.Campaign]
	settings  tenantCache[*ent.Tenant]
	// origins are the tenants' back-office origins (CORS).
	origins originsCache
	// feed hands outbox events to GraphQL subscriptions.
	feed eventFeed
	// storeGroups maps the codes of a tenant's stores in groups to them.
	storeGroups tenantCache[map[string][]string]
	jobsOnce    sync.Once
	jobsErr     error
	senderOnce  sync.Once
	sender      *webhook.Sender
	saleGroups  groupCommit[*saleWrite]
	tokenGroups groupCommit[*tokenWrite]
	guessesOnce sync.Once
	guesses     *ratelimit.Limiter
	lookupsOnce sync.Once
	lookups     *ratelimit.Limiter
	// products is the catalogue as this process remembers it (catalogue).
	catalogueOnce sync.Once
	products      *expirable.LRU[string, productFacts]
}

// BringUp readies a migrated database for serving: it makes the first
// signing key, so that the key set published at /.well-known/jwks.json
// holds it before the first token is issued. Processes starting together
// on one database make one key.
func (a *App) BringUp(ctx context.Context) error {
	err := a.DB.Exclusive(ctx, "first signing key", func(tx storage.Tx) error {
		return a.Auth.Keys.CreateFirst(ctx, tx.Ent)
	})
	if err != nil {
		return fmt.Errorf("making the first signing key: %w", err)
	}
	return nil
}

// jobs returns the River client jobs are inserted with: River, or an
// insert-only client made on first use by commands and tests that set none.
func (a *App) jobs() (*river.Client[*sql.Tx], error) {
	a.jobsOnce.Do(func() {
		if a.River == nil {
			a.River, a.jobsErr = jobs.NewInsertClient(a.DB, a.Log)
		}
	})
	return a.River, a.jobsErr
}

// Now is the application's clock: every operation and job reads the time
// here, so a test's clock governs them all.
func (a *App) Now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

// stamp is the instant records are stamped with: the clock's time in UTC, to
// the microsecond both databases keep.
func (a *App) stamp() time.Time { return a.Now().UTC().Truncate(time.Microsecond) }

// webhookSender sends webhook deliveries to the destinations a.Webhooks
// allows.
func (a *App) webhookSender() *webhook.Sender {
	a.senderOnce.Do(func() { a.sender = webhook.NewSender(a.Webhooks) })
	return a.sender
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

// logger is a's log, one that writes nothing when none is set (tests).
func (a *App) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// counts is the recorder of a, one that records nothing when none is set.
func (a *App) counts() Recorder {
	if a.Counts == nil {
		return noCounts{}
	}
	return a.Counts
}

type noCounts struct{}

func (noCounts) SaleReceived()                {}
func (noCounts) SaleProcessed(string)         {}
func (noCounts) PointsCredited(string, int64) {}
func (noCounts) Redemptions(string, int)      {}
func (noCounts) ReturnReceived(string)        {}
func (noCounts) ReturnsProcessed(string, int) {}
func (noCounts) PointsReversed(string, int64) {}
