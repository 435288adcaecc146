package webhooks

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the webhooks context.
var Rules = kernel.NamedRules(struct {
	CreateWebhookEndpoint, UpdateWebhookEndpoint, DeleteWebhookEndpoint, RotateWebhookSecret kernel.Rule
	RedeliverWebhook, WebhookEndpoint, WebhookEndpoints, WebhookDeliveries, RecentDeliveries kernel.Rule
	SubscribeEvents, SubscribeImportProgress, DispatchEvents, DeliverWebhook                 kernel.Rule
	EventConnection, WebhookEndpointConnection, WebhookDeliveryConnection                    kernel.Rule
}{
	CreateWebhookEndpoint:   kernel.Scope("webhooks:write"),
	UpdateWebhookEndpoint:   kernel.Scope("webhooks:write"),
	DeleteWebhookEndpoint:   kernel.Scope("webhooks:write"),
	RotateWebhookSecret:     kernel.Scope("webhooks:write"),
	RedeliverWebhook:        kernel.Scope("webhooks:write"),
	WebhookEndpoint:         kernel.Scope("webhooks:read"),
	WebhookEndpoints:        kernel.Scope("webhooks:read"),
	WebhookDeliveries:       kernel.Scope("webhooks:read"),
	RecentDeliveries:        kernel.Scope("webhooks:read"),
	SubscribeEvents:         kernel.Scope(kernel.ScopeBackoffice, "customers:read"), // each field its own (graph.SubscriptionScopes)
	SubscribeImportProgress: kernel.Scope("customers:read"),
	DispatchEvents:          kernel.System,
	DeliverWebhook:          kernel.System,

	// The GraphQL connections (connections.go).
	EventConnection:           kernel.Scope(kernel.ScopeBackoffice),
	WebhookEndpointConnection: kernel.Scope("webhooks:read"),
	WebhookDeliveryConnection: kernel.Scope("webhooks:read"),
})
