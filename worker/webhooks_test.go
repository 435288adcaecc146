package worker_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// The tests of webhook delivery: a real receiver on loopback, the outbox's
// events dispatched and delivered by the jobs on a controllable clock, the
// retry schedule, the dispatch rules and the outbound guard in the worker.
// Helpers are prefixed wh (webhooks_harness_test.go).

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
		require.Equal(t, len(outbox.Types)+1, b.dispatch(t), "and redemption.created, which no endpoint receives")
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
			require.Equal(t, b.tenant, j.args.TenantID, "a delivery's job names its tenant")
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
		conn, err := b.app.Webhooks.WebhookDeliveries(b.ctx, ws.Endpoint.ID, nil, kernel.MaxPageSize)
		require.NoError(t, err)
		require.Len(t, conn.Edges, len(outbox.Types))

		t.Run("a job queued before its arguments named the tenant", func(t *testing.T) {
			b.clock.Set(b.clock.Now().Add(time.Minute))
			ev := b.record(t, b.tenant, outbox.SaleProcessed, "sal_old_job")
			require.Equal(t, 1, b.dispatch(t))
			queued := b.queuedJobs(t)
			require.Len(t, queued, 1)
			queued[0].args.TenantID = "" // as river_job holds the jobs of the earlier release
			require.NoError(t, b.work(b.deliver, queued[0], 1))
			got := rcv.requests()
			requireEnvelope(t, got[len(got)-1], ev, b.clock.Now())
			d, err := b.db.Ent.WebhookDelivery.Get(b.sys, queued[0].args.DeliveryID)
			require.NoError(t, err)
			require.Equal(t, webhookdelivery.StatusSucceeded, d.Status)
		})

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
		env := apptest.New(t, db, apptest.WithWebhookGuard(webhook.Guard{AllowLoopback: true}), apptest.WithTenant("Loja River"))
		a, tctx := env.App, env.Ctx
		sys := viewer.SystemContext(context.Background())
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
			require.NoError(t, outbox.Record(sys, db.Ent, time.Now().UTC().Truncate(time.Microsecond), env.TenantID, typ, subject, map[string]any{"n": i}))
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
			rj := whDeliverJob(job.id, job.args, n, job.maxAttempts)
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
