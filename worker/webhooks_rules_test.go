package worker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

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
			start := make(chan struct{})
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = b.app.Webhooks.DispatchEvents(context.Background(), jobs.DispatchEvents{})
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

		guarded := worker.For[jobs.DeliverWebhook](app.New(&app.Config{DB: db, Clock: b.clock.Now, WebhookGuard: webhook.Guard{}}))
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
