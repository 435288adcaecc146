package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/worker"
)

// The tests of webhook delivery: a real receiver on loopback, the outbox's
// events dispatched and delivered by the jobs on a controllable clock, the
// retry schedule, the dispatch rules and the outbound guard in the worker.
// Helpers are prefixed wh.

// whTolerance is the receiver's timestamp tolerance, Standard Webhooks'
// recommended five minutes.
const whTolerance = 5 * time.Minute

// whRequest is one request the receiver got.
type whRequest struct {
	header    http.Header
	body      []byte
	env       webhook.Envelope
	raw       map[string]any
	verifyErr []error // one per secret the receiver checked with
	sigs      []string
}

// whReceiver is a tenant's system: an HTTP server on loopback that checks
// every request with webhook.Verify against its secrets and records it.
type whReceiver struct {
	srv     *httptest.Server
	now     func() time.Time
	mu      sync.Mutex
	secrets []string
	got     []whRequest
	status  atomic.Int64
	excerpt atomic.Value // string: the body of every answer
}

func whNewReceiver(t *testing.T, now func() time.Time) *whReceiver {
	t.Helper()
	r := &whReceiver{now: now}
	r.status.Store(http.StatusNoContent)
	r.excerpt.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *whReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	got := whRequest{header: req.Header.Clone(), body: body, sigs: strings.Fields(req.Header.Get(webhook.HeaderSignature))}
	_ = json.Unmarshal(body, &got.env)
	_ = json.Unmarshal(body, &got.raw)
	r.mu.Lock()
	secrets := slices.Clone(r.secrets)
	r.mu.Unlock()
	ok := len(secrets) > 0
	for _, s := range secrets {
		err := webhook.Verify(s, req.Header, body, r.now(), whTolerance)
		got.verifyErr = append(got.verifyErr, err)
		ok = ok && err == nil
	}
	r.mu.Lock()
	r.got = append(r.got, got)
	r.mu.Unlock()
	if !ok || req.Method != http.MethodPost {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	w.WriteHeader(int(r.status.Load()))
	_, _ = io.WriteString(w, r.excerpt.Load().(string))
}

// verifyWith sets the secrets every request must verify with.
func (r *whReceiver) verifyWith(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = secrets
}

func (r *whReceiver) requests() []whRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *whReceiver) url() string { return r.srv.URL + "/fideliza/hooks" }

type whBundle struct {
	db      *storage.DB
	app     *app.App
	clock   *testclock.Clock
	rc      *river.Client[*sql.Tx] // insert-only
	sys     context.Context
	ctx     context.Context // the tenant's
	tenant  string
	deliver *worker.DeliverWebhookWorker
	lastJob int64 // the last deliver_webhook job worked
}

// whSetup makes a tenant on a clock that starts at the real time (the
// endpoints' created_at is the database's real time, and an endpoint
// receives only later events), an App that lets endpoints be on loopback,
// an insert-only River client and the delivery worker.
func whSetup(t *testing.T, db *storage.DB) *whBundle {
	t.Helper()
	clock := testclock.NewStored(time.Now().UTC(), nil)
	log := slog.New(slog.DiscardHandler)
	a := app.New(&app.Config{DB: db, Clock: clock.Now, Log: log, WebhookGuard: webhook.Guard{AllowLoopback: true}})
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, "Loja Webhooks", nil)
	require.NoError(t, err)
	rc, err := worker.NewClient(a, worker.Config{})
	require.NoError(t, err)
	return &whBundle{
		db: db, app: a, clock: clock, rc: rc, sys: sys,
		ctx: viewer.TenantContext(context.Background(), tn.ID), tenant: tn.ID,
		deliver: &worker.DeliverWebhookWorker{App: a},
	}
}

// endpoint registers an endpoint of the tenant of ctx and moves the clock
// past its creation.
func (b *whBundle) endpoint(ctx context.Context, t *testing.T, url string, types []string, active bool) *webhooks.WebhookSecret {
	t.Helper()
	ws, err := b.app.Webhooks.CreateWebhookEndpoint(ctx, webhooks.WebhookInput{URL: &url, EventTypes: types, Active: &active})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(ws.Secret, webhook.SecretPrefix))
	require.Equal(t, ws.Secret, ws.Endpoint.Secret)
	b.clock.Set(time.Now().Add(time.Second).UTC())
	return ws
}

// dispatch runs the dispatcher once at the clock's time.
func (b *whBundle) dispatch(t *testing.T) int {
	t.Helper()
	n, err := b.app.Webhooks.DispatchEvents(context.Background())
	require.NoError(t, err)
	return n
}

// whJob is a deliver_webhook row of river_job.
type whJob struct {
	id          int64
	args        jobs.DeliverWebhook
	maxAttempts int
}

// queuedJobs lists the deliver_webhook jobs inserted since the last call.
func (b *whBundle) queuedJobs(t *testing.T) []whJob {
	t.Helper()
	rows, err := b.db.SQL.Query(fmt.Sprintf(`SELECT id, args, max_attempts FROM river_job WHERE kind = 'deliver_webhook' AND id > %d ORDER BY id`, b.lastJob))
	require.NoError(t, err)
	defer rows.Close()
	var out []whJob
	for rows.Next() {
		var j whJob
		var args []byte
		require.NoError(t, rows.Scan(&j.id, &args, &j.maxAttempts))
		require.NoError(t, json.Unmarshal(args, &j.args))
		out = append(out, j)
		b.lastJob = j.id
	}
	require.NoError(t, rows.Err())
	return out
}

func whJobCount(t *testing.T, db *storage.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'deliver_webhook'`).Scan(&n))
	return n
}

// work makes attempt n of a delivery's job, as River hands it over.
func (b *whBundle) work(w *worker.DeliverWebhookWorker, j whJob, attempt int) error {
	return w.Work(context.Background(), whDeliverJob(j.id, j.args.DeliveryID, attempt, j.maxAttempts))
}

func whDeliverJob(id int64, deliveryID string, attempt, maxAttempts int) *river.Job[jobs.DeliverWebhook] {
	return &river.Job[jobs.DeliverWebhook]{
		JobRow: &rivertype.JobRow{ID: id, Kind: jobs.DeliverWebhook{}.Kind(), Attempt: attempt, MaxAttempts: maxAttempts},
		Args:   jobs.DeliverWebhook{DeliveryID: deliveryID},
	}
}

// deliveries lists the deliveries of the tenant of ctx with their attempt
// logs, oldest first.
func (b *whBundle) deliveries(ctx context.Context, t *testing.T) []*ent.WebhookDelivery {
	t.Helper()
	ds, err := b.db.Ent.WebhookDelivery.Query().
		WithAttemptLog(func(q *ent.WebhookAttemptQuery) {
			q.Order(ent.Asc(webhookattempt.FieldAttemptedAt), ent.Asc(webhookattempt.FieldID))
		}).
		Order(ent.Asc(webhookdelivery.FieldCreatedAt), ent.Asc(webhookdelivery.FieldID)).All(ctx)
	require.NoError(t, err)
	return ds
}

func (b *whBundle) delivery(t *testing.T, id string) *ent.WebhookDelivery {
	t.Helper()
	d, err := b.db.Ent.WebhookDelivery.Query().Where(webhookdelivery.ID(id)).
		WithAttemptLog(func(q *ent.WebhookAttemptQuery) {
			q.Order(ent.Asc(webhookattempt.FieldAttemptedAt), ent.Asc(webhookattempt.FieldID))
		}).Only(b.sys)
	require.NoError(t, err)
	return d
}

// record writes an event of a tenant directly in the outbox at the clock's
// time.
func (b *whBundle) record(t *testing.T, tenantID, typ, subject string) *ent.Event {
	t.Helper()
	return b.recordAt(t, tenantID, typ, subject, b.clock.Now())
}

func (b *whBundle) recordAt(t *testing.T, tenantID, typ, subject string, at time.Time) *ent.Event {
	t.Helper()
	require.NoError(t, outbox.Record(b.sys, b.db.Ent, at, tenantID, typ, subject, map[string]any{"subject": subject}))
	ev, err := b.db.Ent.Event.Query().Where(event.TenantID(tenantID), event.Type(typ), event.SubjectID(subject)).
		Order(ent.Desc(event.FieldID)).First(b.sys)
	require.NoError(t, err)
	return ev
}

func whCPF(i int) string {
	base := fmt.Sprintf("%09d", 318000000+i*7907)
	digit := func(s string) byte {
		sum := 0
		for j := range len(s) {
			sum += int(s[j]-'0') * (len(s) + 1 - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base)
	return base + string(d1) + string(digit(base+string(d1)))
}

// whTriggerAll makes each event type happen through the platform's own
// operations and jobs: a credit crossing the silver threshold, a scheduled
// campaign reaching its start, a lot entering the expiry notice window and a
// registered sale processed. It returns the events recorded.
func (b *whBundle) triggerAll(t *testing.T) map[string]*ent.Event {
	t.Helper()
	start := b.clock.Now()
	cpf := whCPF(1)
	cust, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{
		Name: opt.Of("Helena"), Email: opt.Of("helena@example.com"), CPF: opt.Of(cpf),
	})
	require.NoError(t, err)

	// customer.level_changed: 1500 points cross the silver threshold (1000).
	n := int64(1500)
	_, err = b.app.Loyalty.CreditPoints(b.ctx, loyalty.CreditInput{CustomerID: cust.ID, OrderID: "order-1", Points: &n})
	require.NoError(t, err)

	// campaign.activated: a scheduled campaign whose start passes.
	starts, ends := start.Add(time.Hour), start.Add(3*time.Hour)
	camp, err := b.app.Campaigns.CreateCampaign(b.ctx, campaigns.CampaignInput{
		Name: "Brinde de inverno", Type: "gift", StartsAt: &starts, EndsAt: &ends,
		Discount: &campaigns.DiscountInput{GiftSKU: opt.Of("BRINDE").Ptr()},
	})
	require.NoError(t, err)
	b.clock.Set(starts)
	require.NoError(t, (&worker.CampaignLifecycleWorker{App: app.New(&app.Config{DB: b.db, Clock: b.clock.Now})}).
		Work(context.Background(), &river.Job[jobs.CampaignLifecycle]{}))

	// points.expiring: 10 days before the 1500 points expire (12 months).
	b.clock.Set(start.AddDate(0, 12, 0).Add(-10 * 24 * time.Hour))
	require.NoError(t, (&worker.NotifyExpiringPointsWorker{App: app.New(&app.Config{DB: b.db, Clock: b.clock.Now})}).
		Work(context.Background(), &river.Job[jobs.NotifyExpiringPoints]{}))

	// sale.processed: a sale registered by the POS and processed by its job,
	// with a campaign's discount on its coffee: R$ 11.50 paid, 11 points.
	_, err = b.app.Backoffice.CreateStore(b.sys, b.tenant, "LOJA-01", "Loja Centro")
	require.NoError(t, err)
	from, until := b.clock.Now().Add(-time.Hour), b.clock.Now().Add(time.Hour)
	discount, err := b.app.Campaigns.CreateCampaign(b.ctx, campaigns.CampaignInput{
		Name: "Real de desconto", Type: "discount", Channels: []string{"pdv"}, StartsAt: &from, EndsAt: &until,
		Discount: &campaigns.DiscountInput{Mode: "fixed_amount", Value: opt.Of(decimal.NewFromInt(1)).Ptr()},
	})
	require.NoError(t, err)
	soldAt := b.clock.Now().Add(-time.Minute)
	dec := decimal.RequireFromString
	amount, payable, one := dec("12.50"), dec("11.50"), decimal.NewFromInt(1)
	s, err := b.app.RegisterSale(b.ctx, app.SaleInput{
		Protocol: "PARTNER_V1", Customer: &app.POSCustomer{ID: cpf, Type: "CPF"},
		SaleID: "4242", StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
		Date: &soldAt, Amount: &amount, AmountPayable: &payable,
		Items: []app.SaleItemInput{
			{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: opt.Of(dec("12.00")).Ptr(), Quantity: &one,
				Discounts: []app.POSDiscount{{PromotionID: &discount.ID, UnitDiscount: &one, Quantity: &one}}},
			{ID: "2", GTIN: "7891000100110", Description: "Bala", UnitPrice: opt.Of(dec("0.50")).Ptr(), Quantity: &one},
		},
		Payments: []app.SalePaymentInput{{ID: "1", Amount: &payable, Method: "PIX"}},
	})
	require.NoError(t, err)
	require.NoError(t, (&worker.ProcessSaleWorker{App: app.New(&app.Config{DB: b.db, Clock: b.clock.Now})}).Work(context.Background(),
		&river.Job[jobs.ProcessSale]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25},
			Args: jobs.ProcessSale{TenantID: b.tenant, SaleID: s.ID}}))

	// sale.returned: the sweet comes back; the 11 whole reais paid for the
	// rest still earn the 11 points, so no points.reversed yet.
	// sale.cancelled, points.reversed and redemption.rolled_back: the rest
	// is cancelled, the coffee and its discount with it.
	returnWork := &worker.ProcessSaleReturnWorker{App: app.New(&app.Config{DB: b.db, Clock: b.clock.Now})}
	for _, in := range []app.SaleReturnInput{
		{Kind: "return", ID: "R-1", Items: []app.ReturnItemInput{{ID: "2", Quantity: &one}}},
		{Kind: "cancellation", ID: "C-1"},
	} {
		in.Protocol, in.SaleRef, in.StoreID, in.Date = "PARTNER_V1", "4242", "LOJA-01", &soldAt
		ret, err := b.app.RegisterSaleReturn(b.ctx, in)
		require.NoError(t, err)
		require.NoError(t, returnWork.Work(context.Background(), &river.Job[jobs.ProcessSaleReturn]{
			JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25}, Args: jobs.ProcessSaleReturn{TenantID: b.tenant, ReturnID: ret.ID}}))
	}

	// customer.level_will_downgrade: a year on, the 1500 points have left
	// the 12 months; the tenant's 30-day grace keeps silver and announces
	// the drop.
	_, err = b.app.Backoffice.UpdateTenant(b.sys, b.tenant, backoffice.TenantSettings{LevelGraceDays: opt.Of(30).Ptr()})
	require.NoError(t, err)
	b.clock.Set(start.AddDate(0, 12, 2))
	require.NoError(t, (&worker.RecomputeLevelsWorker{App: app.New(&app.Config{DB: b.db, Clock: b.clock.Now})}).
		Work(context.Background(), &river.Job[jobs.RecomputeLevels]{}))

	// customer.consent_changed: Helena agrees to e-mail marketing.
	_, err = b.app.Customers.PatchCustomer(b.ctx, cust.ID, customers.CustomerInput{Consent: opt.Of(customers.ConsentInput{MarketingEmail: opt.Of(true)})})
	require.NoError(t, err)
	// customer.erased: another customer, without consents, is erased.
	ivo, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{Name: opt.Of("Ivo"), Email: opt.Of("ivo@example.com"), CPF: opt.Of(whCPF(2))})
	require.NoError(t, err)
	require.NoError(t, b.app.Privacy.EraseCustomer(b.ctx, ivo.ID))

	evs, err := b.db.Ent.Event.Query().Order(ent.Asc(event.FieldID)).All(b.ctx)
	require.NoError(t, err)
	byType := map[string]*ent.Event{}
	for _, ev := range evs {
		require.NotContains(t, byType, ev.Type, "one event of each type")
		byType[ev.Type] = ev
	}
	require.Len(t, byType, len(outbox.Types), "every event type happened")
	require.Equal(t, cust.ID, byType[outbox.CustomerLevelChanged].SubjectID)
	require.Equal(t, "silver", byType[outbox.CustomerLevelChanged].Data["to"])
	require.Equal(t, cust.ID, byType[outbox.CustomerLevelWillDowngrade].SubjectID)
	require.Equal(t, "bronze", byType[outbox.CustomerLevelWillDowngrade].Data["to"])
	require.Equal(t, camp.ID, byType[outbox.CampaignActivated].SubjectID)
	require.Equal(t, cust.ID, byType[outbox.PointsExpiring].SubjectID)
	require.Equal(t, s.ID, byType[outbox.SaleProcessed].SubjectID)
	require.Equal(t, s.ID, byType[outbox.SaleReturned].SubjectID)
	require.Equal(t, s.ID, byType[outbox.SaleCancelled].SubjectID)
	require.Equal(t, cust.ID, byType[outbox.PointsReversed].SubjectID)
	require.EqualValues(t, 11, byType[outbox.PointsReversed].Data["points"])
	require.Equal(t, discount.ID, byType[outbox.RedemptionRolledBack].Data["campaign_id"])
	return byType
}

// requireEnvelope checks a request carries event ev in the envelope, with
// the event id as webhook-id, signed at the given time.
func requireEnvelope(t *testing.T, r whRequest, ev *ent.Event, signedAt time.Time) {
	t.Helper()
	for i, err := range r.verifyErr {
		require.NoError(t, err, "signature %d", i)
	}
	require.Equal(t, ev.ID, r.header.Get(webhook.HeaderID))
	require.Equal(t, strconv.FormatInt(signedAt.Unix(), 10), r.header.Get(webhook.HeaderTimestamp))
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, ev.ID, r.env.ID)
	require.Equal(t, ev.Type, r.env.Type)
	require.Equal(t, ev.TenantID, r.env.TenantID)
	require.True(t, ev.CreatedAt.Equal(r.env.CreatedAt), "created_at %s, event %s", r.env.CreatedAt, ev.CreatedAt)
	want, err := json.Marshal(ev.Data)
	require.NoError(t, err)
	got, err := json.Marshal(r.env.Data)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.ElementsMatch(t, []string{"id", "type", "tenant_id", "created_at", "data"}, slices.Collect(maps.Keys(r.raw)))
	created, ok := r.raw["created_at"].(string)
	require.True(t, ok)
	require.True(t, strings.HasSuffix(created, "Z"), "created_at in UTC: %s", created)
}

// TestWebhookDeliveryEndToEnd: each event type, made by the platform's own
// operations, reaches a real receiver once, signed so that the published
// scheme verifies it, and its delivery is recorded as succeeded.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := whSetup(t, db)
		rcv := whNewReceiver(t, b.clock.Now)
		ws := b.endpoint(b.ctx, t, rcv.url(), append(slices.Clone(outbox.Types), outbox.SaleProcessed), true)
		require.Equal(t, slices.Sorted(slices.Values(outbox.Types)), ws.Endpoint.EventTypes, "sorted, without duplicates")
		rcv.verifyWith(ws.Secret)

		events := b.triggerAll(t)
		require.Equal(t, len(outbox.Types), b.dispatch(t))
		require.Zero(t, b.dispatch(t), "every event is published")
		for _, ev := range events {
			ev, err := b.db.Ent.Event.Get(b.ctx, ev.ID)
			require.NoError(t, err)
			require.NotNil(t, ev.PublishedAt)
			require.True(t, b.clock.Now().Equal(*ev.PublishedAt))
		}
		ds := b.deliveries(b.ctx, t)
		require.Len(t, ds, len(outbox.Types))
		for _, d := range ds {
			require.Equal(t, webhookdelivery.StatusPending, d.Status)
			require.Equal(t, ws.Endpoint.ID, d.EndpointID)
			require.Zero(t, d.Attempts)
			require.NotNil(t, d.NextAttemptAt)
		}
		queued := b.queuedJobs(t)
		require.Len(t, queued, len(outbox.Types), "one job per delivery")
		for _, j := range queued {
			require.Equal(t, jobs.DeliveryAttempts, j.maxAttempts)
		}

		b.clock.Set(b.clock.Now().Add(2 * time.Second))
		for _, j := range queued {
			require.NoError(t, b.work(b.deliver, j, 1))
		}
		got := rcv.requests()
		require.Len(t, got, len(outbox.Types), "each event once")
		seen := map[string]bool{}
		for _, r := range got {
			require.False(t, seen[r.env.Type], "%s delivered twice", r.env.Type)
			seen[r.env.Type] = true
			require.Len(t, r.sigs, 1, "one secret, one signature")
			requireEnvelope(t, r, events[r.env.Type], b.clock.Now())
			require.Equal(t, b.tenant, r.env.TenantID)
		}
		for _, d := range b.deliveries(b.ctx, t) {
			require.Equal(t, webhookdelivery.StatusSucceeded, d.Status, d.EventType)
			require.Equal(t, 1, d.Attempts)
			require.NotNil(t, d.CompletedAt)
			require.True(t, b.clock.Now().Equal(*d.CompletedAt))
			require.Nil(t, d.NextAttemptAt)
			require.Nil(t, d.LastError)
			require.Equal(t, http.StatusNoContent, *d.LastStatusCode)
			require.Len(t, d.Edges.AttemptLog, 1)
			a := d.Edges.AttemptLog[0]
			require.Equal(t, http.StatusNoContent, *a.StatusCode)
			require.Nil(t, a.Error)
			require.True(t, b.clock.Now().Equal(a.AttemptedAt))
		}

		// A job that runs again (River may run a job twice) sends nothing.
		require.NoError(t, b.work(b.deliver, queued[0], 1))
		require.Len(t, rcv.requests(), len(outbox.Types))

		// The same data through the GraphQL-facing read.
		conn, err := b.app.Webhooks.WebhookDeliveries(b.ctx, ws.Endpoint.ID, nil, 20)
		require.NoError(t, err)
		require.Len(t, conn.Edges, len(outbox.Types))

		t.Run("rotation", func(t *testing.T) {
			old := ws.Secret
			rotated, err := b.app.Webhooks.RotateWebhookSecret(b.ctx, ws.Endpoint.ID)
			require.NoError(t, err)
			require.NotEqual(t, old, rotated.Secret)
			require.Equal(t, old, *rotated.Endpoint.PreviousSecret)
			require.True(t, b.clock.Now().Add(webhooks.PreviousSecretValidity).Equal(*rotated.Endpoint.PreviousSecretExpiresAt))

			// Receivers still on the old secret and those already on the new
			// one both verify the next delivery.
			rcv.verifyWith(old, rotated.Secret)
			b.clock.Set(b.clock.Now().Add(time.Minute))
			ev := b.record(t, b.tenant, outbox.SaleProcessed, "sal_rotation")
			require.Equal(t, 1, b.dispatch(t))
			queued := b.queuedJobs(t)
			require.Len(t, queued, 1)
			require.NoError(t, b.work(b.deliver, queued[0], 1))
			got := rcv.requests()
			r := got[len(got)-1]
			require.Len(t, r.sigs, 2, "signed with the new and the previous secret")
			require.Len(t, r.verifyErr, 2)
			requireEnvelope(t, r, ev, b.clock.Now())

			// Once the previous secret expires, only the new one signs.
			rcv.verifyWith(rotated.Secret)
			b.clock.Set(b.clock.Now().Add(webhooks.PreviousSecretValidity + time.Second))
			ev = b.record(t, b.tenant, outbox.SaleProcessed, "sal_after_rotation")
			require.Equal(t, 1, b.dispatch(t))
			queued = b.queuedJobs(t)
			require.Len(t, queued, 1)
			require.NoError(t, b.work(b.deliver, queued[0], 1))
			got = rcv.requests()
			r = got[len(got)-1]
			require.Len(t, r.sigs, 1)
			requireEnvelope(t, r, ev, b.clock.Now())
			require.Error(t, webhook.Verify(old, r.header, r.body, b.clock.Now(), whTolerance), "the old secret no longer verifies")
			for _, d := range b.deliveries(b.ctx, t) {
				require.Equal(t, webhookdelivery.StatusSucceeded, d.Status)
			}
		})
	})
}

// TestWebhookDeliveryWithRiver runs the production River client: the
// periodic dispatcher and the delivery jobs, on the real clock.
func TestWebhookDeliveryWithRiver(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		log := slog.New(slog.DiscardHandler)
		a := app.New(&app.Config{DB: db, Log: log, WebhookGuard: webhook.Guard{AllowLoopback: true}})
		sys := viewer.SystemContext(context.Background())
		tn, err := a.Backoffice.CreateTenant(sys, "Loja River", nil)
		require.NoError(t, err)
		tctx := viewer.TenantContext(context.Background(), tn.ID)
		rcv := whNewReceiver(t, time.Now)
		u := rcv.url()
		ws, err := a.Webhooks.CreateWebhookEndpoint(tctx, webhooks.WebhookInput{URL: &u, EventTypes: outbox.Types})
		require.NoError(t, err)
		rcv.verifyWith(ws.Secret)

		client, err := worker.NewClient(a, worker.Config{Work: true, MaxWorkers: 2, DispatchInterval: 100 * time.Millisecond})
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, client.Start(ctx))
		t.Cleanup(func() { _ = client.Stop(context.Background()) })

		time.Sleep(10 * time.Millisecond) // the endpoint's created_at is before the events'
		ids := map[string]string{}
		for i, typ := range outbox.Types {
			subject := fmt.Sprintf("subject-%d", i)
			require.NoError(t, outbox.Record(sys, db.Ent, time.Now().UTC().Truncate(time.Microsecond), tn.ID, typ, subject, map[string]any{"n": i}))
			ev, err := db.Ent.Event.Query().Where(event.SubjectID(subject)).Only(sys)
			require.NoError(t, err)
			ids[typ] = ev.ID
		}
		require.Eventually(t, func() bool {
			n, err := db.Ent.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(webhookdelivery.StatusSucceeded)).Count(sys)
			return err == nil && n == len(outbox.Types)
		}, 30*time.Second, 50*time.Millisecond, "every delivery succeeds")
		got := rcv.requests()
		require.Len(t, got, len(outbox.Types))
		for _, r := range got {
			require.NoError(t, r.verifyErr[0])
			require.Equal(t, ids[r.env.Type], r.env.ID)
			require.Equal(t, r.env.ID, r.header.Get(webhook.HeaderID))
		}
	})
}

// TestWebhookRetriesThenFails: a receiver that keeps failing gets
// DeliveryAttempts attempts spread over about a day on RetrySchedule, each
// logged; then the delivery fails. A redelivery starts it over.
func TestWebhookRetriesThenFails(t *testing.T) {
	t.Parallel()

	var total time.Duration
	for i, d := range jobs.RetrySchedule {
		require.GreaterOrEqual(t, d, 10*time.Second)
		if i > 0 {
			require.GreaterOrEqual(t, d, jobs.RetrySchedule[i-1], "the waits grow")
		}
		total += d
	}
	require.Greater(t, total, 20*time.Hour, "about a day of retries")
	require.Less(t, total, 30*time.Hour, "about a day of retries")
	require.Equal(t, len(jobs.RetrySchedule)+1, jobs.DeliveryAttempts)

	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := whSetup(t, db)
		rcv := whNewReceiver(t, b.clock.Now)
		rcv.status.Store(http.StatusInternalServerError)
		rcv.excerpt.Store("upstream exploded")
		ws := b.endpoint(b.ctx, t, rcv.url(), outbox.Types, true)
		rcv.verifyWith(ws.Secret)
		ev := b.record(t, b.tenant, outbox.SaleProcessed, "sal_retry")
		require.Equal(t, 1, b.dispatch(t))
		queued := b.queuedJobs(t)
		require.Len(t, queued, 1)
		job := queued[0]
		require.Equal(t, jobs.DeliveryAttempts, job.maxAttempts)

		started := b.clock.Now()
		var attemptedAt []time.Time
		for n := 1; n <= jobs.DeliveryAttempts; n++ {
			now := b.clock.Now()
			attemptedAt = append(attemptedAt, now)
			rj := whDeliverJob(job.id, job.args.DeliveryID, n, job.maxAttempts)
			err := b.deliver.Work(context.Background(), rj)
			d := b.delivery(t, job.args.DeliveryID)
			require.Equal(t, n, d.Attempts)
			require.Equal(t, http.StatusInternalServerError, *d.LastStatusCode)
			require.Contains(t, *d.LastError, "answered 500")
			require.Len(t, d.Edges.AttemptLog, n)
			for i, a := range d.Edges.AttemptLog {
				require.Equal(t, http.StatusInternalServerError, *a.StatusCode)
				require.Equal(t, "upstream exploded", a.ResponseExcerpt)
				require.Contains(t, *a.Error, "answered 500")
				require.True(t, attemptedAt[i].Equal(a.AttemptedAt), "attempt %d at %s, logged %s", i+1, attemptedAt[i], a.AttemptedAt)
			}
			if n < jobs.DeliveryAttempts {
				require.Error(t, err, "attempt %d: River retries", n)
				require.Contains(t, err.Error(), "answered 500")
				next := b.deliver.NextRetry(rj)
				require.True(t, now.Add(jobs.RetrySchedule[n-1]).Equal(next), "attempt %d: next %s", n, next)
				require.Equal(t, webhookdelivery.StatusPending, d.Status)
				require.NotNil(t, d.NextAttemptAt)
				require.True(t, next.Equal(*d.NextAttemptAt), "the delivery shows the next attempt: %s", *d.NextAttemptAt)
				require.Nil(t, d.CompletedAt)
				b.clock.Set(next)
			} else {
				require.NoError(t, err, "the last attempt fails the delivery, not the job")
				require.Equal(t, webhookdelivery.StatusFailed, d.Status)
				require.NotNil(t, d.CompletedAt)
				require.True(t, now.Equal(*d.CompletedAt))
				require.Nil(t, d.NextAttemptAt)
			}
		}
		elapsed := b.clock.Now().Sub(started)
		require.Equal(t, total, elapsed, "the last attempt comes a schedule after the first")

		got := rcv.requests()
		require.Len(t, got, jobs.DeliveryAttempts, "every attempt reached the receiver")
		for i, r := range got {
			require.NoError(t, r.verifyErr[0], "attempt %d is signed", i+1)
			require.Equal(t, ev.ID, r.header.Get(webhook.HeaderID), "the same webhook-id on every attempt")
			require.Equal(t, strconv.FormatInt(attemptedAt[i].Unix(), 10), r.header.Get(webhook.HeaderTimestamp),
				"signed when sent")
		}

		// The failed job, run again by mistake, does nothing.
		require.NoError(t, b.work(b.deliver, job, jobs.DeliveryAttempts))
		require.Len(t, rcv.requests(), jobs.DeliveryAttempts)

		// Redelivery: pending again with a new job; the receiver recovered.
		b.clock.Set(b.clock.Now().Add(time.Hour))
		d, err := b.app.Webhooks.RedeliverWebhook(b.ctx, "", job.args.DeliveryID)
		require.NoError(t, err)
		require.Equal(t, webhookdelivery.StatusPending, d.Status)
		require.Nil(t, d.CompletedAt)
		require.True(t, b.clock.Now().Equal(*d.NextAttemptAt))
		again := b.queuedJobs(t)
		require.Len(t, again, 1, "a new job")
		require.Equal(t, job.args.DeliveryID, again[0].args.DeliveryID)
		require.Equal(t, jobs.DeliveryAttempts, again[0].maxAttempts, "a fresh set of attempts")
		rcv.status.Store(http.StatusNoContent)
		rcv.excerpt.Store("")
		require.NoError(t, b.work(b.deliver, again[0], 1))
		d = b.delivery(t, job.args.DeliveryID)
		require.Equal(t, webhookdelivery.StatusSucceeded, d.Status)
		require.Equal(t, jobs.DeliveryAttempts+1, d.Attempts)
		require.Equal(t, http.StatusNoContent, *d.LastStatusCode)
		require.Nil(t, d.LastError)
		require.True(t, b.clock.Now().Equal(*d.CompletedAt))
		require.Len(t, d.Edges.AttemptLog, jobs.DeliveryAttempts+1, "the log keeps the earlier attempts")
		for _, a := range d.Edges.AttemptLog[:jobs.DeliveryAttempts] {
			require.Equal(t, http.StatusInternalServerError, *a.StatusCode)
		}
		require.Equal(t, http.StatusNoContent, *d.Edges.AttemptLog[jobs.DeliveryAttempts].StatusCode)
		got = rcv.requests()
		require.Len(t, got, jobs.DeliveryAttempts+1)
		requireEnvelope(t, got[len(got)-1], ev, b.clock.Now())
	})
}

// TestWebhookDispatchRules: who gets which event, once.
func TestWebhookDispatchRules(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := whSetup(t, db)
		rcv := whNewReceiver(t, b.clock.Now)
		other, err := b.app.Backoffice.CreateTenant(b.sys, "Outra Loja", nil)
		require.NoError(t, err)
		otherCtx := viewer.TenantContext(context.Background(), other.ID)

		// An event from before any endpoint existed.
		early := b.recordAt(t, b.tenant, outbox.SaleProcessed, "sal_early", b.clock.Now().Add(-time.Hour))

		all := b.endpoint(b.ctx, t, rcv.url()+"?all", outbox.Types, true)
		sales := b.endpoint(b.ctx, t, rcv.url()+"?sales", []string{outbox.SaleProcessed}, true)
		inactive := b.endpoint(b.ctx, t, rcv.url()+"?inactive", outbox.Types, false)
		require.False(t, inactive.Endpoint.Active)
		theirs := b.endpoint(otherCtx, t, rcv.url()+"?theirs", outbox.Types, true)

		level := b.record(t, b.tenant, outbox.CustomerLevelChanged, "cus_1")
		sale := b.record(t, b.tenant, outbox.SaleProcessed, "sal_1")
		theirSale := b.record(t, other.ID, outbox.SaleProcessed, "sal_theirs")

		require.Equal(t, 4, b.dispatch(t), "every event is handed over, the early one too")
		require.Zero(t, b.dispatch(t), "a second dispatch finds nothing")
		require.Zero(t, b.dispatch(t))

		type pair struct{ endpoint, event string }
		pairs := func() []pair {
			ds, err := b.db.Ent.WebhookDelivery.Query().All(b.sys)
			require.NoError(t, err)
			var out []pair
			for _, d := range ds {
				out = append(out, pair{d.EndpointID, d.EventID})
			}
			return out
		}
		require.ElementsMatch(t, []pair{
			{all.Endpoint.ID, level.ID},
			{all.Endpoint.ID, sale.ID},
			{sales.Endpoint.ID, sale.ID},
			{theirs.Endpoint.ID, theirSale.ID},
		}, pairs(), "not subscribed, inactive, earlier events and other tenants' events get nothing")
		require.Equal(t, 4, whJobCount(t, db))
		for _, ev := range []*ent.Event{early, level, sale, theirSale} {
			ev, err := b.db.Ent.Event.Get(b.sys, ev.ID)
			require.NoError(t, err)
			require.NotNil(t, ev.PublishedAt, "published: %s", ev.Type)
		}
		// Each tenant sees its own deliveries only.
		require.Len(t, b.deliveries(b.ctx, t), 3)
		require.Len(t, b.deliveries(otherCtx, t), 1)

		t.Run("concurrent dispatchers", func(t *testing.T) {
			var want []pair
			for i := range 30 {
				typ := outbox.Types[i%len(outbox.Types)]
				ev := b.record(t, b.tenant, typ, fmt.Sprintf("sub_%d", i))
				want = append(want, pair{all.Endpoint.ID, ev.ID})
				if typ == outbox.SaleProcessed {
					want = append(want, pair{sales.Endpoint.ID, ev.ID})
				}
			}
			before := pairs()
			var wg sync.WaitGroup
			errs := make([]error, 4)
			counts := make([]int, 4)
			start := make(chan struct{})
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					counts[i], errs[i] = b.app.Webhooks.DispatchEvents(context.Background())
				}()
			}
			close(start)
			wg.Wait()
			var ok int
			for i, err := range errs {
				if err == nil {
					ok++
					continue
				}
				t.Logf("dispatcher %d: %v", i, err)
				require.Equal(t, dialect.Postgres, db.Dialect, "SQLite's write transactions are serial: no dispatcher fails")
				require.Contains(t, strings.ToLower(err.Error()), "unique", "a losing dispatcher fails on the unique index, cleanly")
			}
			require.Positive(t, ok, "one dispatcher wins")
			require.Zero(t, b.dispatch(t), "nothing left to dispatch")
			got := pairs()
			require.ElementsMatch(t, append(before, want...), got, "exactly one delivery per event and endpoint")
			seen := map[pair]bool{}
			for _, p := range got {
				require.False(t, seen[p], "duplicate delivery %v", p)
				seen[p] = true
			}
			require.Equal(t, len(got), whJobCount(t, db), "one job per delivery: a losing dispatcher's jobs roll back")
		})
	})
}

// TestWebhookGuardInWorker: an endpoint accepted where loopback was allowed
// is still refused by a worker whose guard does not allow it; the
// connection never happens.
func TestWebhookGuardInWorker(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := whSetup(t, db)
		rcv := whNewReceiver(t, b.clock.Now)

		// Registration itself refuses loopback when the guard does.
		strict := app.New(&app.Config{DB: db, Clock: b.clock.Now, Log: b.app.Log})
		u := rcv.url()
		_, err := strict.Webhooks.CreateWebhookEndpoint(b.ctx, webhooks.WebhookInput{URL: &u, EventTypes: outbox.Types})
		require.Error(t, err)
		for _, bad := range []string{"https://10.0.0.1/hooks", "https://169.254.169.254/latest/meta-data", "https://user:pw@example.com/"} {
			_, err := b.app.Webhooks.CreateWebhookEndpoint(b.ctx, webhooks.WebhookInput{URL: &bad, EventTypes: outbox.Types})
			require.Error(t, err, bad)
		}

		ws := b.endpoint(b.ctx, t, rcv.url(), outbox.Types, true)
		rcv.verifyWith(ws.Secret)
		b.record(t, b.tenant, outbox.SaleProcessed, "sal_guarded")
		require.Equal(t, 1, b.dispatch(t))
		queued := b.queuedJobs(t)
		require.Len(t, queued, 1)

		guarded := &worker.DeliverWebhookWorker{App: app.New(&app.Config{DB: db, Clock: b.clock.Now, WebhookGuard: webhook.Guard{}})}
		err = b.work(guarded, queued[0], 1)
		require.ErrorContains(t, err, "not allowed")
		d := b.delivery(t, queued[0].args.DeliveryID)
		require.Equal(t, webhookdelivery.StatusPending, d.Status)
		require.Contains(t, *d.LastError, "not allowed")
		require.Nil(t, d.LastStatusCode, "no answer came")
		require.Len(t, d.Edges.AttemptLog, 1)
		require.Nil(t, d.Edges.AttemptLog[0].StatusCode)
		require.Contains(t, *d.Edges.AttemptLog[0].Error, "not allowed")
		require.Empty(t, rcv.requests(), "the receiver is never reached")

		// The last attempt fails the delivery, still without a connection.
		err = b.work(guarded, queued[0], jobs.DeliveryAttempts)
		require.NoError(t, err)
		d = b.delivery(t, queued[0].args.DeliveryID)
		require.Equal(t, webhookdelivery.StatusFailed, d.Status)
		require.Contains(t, *d.LastError, "not allowed")
		require.Empty(t, rcv.requests())

		t.Run("inactive endpoint fails its pending deliveries", func(t *testing.T) {
			b.record(t, b.tenant, outbox.SaleProcessed, "sal_inactive")
			require.Equal(t, 1, b.dispatch(t))
			queued := b.queuedJobs(t)
			require.Len(t, queued, 1)
			off := false
			_, err := b.app.Webhooks.UpdateWebhookEndpoint(b.ctx, ws.Endpoint.ID, webhooks.WebhookInput{Active: &off})
			require.NoError(t, err)
			require.NoError(t, b.work(b.deliver, queued[0], 1))
			d := b.delivery(t, queued[0].args.DeliveryID)
			require.Equal(t, webhookdelivery.StatusFailed, d.Status)
			require.Contains(t, *d.LastError, "inactive")
			require.Empty(t, rcv.requests())
		})
	})
}
