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
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations

	senderOnce sync.Once
	sender     *webhook.Sender
	// feed hands outbox events to GraphQL subscriptions.
	feed eventFeed
}

// webhookSender sends webhook deliveries to the destinations a.WebhookGuard
// allows.
func (a *Service) webhookSender() *webhook.Sender {
	a.senderOnce.Do(func() { a.sender = webhook.NewSender(a.k.WebhookGuard) })
	return a.sender
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
