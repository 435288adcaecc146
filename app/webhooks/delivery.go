package webhooks

import (
	"context"
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
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/viewer"
)

// dispatchBatch bounds the events one transaction of DispatchEvents hands
// to delivery.
const dispatchBatch = 500

// ErrDeliveryRetry says a webhook attempt failed and another one is due.
var ErrDeliveryRetry = errors.New("delivery attempt failed")

// DispatchEvents hands the outbox's undispatched events to delivery, a
// batch (dispatchEventBatch) at a time, until none is left.
func (a *Service) DispatchEvents(ctx context.Context, _ jobs.DispatchEvents) error {
	if err := Rules.DispatchEvents.Allow(ctx); err != nil {
		return err
	}
	ctx = viewer.SystemContext(ctx)
	for {
		n, err := a.dispatchEventBatch(ctx)
		if err != nil || n < dispatchBatch {
			return err
		}
	}
}

// dispatchEventBatch hands up to dispatchBatch undispatched events to
// delivery in one transaction: the deliveries, their jobs and the events'
// published_at commit together, and the unique (endpoint, event) index
// keeps a second dispatcher from delivering an event twice. An endpoint
// receives only the events created after it. It returns how many events it
// handed over.
func (a *Service) dispatchEventBatch(ctx context.Context) (int, error) {
	rc, err := a.k.Jobs()
	if err != nil {
		return 0, err
	}
	now := a.k.Now()
	var n int
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		n = 0 // a run again after a conflict counts afresh
		q := tx.Ent.Event.Query().Where(event.PublishedAtIsNil()).Order(ent.Asc(event.FieldID)).Limit(dispatchBatch)
		if a.k.DB.Dialect == dialect.Postgres {
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
		var deliveries []river.InsertManyParams
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
				job := jobs.Delivery(d.TenantID, d.ID)
				job.InsertOpts.Metadata = tracing.JobMetadataOf(e.TraceParent) // in the trace of the event's change
				deliveries = append(deliveries, job)
			}
		}
		if len(deliveries) > 0 {
			if _, err := rc.InsertManyTx(ctx, tx.SQL, deliveries); err != nil {
				return fmt.Errorf("enqueueing deliveries: %w", err)
			}
		}
		return tx.Ent.Event.Update().Where(event.IDIn(ids...)).SetPublishedAt(now).Exec(ctx)
	})
	return n, err
}

// DeliverWebhook makes an attempt of a delivery (jobs.AttemptOf) and
// records it, for good after the job's last. A delivery no longer pending
// (a duplicate job, a redelivery that already ran) is left alone; an
// inactive or deleted endpoint fails it at once. A failed attempt that is
// not the last answers an error wrapping ErrDeliveryRetry.
func (a *Service) DeliverWebhook(ctx context.Context, args jobs.DeliverWebhook) error {
	if err := Rules.DeliverWebhook.Allow(ctx); err != nil {
		return err
	}
	attempt := jobs.AttemptOf(ctx)
	n, final := attempt.N, attempt.Last()
	if args.TenantID != "" {
		ctx = viewer.TenantContext(ctx, args.TenantID)
	} else {
		// A job queued before its arguments carried the tenant: the
		// delivery's row, read across tenants, names it.
		ctx = viewer.SystemContext(ctx)
	}
	d, err := a.k.DB.Ent.WebhookDelivery.Query().Where(webhookdelivery.ID(args.DeliveryID)).
		WithEndpoint().WithEvent().Only(ctx)
	if ent.IsNotFound(err) {
		return nil // its endpoint or event was deleted, and the delivery with it
	}
	if err != nil || d.Status != webhookdelivery.StatusPending {
		return err
	}
	now := a.k.Now()
	ep, ev := d.Edges.Endpoint, d.Edges.Event
	if !ep.Active {
		return a.recordAttempt(ctx, d, now, webhook.Result{Err: errors.New("the endpoint is inactive")}, n, true)
	}
	secrets := []string{ep.Secret}
	if ep.PreviousSecret != nil && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		secrets = append(secrets, *ep.PreviousSecret)
	}
	res := a.webhookSender().Send(ctx, webhook.Request{URL: ep.URL, Secrets: secrets, Now: now, Body: webhook.Envelope{
		ID: ev.ID, Type: ev.Type, TenantID: ev.TenantID, CreatedAt: ev.CreatedAt.UTC(), Data: ev.Data,
	}})
	if err := a.recordAttempt(ctx, d, now, res, n, final); err != nil {
		return err
	}
	if res.Err != nil && !final {
		return fmt.Errorf("%w: %w", ErrDeliveryRetry, res.Err)
	}
	return nil
}

// recordAttempt logs attempt n and moves the delivery on: succeeded, failed
// for good when final, else pending until the next attempt.
func (a *Service) recordAttempt(ctx context.Context, d *ent.WebhookDelivery, now time.Time, res webhook.Result, n int, final bool) error {
	return a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		at := tx.Ent.WebhookAttempt.Create().SetTenantID(d.TenantID).SetDeliveryID(d.ID).SetAttemptedAt(now).
			SetLatencyMs(res.Latency.Milliseconds()).SetResponseExcerpt(res.Excerpt)
		u := tx.Ent.WebhookDelivery.UpdateOneID(d.ID).AddAttempts(1)
		if res.StatusCode != 0 {
			at.SetStatusCode(res.StatusCode)
			u.SetLastStatusCode(res.StatusCode)
		}
		switch {
		case res.Err == nil:
			u.SetStatus(webhookdelivery.StatusSucceeded).SetCompletedAt(now).ClearNextAttemptAt().ClearLastError()
		case final:
			at.SetError(res.Err.Error())
			u.SetStatus(webhookdelivery.StatusFailed).SetCompletedAt(now).ClearNextAttemptAt().SetLastError(res.Err.Error())
		default:
			at.SetError(res.Err.Error())
			u.SetNextAttemptAt(now.Add(jobs.RetryAfter(n))).SetLastError(res.Err.Error())
		}
		if err := at.Exec(ctx); err != nil {
			return err
		}
		return u.Exec(ctx)
	})
}
