// Package jobs declares the arguments of every River job of the platform:
// the application inserts them (in the transaction of the change that
// causes them) and package worker works them. It imports neither, so both
// can import it.
//
// One convention for every job: the arguments of a job about one tenant's
// data carry its TenantID; the periodic jobs that walk every tenant
// (ExpirePoints, DispatchEvents …) carry none, and ScoreCustomers carries
// one only when a tenant asked for its own run. The context that owns a
// job works it with one operation of the shape func(ctx, args) error
// (package worker's table says which); which attempt runs comes in the
// context (AttemptOf), put there by the worker.
package jobs

import (
	"database/sql"
	"log/slog"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/fideliza/fideliza/quietlog"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/tracing"
)

// ProcessSale processes a registered sale: the customer's points (with
// bonus-points campaigns), the redemptions of the discounts it carries,
// lifetime value, level, and the sale.processed event. It is inserted with
// the sale, in its transaction.
type ProcessSale struct {
	TenantID string `json:"tenant_id"`
	SaleID   string `json:"sale_id"`
}

func (ProcessSale) Kind() string { return "process_sale" }

// ProcessSaleReturn applies a return or cancellation of a sale once the
// sale is processed, with the sale's earlier returns first. It is inserted
// with the return, in its transaction.
type ProcessSaleReturn struct {
	TenantID string `json:"tenant_id"`
	ReturnID string `json:"return_id"`
}

func (ProcessSaleReturn) Kind() string { return "process_sale_return" }

// CreditCashback credits the cashback of a redemption to the customer's
// points, at the tenant's earning rate. It is inserted with the redemption,
// in its transaction, scheduled credit_after_days later.
type CreditCashback struct {
	TenantID     string `json:"tenant_id"`
	RedemptionID string `json:"redemption_id"`
}

func (CreditCashback) Kind() string { return "credit_cashback" }

// DeliverWebhook makes one attempt of a delivery; River retries it on
// RetrySchedule. TenantID is empty in the jobs queued before it was added
// (still in river_job for a day of retries): the delivery's row names its
// tenant.
type DeliverWebhook struct {
	TenantID   string `json:"tenant_id"`
	DeliveryID string `json:"delivery_id"`
}

func (DeliverWebhook) Kind() string { return "deliver_webhook" }

// ExpirePoints expires the lots whose time has come.
type ExpirePoints struct{}

func (ExpirePoints) Kind() string { return "expire_points" }

// ReleasePendingPoints makes the points whose pending period is over
// spendable.
type ReleasePendingPoints struct{}

func (ReleasePendingPoints) Kind() string { return "release_pending_points" }

// NotifyExpiringPoints records a points.expiring event, once per lot, for
// lots that expire soon.
type NotifyExpiringPoints struct{}

func (NotifyExpiringPoints) Kind() string { return "notify_expiring_points" }

// UpkeepWallets marks released the money wallets' lapsed holds, releases
// their lots whose pending period is over, expires those whose time has
// come and records cashback.expiring for those expiring soon.
type UpkeepWallets struct{}

func (UpkeepWallets) Kind() string { return "upkeep_wallets" }

// UpkeepGiftCards expires the gift cards whose time has come and records
// gift_card.expiring for those expiring soon.
type UpkeepGiftCards struct{}

func (UpkeepGiftCards) Kind() string { return "upkeep_gift_cards" }

// RecomputeLevels lowers the levels that points leaving the trailing
// 12-month window no longer hold.
type RecomputeLevels struct{}

func (RecomputeLevels) Kind() string { return "recompute_levels" }

// CampaignLifecycle stores campaigns' statuses as their dates pass and
// records campaign.activated.
type CampaignLifecycle struct{}

func (CampaignLifecycle) Kind() string { return "campaign_lifecycle" }

// PurgeExpired deletes expired idempotency keys and validation tokens.
type PurgeExpired struct{}

func (PurgeExpired) Kind() string { return "purge_expired" }

// DispatchEvents hands the outbox's new events to webhook delivery.
type DispatchEvents struct{}

func (DispatchEvents) Kind() string { return "dispatch_events" }

// PruneSigningKeys deletes signing keys retired long enough ago that no
// live token was signed with them.
type PruneSigningKeys struct{}

func (PruneSigningKeys) Kind() string { return "prune_signing_keys" }

// ScoreCustomers scores the customers of one tenant, or of every tenant
// when TenantID is empty (the daily run), refitting each tenant's churn
// model when it is due (the v2 predictive segments).
type ScoreCustomers struct {
	TenantID string `json:"tenant_id,omitempty"`
}

func (ScoreCustomers) Kind() string { return "score_customers" }

// InsertOpts: one run per tenant waits at a time; asking again while one
// waits or runs adds nothing.
func (ScoreCustomers) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled, // not completed: a later request runs again
	}}}
}

// RecomputeAudiences recomputes every audience's members of every tenant:
// what no change of a customer's facts refreshed (days passing, churn
// scores refitted, levels lowered by RecomputeLevels, static segments'
// members).
type RecomputeAudiences struct{}

func (RecomputeAudiences) Kind() string { return "recompute_audiences" }

// ImportCustomers loads a customer file sent to the API (POST
// /v1/customers/imports), inserted once the whole file is stored.
type ImportCustomers struct {
	TenantID string `json:"tenant_id"`
	ImportID string `json:"import_id"`
}

func (ImportCustomers) Kind() string { return "import_customers" }

// Kinds are the kinds of every job of the platform.
func Kinds() []string {
	return []string{
		PruneSigningKeys{}.Kind(), ExpirePoints{}.Kind(), NotifyExpiringPoints{}.Kind(),
		RecomputeLevels{}.Kind(), CreditCashback{}.Kind(), CampaignLifecycle{}.Kind(),
		PurgeExpired{}.Kind(), ProcessSale{}.Kind(), DispatchEvents{}.Kind(), DeliverWebhook{}.Kind(),
		ProcessSaleReturn{}.Kind(), ScoreCustomers{}.Kind(), ReleasePendingPoints{}.Kind(), ImportCustomers{}.Kind(),
		RecomputeAudiences{}.Kind(), UpkeepWallets{}.Kind(), UpkeepGiftCards{}.Kind(),
	}
}

// RetrySchedule is the wait before each retry of a failed webhook delivery:
// about a day in all, then the delivery fails. Attempt n+1 follows attempt n
// by RetrySchedule[n-1].
var RetrySchedule = []time.Duration{
	30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// DeliveryAttempts is how many times a delivery is tried.
var DeliveryAttempts = len(RetrySchedule) + 1

// RetryAfter is the wait after attempt n of a delivery failed.
func RetryAfter(n int) time.Duration {
	return RetrySchedule[min(max(n, 1), len(RetrySchedule))-1]
}

// Delivery is the job of the attempts of a delivery of tenantID.
func Delivery(tenantID, deliveryID string) river.InsertManyParams {
	return river.InsertManyParams{Args: DeliverWebhook{TenantID: tenantID, DeliveryID: deliveryID},
		InsertOpts: &river.InsertOpts{MaxAttempts: DeliveryAttempts}}
}

// Config tunes a River client of db; package worker adds its workers and
// periodic jobs to it.
func Config(db *storage.DB, log *slog.Logger) *river.Config {
	rc := &river.Config{Logger: quietlog.For(log), Middleware: append([]rivertype.Middleware{&fairInsert{}}, tracing.RiverMiddleware()...)}
	if db.Dialect == dialect.SQLite {
		// No LISTEN/NOTIFY on SQLite: jobs are found by polling, so poll often.
		rc.FetchPollInterval = 100 * time.Millisecond
		// River's nightly reindexer names PostgreSQL's indexes, which SQLite
		// does not have: at midnight UTC it logged an error for each of them.
		rc.ReindexerSchedule = river.NeverSchedule()
	}
	rc.FetchCooldown = 10 * time.Millisecond
	// The dispatcher runs every few seconds: keep its finished jobs an hour,
	// not River's default day.
	rc.CompletedJobRetentionPeriod = time.Hour
	return rc
}

// NewInsertClient returns a River client of db that only inserts jobs (for
// commands and tests that work none).
func NewInsertClient(db *storage.DB, log *slog.Logger) (*river.Client[*sql.Tx], error) {
	return river.NewClient(db.RiverDriver(), Config(db, log))
}
