package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

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
	deliver river.Worker[jobs.DeliverWebhook]
	lastJob int64 // the last deliver_webhook job worked
}

// whSetup makes a tenant on a clock that starts at the real time (the
// endpoints' created_at is the database's real time, and an endpoint
// receives only later events), an App that lets endpoints be on loopback,
// an insert-only River client and the delivery worker.
func whSetup(t *testing.T, db *storage.DB) *whBundle {
	t.Helper()
	clock := testclock.NewStored(time.Now().UTC(), nil)
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithWebhookGuard(webhook.Guard{AllowLoopback: true}),
		apptest.WithTenant("Loja Webhooks"))
	a := env.App
	_, err := worker.NewClient(a, worker.Config{})
	require.NoError(t, err)
	return &whBundle{
		db: db, app: a, clock: clock, rc: a.River, sys: viewer.SystemContext(context.Background()),
		ctx: env.Ctx, tenant: env.TenantID,
		deliver: worker.For[jobs.DeliverWebhook](a),
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

// dispatch runs the dispatcher once at the clock's time; it returns how
// many events it handed over.
func (b *whBundle) dispatch(t *testing.T) int {
	t.Helper()
	waiting := func() int {
		n, err := b.db.Ent.Event.Query().Where(event.PublishedAtIsNil()).Count(b.sys)
		require.NoError(t, err)
		return n
	}
	before := waiting()
	require.NoError(t, b.app.Webhooks.DispatchEvents(context.Background(), jobs.DispatchEvents{}))
	return before - waiting()
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
func (b *whBundle) work(w river.Worker[jobs.DeliverWebhook], j whJob, attempt int) error {
	return w.Work(context.Background(), whDeliverJob(j.id, j.args, attempt, j.maxAttempts))
}

func whDeliverJob(id int64, args jobs.DeliverWebhook, attempt, maxAttempts int) *river.Job[jobs.DeliverWebhook] {
	return &river.Job[jobs.DeliverWebhook]{
		JobRow: &rivertype.JobRow{ID: id, Kind: jobs.DeliverWebhook{}.Kind(), Attempt: attempt, MaxAttempts: maxAttempts},
		Args:   args,
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
	require.NoError(t, worker.For[jobs.CampaignLifecycle](apptest.Process(b.app)).
		Work(context.Background(), jobOf(jobs.CampaignLifecycle{})))

	// cashback.credited: R$ 6.05 of cashback in the wallet (written as the
	// cashback job writes it: a redemption here would add a second
	// redemption.created to the live feed).
	redemptionID := "red_cashback"
	require.NoError(t, b.db.InTx(b.ctx, func(tx storage.Tx) error {
		_, err := wallet.Wallets{Dialect: b.db.Dialect, Now: b.clock.Now}.Credit(b.ctx, tx.Ent, wallet.Move{
			CustomerID: cust.ID, Unit: wallet.Cashback, Cents: 605,
			SourceKind: walletentry.SourceKindRedemption, SourceID: &redemptionID, Reason: "cashback of Cashback 5%",
		})
		return err
	}))

	// gift_card.*: two active cards issued together, a third issued to be
	// sold and activated by its sale (as the till's processing will), R$
	// loaded, spent and refunded on the first, its balance moved to the
	// second, the third cancelled.
	giftCards := b.giftCards(t, start.AddDate(0, 12, 0))

	// points.expiring, cashback.expiring and gift_card.expiring: 10 days
	// before the 1500 points, the cashback and the second card expire (12
	// months).
	b.clock.Set(start.AddDate(0, 12, 0).Add(-10 * 24 * time.Hour))
	require.NoError(t, worker.For[jobs.NotifyExpiringPoints](apptest.Process(b.app)).
		Work(context.Background(), jobOf(jobs.NotifyExpiringPoints{})))
	require.NoError(t, worker.For[jobs.UpkeepWallets](apptest.Process(b.app)).
		Work(context.Background(), jobOf(jobs.UpkeepWallets{})))
	upkeepGiftCards := func() {
		require.NoError(t, worker.For[jobs.UpkeepGiftCards](apptest.Process(b.app)).
			Work(context.Background(), jobOf(jobs.UpkeepGiftCards{})))
	}
	upkeepGiftCards()

	// cashback.spent and cashback.refunded: R$ 1.00 of it pays an online
	// order, which is then cancelled (the refund expires a year on, beyond
	// the notices).
	wh, err := b.app.Wallets.HoldCashback(b.ctx, wallets.OrderHoldInput{CustomerID: cust.ID, Wallet: "cashback",
		OrderID: "order-cb", Amount: opt.Of(decimal.NewFromInt(1)).Ptr()})
	require.NoError(t, err)
	_, err = b.app.Wallets.CaptureHold(b.ctx, wh.Hold.ID, wallets.CaptureInput{OrderID: "order-cb",
		OrderAmount: opt.Of(decimal.NewFromInt(20)).Ptr()})
	require.NoError(t, err)
	_, err = b.app.Wallets.RollbackHold(b.ctx, wh.Hold.ID, "order cancelled")
	require.NoError(t, err)

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
	// points.spent: R$ 1.00 of it paid with 100 points held at the till;
	// the R$ 10.50 paid otherwise earn 10 points.
	_, err = b.app.Backoffice.UpdateTenant(b.sys, b.tenant, backoffice.TenantSettings{PointsSpendChannels: &[]string{"pdv"}})
	require.NoError(t, err)
	byPoints, byPix := dec("1.00"), dec("10.50")
	hold, _, err := b.app.POS.HoldPoints(b.ctx, pos.PointsHoldInput{
		SessionID: "caixa-4242", Customer: &pos.POSCustomer{ID: cpf, Type: "CPF"}, StoreID: "LOJA-01", Amount: &byPoints, SaleAmount: &payable,
	})
	require.NoError(t, err)
	s, err := b.app.POS.RegisterSale(b.ctx, pos.SaleInput{
		Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: cpf, Type: "CPF"},
		SaleID: "4242", StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
		Date: &soldAt, Amount: &amount, AmountPayable: &payable,
		Items: []pos.SaleItemInput{
			{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: opt.Of(dec("12.00")).Ptr(), Quantity: &one,
				Discounts: []pos.POSDiscount{{PromotionID: &discount.ID, UnitDiscount: &one, Quantity: &one}}},
			{ID: "2", GTIN: "7891000100110", Description: "Bala", UnitPrice: opt.Of(dec("0.50")).Ptr(), Quantity: &one},
		},
		Payments: []pos.SalePaymentInput{{ID: "1", Amount: &byPix, Method: "PIX"}, {ID: "2", Amount: &byPoints, Method: "POINTS", HoldID: hold.ID}},
	})
	require.NoError(t, err)
	require.NoError(t, worker.For[jobs.ProcessSale](apptest.Process(b.app)).Work(context.Background(),
		&river.Job[jobs.ProcessSale]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 25},
			Args: jobs.ProcessSale{TenantID: b.tenant, SaleID: s.ID}}))

	// sale.returned: the sweet comes back; the 10 whole reais paid for the
	// rest still earn the 10 points, so no points.reversed yet.
	// sale.cancelled, points.reversed and redemption.rolled_back: the rest
	// is cancelled, the coffee and its discount with it.
	returnWork := worker.For[jobs.ProcessSaleReturn](apptest.Process(b.app))
	for _, in := range []pos.SaleReturnInput{
		{Kind: "return", ID: "R-1", Items: []pos.ReturnItemInput{{ID: "2", Quantity: &one}}},
		{Kind: "cancellation", ID: "C-1"},
	} {
		in.Protocol, in.SaleRef, in.StoreID, in.Date = "PARTNER_V1", "4242", "LOJA-01", &soldAt
		ret, err := b.app.POS.RegisterSaleReturn(b.ctx, in)
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
	require.NoError(t, worker.For[jobs.RecomputeLevels](apptest.Process(b.app)).
		Work(context.Background(), jobOf(jobs.RecomputeLevels{})))
	// gift_card.expired: the second card's balance expires (the first,
	// emptied by the transfer, expires silently).
	upkeepGiftCards()

	// customer.consent_changed: Helena agrees to e-mail marketing.
	_, err = b.app.Customers.PatchCustomer(b.ctx, cust.ID, customers.CustomerInput{Consent: opt.Of(customers.ConsentInput{MarketingEmail: opt.Of(true)})})
	require.NoError(t, err)
	// customer.erased: another customer, without consents, is erased.
	ivo, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{Name: opt.Of("Ivo"), Email: opt.Of("ivo@example.com"), CPF: opt.Of(whCPF(2))})
	require.NoError(t, err)
	require.NoError(t, b.app.Privacy.EraseCustomer(b.ctx, ivo.ID))

	evs, err := b.db.Ent.Event.Query().Order(ent.Asc(event.FieldID)).All(b.ctx)
	require.NoError(t, err)
	byType, live := map[string]*ent.Event{}, map[string]*ent.Event{}
	for _, ev := range evs {
		of := byType
		if slices.Contains(outbox.LiveTypes, ev.Type) {
			of = live // the live feed's, not webhooks'
		}
		require.NotContains(t, of, ev.Type, "one event of each type")
		of[ev.Type] = ev
	}
	require.Len(t, byType, len(outbox.Types), "every event type happened")
	require.Equal(t, []string{outbox.RedemptionCreated}, slices.Collect(maps.Keys(live)), "and the sale's redemption, for the live feed")
	require.Equal(t, byType[outbox.RedemptionRolledBack].SubjectID, live[outbox.RedemptionCreated].SubjectID)
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
	require.EqualValues(t, 10, byType[outbox.PointsReversed].Data["points"])
	require.Equal(t, cust.ID, byType[outbox.PointsSpent].Data["customer_id"])
	require.EqualValues(t, 100, byType[outbox.PointsSpent].Data["points"])
	require.Equal(t, s.ID, byType[outbox.PointsSpent].Data["sale_id"])
	require.Equal(t, discount.ID, byType[outbox.RedemptionRolledBack].Data["campaign_id"])
	require.Equal(t, []any{"order-cb", wh.Hold.ID, "1.00"}, []any{byType[outbox.CashbackSpent].Data["order_id"],
		byType[outbox.CashbackSpent].Data["hold_id"], byType[outbox.CashbackSpent].Data["amount"]})
	require.Equal(t, "1.00", byType[outbox.CashbackRefunded].Data["amount"])
	require.EqualValues(t, 2, byType[outbox.GiftCardIssued].Data["count"])
	require.Equal(t, giftCards[2], byType[outbox.GiftCardActivated].SubjectID)
	require.Equal(t, "30.00", byType[outbox.GiftCardActivated].Data["amount"])
	for typ, want := range map[string][2]string{
		outbox.GiftCardLoaded: {giftCards[0], "10.00"}, outbox.GiftCardRedeemed: {giftCards[0], "20.00"},
		outbox.GiftCardRefunded: {giftCards[0], "5.00"}, outbox.GiftCardTransferred: {giftCards[0], "45.00"},
		outbox.GiftCardCancelled: {giftCards[2], "30.00"}, outbox.GiftCardExpiring: {giftCards[1], "95.00"},
		outbox.GiftCardExpired: {giftCards[1], "95.00"},
	} {
		require.Equal(t, want, [2]string{byType[typ].SubjectID, byType[typ].Data["amount"].(string)}, typ)
	}
	return byType
}

// giftCards makes every gift card event but the expiry's happen, on cards
// expiring at expires, and returns the cards' ids: the pair issued
// together, then the card sold.
func (b *whBundle) giftCards(t *testing.T, expires time.Time) [3]string {
	t.Helper()
	gc := b.app.GiftCards
	pair, err := gc.IssueGiftCards(b.ctx, giftcards.IssueInput{Count: new(2), Amount: opt.Of(decimal.NewFromInt(50)).Ptr(), ExpiresAt: &expires})
	require.NoError(t, err)
	sold, err := gc.IssueGiftCards(b.ctx, giftcards.IssueInput{Amount: opt.Of(decimal.NewFromInt(30)).Ptr(), ExpiresAt: &expires, Inactive: true})
	require.NoError(t, err)
	ids := [3]string{pair.Cards[0].Card.ID, pair.Cards[1].Card.ID, sold.Cards[0].Card.ID}
	cards := giftcard.Cards{Dialect: b.db.Dialect, Now: b.clock.Now}
	require.NoError(t, b.db.InTx(b.ctx, func(tx storage.Tx) error {
		if _, err := cards.Activate(b.ctx, tx.Ent, ids[2], "sal_gift_card"); err != nil {
			return err
		}
		_, err := cards.Debit(b.ctx, tx.Ent, giftcard.Move{CardID: ids[0], Cents: 2000, SourceKind: giftcardentry.SourceKindOrder, SourceID: "PED-GC-1"})
		if err != nil {
			return err
		}
		_, err = cards.Refund(b.ctx, tx.Ent, giftcard.Move{CardID: ids[0], Cents: 500, SourceKind: giftcardentry.SourceKindReturn, SourceID: "DEV-GC-1"})
		return err
	}))
	_, err = gc.LoadGiftCard(b.ctx, ids[0], giftcards.LoadInput{Amount: opt.Of(decimal.NewFromInt(10)).Ptr(), LoadID: "RECARGA-1"})
	require.NoError(t, err)
	_, err = gc.TransferGiftCard(b.ctx, ids[0], giftcards.TransferInput{ToGiftCardID: ids[1], TransferID: "TRF-1"})
	require.NoError(t, err)
	_, err = gc.CancelGiftCard(b.ctx, ids[2], "cartão extraviado")
	require.NoError(t, err)
	return ids
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
