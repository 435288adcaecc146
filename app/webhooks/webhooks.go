package webhooks

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
)

// Webhook limits.
const (
	maxEndpointsPerTenant = 20
	// PreviousSecretValidity is how long deliveries keep carrying a
	// signature made with the secret a rotation replaced.
	PreviousSecretValidity = 24 * time.Hour
)

// WebhookInput creates or changes an endpoint; on a change, nil leaves a
// field as it is.
type WebhookInput struct {
	URL         *string
	EventTypes  []string
	Description *string
	Active      *bool
}

// WebhookSecret is an endpoint with its signing secret, which only the
// answers of creation and rotation show.
type WebhookSecret struct {
	Endpoint *ent.WebhookEndpoint
	Secret   string
}

func (a *Service) checkWebhook(in WebhookInput, create bool) error {
	var p apperr.Problems
	switch {
	case in.URL != nil:
		if err := a.k.WebhookGuard.CheckURL(strings.TrimSpace(*in.URL)); err != nil {
			p.Add("url", "%v", err)
		} else if len(*in.URL) > 2048 {
			p.Add("url", "must be at most 2048 characters")
		}
	case create:
		p.Add("url", "is required")
	}
	switch {
	case in.EventTypes != nil:
		if len(in.EventTypes) == 0 {
			p.Add("events", "must name at least one event type")
		}
		for _, t := range in.EventTypes {
			if !slices.Contains(outbox.Types, t) {
				p.Add("events", "unknown event type %q (known: %s)", t, strings.Join(outbox.Types, ", "))
			}
		}
	case create:
		p.Add("events", "is required")
	}
	if in.Description != nil && len(*in.Description) > 500 {
		p.Add("description", "must be at most 500 characters")
	}
	return p.Err()
}

// CreateWebhookEndpoint registers an endpoint of the viewer's tenant with a
// new signing secret.
func (a *Service) CreateWebhookEndpoint(ctx context.Context, in WebhookInput) (*WebhookSecret, error) {
	if err := Rules.CreateWebhookEndpoint.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	if err := a.checkWebhook(in, true); err != nil {
		return nil, err
	}
	if n, err := a.k.DB.Ent.WebhookEndpoint.Query().Count(ctx); err != nil {
		return nil, err
	} else if n >= maxEndpointsPerTenant {
		return nil, apperr.Conflict("too_many_endpoints", "url", "a tenant has at most 20 webhook endpoints")
	}
	secret := webhook.NewSecret()
	ep, err := a.k.DB.Ent.WebhookEndpoint.Create().SetURL(strings.TrimSpace(*in.URL)).
		SetEventTypes(compactTypes(in.EventTypes)).SetNillableDescription(in.Description).
		SetNillableActive(in.Active).SetSecret(secret).Save(ctx)
	if err != nil {
		return nil, err
	}
	return &WebhookSecret{Endpoint: ep, Secret: secret}, nil
}

func compactTypes(types []string) []string {
	types = slices.Clone(types)
	slices.Sort(types)
	return slices.Compact(types)
}

// UpdateWebhookEndpoint changes an endpoint.
func (a *Service) UpdateWebhookEndpoint(ctx context.Context, id string, in WebhookInput) (*ent.WebhookEndpoint, error) {
	if err := Rules.UpdateWebhookEndpoint.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	if err := a.checkWebhook(in, false); err != nil {
		return nil, err
	}
	u := a.k.DB.Ent.WebhookEndpoint.UpdateOneID(id).SetNillableDescription(in.Description).SetNillableActive(in.Active)
	if in.URL != nil {
		u.SetURL(strings.TrimSpace(*in.URL))
	}
	if in.EventTypes != nil {
		u.SetEventTypes(compactTypes(in.EventTypes))
	}
	ep, err := u.Save(ctx)
	return ep, kernel.NotFoundAs(err, "webhook endpoint")
}

// DeleteWebhookEndpoint removes an endpoint with its delivery log.
func (a *Service) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	if err := Rules.DeleteWebhookEndpoint.Allow(ctx); err != nil {
		return err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return err
	}
	return kernel.NotFoundAs(a.k.DB.Ent.WebhookEndpoint.DeleteOneID(id).Exec(ctx), "webhook endpoint")
}

// WebhookEndpoint reads one endpoint.
func (a *Service) WebhookEndpoint(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if err := Rules.WebhookEndpoint.Allow(ctx); err != nil {
		return nil, err
	}
	return a.webhookEndpoint(ctx, id)
}

// webhookEndpoint is WebhookEndpoint without its policy check, for the operations
// of this context that call it.
func (a *Service) webhookEndpoint(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	ep, err := a.k.DB.Ent.WebhookEndpoint.Get(ctx, id)
	return ep, kernel.NotFoundAs(err, "webhook endpoint")
}

// WebhookEndpoints lists the viewer's tenant's endpoints, oldest first.
func (a *Service) WebhookEndpoints(ctx context.Context) ([]*ent.WebhookEndpoint, error) {
	if err := Rules.WebhookEndpoints.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.WebhookEndpoint.Query().
		Order(ent.Asc(webhookendpoint.FieldCreatedAt), ent.Asc(webhookendpoint.FieldID)).All(ctx)
}

// RotateWebhookSecret gives an endpoint a new secret. Deliveries carry a
// signature with the old one too for PreviousSecretValidity, so receivers
// can switch without losing any.
func (a *Service) RotateWebhookSecret(ctx context.Context, id string) (*WebhookSecret, error) {
	if err := Rules.RotateWebhookSecret.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	var out *WebhookSecret
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		q := tx.Ent.WebhookEndpoint.Query().Where(webhookendpoint.ID(id))
		if a.k.DB.Dialect == dialect.Postgres { // SQLite's write transactions are serial already
			q.ForUpdate()
		}
		ep, err := q.Only(ctx)
		if err != nil {
			return kernel.NotFoundAs(err, "webhook endpoint")
		}
		secret := webhook.NewSecret()
		ep, err = tx.Ent.WebhookEndpoint.UpdateOne(ep).SetSecret(secret).SetPreviousSecret(ep.Secret).
			SetPreviousSecretExpiresAt(a.k.Now().Add(PreviousSecretValidity)).Save(ctx)
		out = &WebhookSecret{Endpoint: ep, Secret: secret}
		return err
	})
	return out, err
}

// WebhookDeliveries lists an endpoint's deliveries, newest first, each with
// its attempts.
func (a *Service) WebhookDeliveries(ctx context.Context, endpointID string, after *ent.Cursor, first int) (*ent.WebhookDeliveryConnection, error) {
	if err := Rules.WebhookDeliveries.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("endpoint_id", endpointID); err != nil {
		return nil, err
	}
	if _, err := a.webhookEndpoint(ctx, endpointID); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpointID)).
		WithAttemptLog(func(q *ent.WebhookAttemptQuery) { q.Order(ent.Asc(webhookattempt.FieldAttemptedAt)) }).
		Paginate(ctx, after, &first, nil, nil, ent.WithWebhookDeliveryOrder(&ent.WebhookDeliveryOrder{
			Direction: entgql.OrderDirectionDesc, Field: ent.DefaultWebhookDeliveryOrder.Field,
		}))
}

// RecentDeliveries returns the viewer's tenant's latest deliveries with
// their endpoints, newest first.
func (a *Service) RecentDeliveries(ctx context.Context, limit int) ([]*ent.WebhookDelivery, error) {
	if err := Rules.RecentDeliveries.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.WebhookDelivery.Query().WithEndpoint().
		Order(ent.Desc(webhookdelivery.FieldCreatedAt), ent.Desc(webhookdelivery.FieldID)).
		Limit(min(max(limit, 1), kernel.MaxPageSize)).All(ctx)
}

// RedeliverWebhook sends a succeeded or failed delivery again with a fresh
// set of attempts; its log keeps the earlier ones, which the answer carries.
// A non-empty endpointID must be the delivery's endpoint.
func (a *Service) RedeliverWebhook(ctx context.Context, endpointID, deliveryID string) (*ent.WebhookDelivery, error) {
	if err := Rules.RedeliverWebhook.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("endpoint_id", endpointID, "delivery_id", deliveryID); err != nil {
		return nil, err
	}
	if endpointID != "" {
		if _, err := a.webhookEndpoint(ctx, endpointID); err != nil {
			return nil, err
		}
	}
	rc, err := a.k.Jobs()
	if err != nil {
		return nil, err
	}
	var d *ent.WebhookDelivery
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		q := tx.Ent.WebhookDelivery.Query().Where(webhookdelivery.ID(deliveryID))
		if endpointID != "" {
			q.Where(webhookdelivery.EndpointID(endpointID))
		}
		d, err = q.Only(ctx)
		switch {
		case err != nil:
			return kernel.NotFoundAs(err, "webhook delivery")
		case d.Status == webhookdelivery.StatusPending:
			// Its job is still trying: a second one would race it.
			return apperr.Conflict("delivery_pending", "delivery_id", "the delivery is still being attempted")
		}
		d, err = tx.Ent.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusPending).
			SetNextAttemptAt(a.k.Now()).ClearCompletedAt().Save(ctx)
		if err != nil {
			return err
		}
		d.Edges.AttemptLog, err = d.QueryAttemptLog().Order(ent.Asc(webhookattempt.FieldAttemptedAt)).All(ctx)
		if err != nil {
			return err
		}
		_, err = rc.InsertManyTx(ctx, tx.SQL, []river.InsertManyParams{jobs.Delivery(d.TenantID, d.ID)})
		return err
	})
	return d, err
}
