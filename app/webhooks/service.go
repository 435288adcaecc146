// Package webhooks is the webhooks context: the endpoints a tenant
// registers, the deliveries of its events and their retries.
package webhooks

import (
	"sync"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/webhook"
)

// Service owns the operations of the webhooks context.
type Service struct {
	*kernel.Kernel

	senderOnce sync.Once
	sender     *webhook.Sender
	// feed hands outbox events to GraphQL subscriptions.
	feed eventFeed
}

// webhookSender sends webhook deliveries to the destinations a.WebhookGuard
// allows.
func (a *Service) webhookSender() *webhook.Sender {
	a.senderOnce.Do(func() { a.sender = webhook.NewSender(a.WebhookGuard) })
	return a.sender
}
