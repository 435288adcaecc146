package webhooks

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the webhooks context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// EventConnection is a page of the domain events (GraphQL's events).
func (a *Service) EventConnection(ctx context.Context, p kernel.Page, order *ent.EventOrder, where *ent.EventWhereInput) (*ent.EventConnection, error) {
	if err := Rules.EventConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Event.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithEventOrder(order), ent.WithEventFilter(where.Filter))
}

// WebhookEndpointConnection is a page of the webhook endpoints (GraphQL's webhookEndpoints).
func (a *Service) WebhookEndpointConnection(ctx context.Context, p kernel.Page, order *ent.WebhookEndpointOrder, where *ent.WebhookEndpointWhereInput) (*ent.WebhookEndpointConnection, error) {
	if err := Rules.WebhookEndpointConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.WebhookEndpoint.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithWebhookEndpointOrder(order), ent.WithWebhookEndpointFilter(where.Filter))
}

// WebhookDeliveryConnection is a page of the webhook deliveries (GraphQL's webhookDeliveries).
func (a *Service) WebhookDeliveryConnection(ctx context.Context, p kernel.Page, order *ent.WebhookDeliveryOrder, where *ent.WebhookDeliveryWhereInput) (*ent.WebhookDeliveryConnection, error) {
	if err := Rules.WebhookDeliveryConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.WebhookDelivery.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithWebhookDeliveryOrder(order), ent.WithWebhookDeliveryFilter(where.Filter))
}
