// Package app is the application layer: the operations REST, GraphQL, the
// panel, the CLI and the River workers call. Business rules and input guards
// live here and in the domain packages beneath it; transports only decode,
// call one operation and encode.
package app

import (
	"context"
	"fmt"

	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/nodes"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/app/webhooks"

	"github.com/fideliza/fideliza/storage"
)

// Config is the kernel every context shares: the database, the clock, the
// log, the counters.
type Config = kernel.Kernel

// App is the composition root: the kernel and the services of the bounded
// contexts, wired once by New.
type App struct {
	*kernel.Kernel

	Insights   *insights.Service
	Scoring    *scoring.Service
	Audiences  *audiences.Service
	Backoffice *backoffice.Service
	Privacy    *privacy.Service
	Campaigns  *campaigns.Service
	Loyalty    *loyalty.Service
	Wallets    *wallets.Service
	GiftCards  *giftcards.Service
	Customers  *customers.Service
	Webhooks   *webhooks.Service
	Checkout   *checkout.Service
	POS        *pos.Service
	Nodes      *nodes.Service

	// History plays the living demo's history into serve --demo's tenant
	// and every new or reset sandbox (demoyear.Play); nil: they hold the
	// seed alone. Set by WithHistory.
	History HistoryFunc
}

// WithHistory sets the history new demo tenants and sandboxes get and
// returns a.
func (a *App) WithHistory(h HistoryFunc) *App {
	a.History = h
	return a
}

// New wires the contexts over the kernel k.
func New(k *Config) *App {
	a := &App{Kernel: k, Audiences: audiences.New(k), Webhooks: webhooks.New(k), Backoffice: backoffice.New(k),
		Privacy: privacy.New(k), Campaigns: campaigns.New(k), Scoring: scoring.New(k), Insights: insights.New(k),
		Customers: customers.New(k), Loyalty: loyalty.New(k), Checkout: checkout.New(k), POS: pos.New(k), Nodes: nodes.New(k), Wallets: wallets.New(k),
		GiftCards: giftcards.New(k)}
	a.Scoring.Audiences = a.Audiences
	a.Insights.Scoring = a.Scoring
	a.Customers.Scoring, a.Customers.Audiences = a.Scoring, a.Audiences
	a.Wallets.GiftCards = a.GiftCards
	a.Loyalty.Campaigns, a.Loyalty.Audiences, a.Loyalty.Wallets = a.Campaigns, a.Audiences, a.Wallets
	a.Checkout.Campaigns, a.Checkout.Loyalty = a.Campaigns, a.Loyalty
	a.POS.Checkout, a.POS.Campaigns, a.POS.Loyalty, a.POS.Audiences = a.Checkout, a.Campaigns, a.Loyalty, a.Audiences
	a.POS.Wallets, a.POS.GiftCards = a.Wallets, a.GiftCards
	a.Backoffice.Demo = demoData{a}
	if k.Auth != nil {
		k.Auth.CountFailuresIn(k.Limiter("client-failures", nil, 0))
	}
	return a
}

// BringUp readies a migrated database for serving: it makes the first
// signing key, so that the key set published at /.well-known/jwks.json
// holds it before the first token is issued. Processes starting together
// on one database make one key.
func (a *App) BringUp(ctx context.Context) error {
	err := a.DB.Exclusive(ctx, "first signing key", func(tx storage.Tx) error {
		return a.Auth.Keys.CreateFirst(ctx, tx.Ent)
	})
	if err != nil {
		return fmt.Errorf("making the first signing key: %w", err)
	}
	return nil
}
