package worker

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/storage"
)

// DispatchBatch bounds the events one dispatch hands to delivery.
const DispatchBatch = 500

// RetrySchedule is the wait before each retry of a failed delivery: about a
// day in all, then the delivery fails. Attempt n+1 follows attempt n by
// RetrySchedule[n-1].
var RetrySchedule = []time.Duration{
	30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// DeliveryAttempts is how many times a delivery is tried.
var DeliveryAttempts = len(RetrySchedule) + 1

// DispatchEventsArgs hands the outbox's new events to delivery: one
// delivery and one job per event and subscribed endpoint.
type DispatchEventsArgs struct{}

func (DispatchEventsArgs) Kind() string { return "dispatch_events" }

// DispatchEventsWorker runs DispatchEventsArgs.
type DispatchEventsWorker struct {
	river.WorkerDefaults[DispatchEventsArgs]
	DB  *storage.DB
	Now func() time.Time
}

// Work dispatches batches until the outbox has no undispatched event.
func (w *DispatchEventsWorker) Work(ctx context.Context, _ *river.Job[DispatchEventsArgs]) error {
	for {
		n, err := DispatchEvents(ctx, w.DB, river.ClientFromContext[*sql.Tx](ctx), w.Now())
		if err != nil || n < DispatchBatch {
			return err
		}
	}
}

// DispatchEvents hands up to DispatchBatch undispatched events to delivery
// in one transaction: the deliveries, their jobs and the events' published_at
// commit together, and the unique (endpoint, event) index keeps a second
// dispatcher from delivering an event twice. An endpoint receives only the
// events created after it.
func DispatchEvents(ctx context.Context, db *storage.DB, rc *river.Client[*sql.Tx], now time.Time) (int, error) {
	ctx = viewer.SystemContext(ctx)
	var n int
	err := db.InTx(ctx, func(tx storage.Tx) error {
		q := tx.Ent.Event.Query().Where(event.PublishedAtIsNil()).Order(ent.Asc(event.FieldID)).Limit(DispatchBatch)
		if db.Dialect == dialect.Postgres {
			// Concurrent dispatchers take different events instead of
			// colliding on the deliveries' unique index.
			q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
		}
		events, err := q.All(ctx)
		if err != nil || len(events) == 0 {
			return err
		}
		n = len(events)
		tenants := map[string]bool{}
		ids := make([]string, len(events))
		for i, e := range events {
			tenants[e.TenantID], ids[i] = true, e.ID
		}
		endpoints, err := tx.Ent.WebhookEndpoint.Query().
			Where(webhookendpoint.Active(true), webhookendpoint.TenantIDIn(slices.Collect(maps.Keys(tenants))...)).All(ctx)
		if err != nil {
			return err
		}
		var jobs []river.InsertManyParams
		for _, e := range events {
			for _, ep := range endpoints {
				if ep.TenantID != e.TenantID || !slices.Contains(ep.EventTypes, e.Type) || e.CreatedAt.Before(ep.CreatedAt) {
					continue
				}
				d, err := tx.Ent.WebhookDelivery.Create().SetTenantID(e.TenantID).SetEndpointID(ep.ID).
					SetEventID(e.ID).SetEventType(e.Type).SetNextAttemptAt(now).Save(ctx)
				if err != nil {
					return err
				}
				jobs = append(jobs, DeliveryJob(d.ID))
			}
		}
		if len(jobs) > 0 {
			if _, err := rc.InsertManyTx(ctx, tx.SQL, jobs); err != nil {
				return fmt.Errorf("enqueueing deliveries: %w", err)
			}
		}
		return tx.Ent.Event.Update().Where(event.IDIn(ids...)).SetPublishedAt(now).Exec(ctx)
	})
	return n, err
}

// DeliverWebhookArgs makes one attempt of a delivery; River retries it on
// RetrySchedule.
type DeliverWebhookArgs struct {
	DeliveryID string `json:"delivery_id"`
}

func (DeliverWebhookArgs) Kind() string { return "deliver_webhook" }

// DeliveryJob is the job of a delivery's attempts.
func DeliveryJob(deliveryID string) river.InsertManyParams {
	return river.InsertManyParams{Args: DeliverWebhookArgs{DeliveryID: deliveryID},
		InsertOpts: &river.InsertOpts{MaxAttempts: DeliveryAttempts}}
}

// DeliverWebhookWorker runs DeliverWebhookArgs.
type DeliverWebhookWorker struct {
	river.WorkerDefaults[DeliverWebhookArgs]
	DB     *storage.DB
	Now    func() time.Time
	Sender *webhook.Sender
}

// errRetry tells River the attempt failed and another one is due.
var errRetry = errors.New("delivery attempt failed")

// NextRetry follows RetrySchedule from the worker's clock.
func (w *DeliverWebhookWorker) NextRetry(job *river.Job[DeliverWebhookArgs]) time.Time {
	return w.Now().Add(retryAfter(job.Attempt))
}

// retryAfter is the wait after attempt n failed.
func retryAfter(n int) time.Duration {
	return RetrySchedule[min(max(n, 1), len(RetrySchedule))-1]
}

// Timeout bounds a job: one attempt plus recording it.
func (w *DeliverWebhookWorker) Timeout(*river.Job[DeliverWebhookArgs]) time.Duration {
	return webhook.Timeout + 20*time.Second
}

// Work makes the attempt and records it. A delivery no longer pending (a
// duplicate job, a redelivery that already ran) is left alone; an inactive
// or deleted endpoint fails it at once.
func (w *DeliverWebhookWorker) Work(ctx context.Context, job *river.Job[DeliverWebhookArgs]) error {
	ctx = viewer.SystemContext(ctx)
	d, err := w.DB.Ent.WebhookDelivery.Query().Where(webhookdelivery.ID(job.Args.DeliveryID)).
		WithEndpoint().WithEvent().Only(ctx)
	if ent.IsNotFound(err) {
		return nil // its endpoint or event was deleted, and the delivery with it
	}
	if err != nil || d.Status != webhookdelivery.StatusPending {
		return err
	}
	now := w.Now()
	ep, ev := d.Edges.Endpoint, d.Edges.Event
	if !ep.Active {
		return w.record(ctx, d, now, webhook.Result{Err: errors.New("the endpoint is inactive")}, job.Attempt, true)
	}
	secrets := []string{ep.Secret}
	if ep.PreviousSecret != nil && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		secrets = append(secrets, *ep.PreviousSecret)
	}
	res := w.Sender.Send(ctx, webhook.Request{URL: ep.URL, Secrets: secrets, Now: now, Body: webhook.Envelope{
		ID: ev.ID, Type: ev.Type, TenantID: ev.TenantID, CreatedAt: ev.CreatedAt.UTC(), Data: ev.Data,
	}})
	last := job.Attempt >= job.MaxAttempts
	if err := w.record(ctx, d, now, res, job.Attempt, last); err != nil {
		return err
	}
	if res.Err != nil && !last {
		return fmt.Errorf("%w: %v", errRetry, res.Err)
	}
	return nil
}

// record logs attempt n and moves the delivery on: succeeded, failed for
// good when final, else pending until the next attempt.
func (w *DeliverWebhookWorker) record(ctx context.Context, d *ent.WebhookDelivery, now time.Time, res webhook.Result, n int, final bool) error {
	return w.DB.InTx(ctx, func(tx storage.Tx) error {
		a := tx.Ent.WebhookAttempt.Create().SetTenantID(d.TenantID).SetDeliveryID(d.ID).SetAttemptedAt(now).
			SetLatencyMs(res.Latency.Milliseconds()).SetResponseExcerpt(res.Excerpt)
		u := tx.Ent.WebhookDelivery.UpdateOneID(d.ID).AddAttempts(1)
		if res.StatusCode != 0 {
			a.SetStatusCode(res.StatusCode)
			u.SetLastStatusCode(res.StatusCode)
		}
		switch {
		case res.Err == nil:
			u.SetStatus(webhookdelivery.StatusSucceeded).SetCompletedAt(now).ClearNextAttemptAt().ClearLastError()
		case final:
			a.SetError(res.Err.Error())
			u.SetStatus(webhookdelivery.StatusFailed).SetCompletedAt(now).ClearNextAttemptAt().SetLastError(res.Err.Error())
		default:
			a.SetError(res.Err.Error())
			u.SetNextAttemptAt(now.Add(retryAfter(n))).SetLastError(res.Err.Error())
		}
		if err := a.Exec(ctx); err != nil {
			return err
		}
		return u.Exec(ctx)
	})
}
