// Package apptest gives a test of any package the application over a test
// database in one call: the contexts wired on one kernel, a tenant, its
// settings and its stores. Options say what else the test needs.
package apptest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Env is an application and the tenant a test acts as.
type Env struct {
	App *app.App
	// TenantID is the tenant's id, Ctx the context of its operations
	// (viewer.TenantContext).
	TenantID string
	Ctx      context.Context
	// Stores are the tenant's stores WithStore made, in its order.
	Stores []*ent.Store
}

// Option says how New makes the application or the tenant.
type Option func(*config)

type config struct {
	kernel   app.Config
	history  app.HistoryFunc
	tenant   string
	settings *backoffice.TenantSettings
	stores   []store
}

type store struct {
	code, name string
	groups     []string
}

// WithClock sets the application's clock (the default: the system's).
func WithClock(now func() time.Time) Option { return func(c *config) { c.kernel.Clock = now } }

// WithInlineSales says the application processes the sales it registers at
// once, as the demo's year does, instead of queueing a job each.
func WithInlineSales() Option { return func(c *config) { c.kernel.InlineSales = true } }

// WithWebhookGuard sets which URLs webhook endpoints may have.
func WithWebhookGuard(g webhook.Guard) Option { return func(c *config) { c.kernel.WebhookGuard = g } }

// WithHistory sets the history new demo tenants and sandboxes get.
func WithHistory(h app.HistoryFunc) Option { return func(c *config) { c.history = h } }

// WithTenant names the tenant (the default: "Loja").
func WithTenant(name string) Option { return func(c *config) { c.tenant = name } }

// WithTenantSettings updates the tenant's settings once it is made.
func WithTenantSettings(s backoffice.TenantSettings) Option {
	return func(c *config) { c.settings = &s }
}

// WithStore makes a store of the tenant in the groups of stores named.
func WithStore(code, name string, groups ...string) Option {
	return func(c *config) { c.stores = append(c.stores, store{code, name, groups}) }
}

// New wires the application over db with an authorization service, makes
// the tenant and what the options ask for, and returns them.
func New(t testing.TB, db *storage.DB, opts ...Option) *Env {
	t.Helper()
	c := config{tenant: "Loja"}
	for _, o := range opts {
		o(&c)
	}
	c.kernel.DB, c.kernel.Log = db, slog.New(slog.DiscardHandler)
	c.kernel.Auth = auth.NewService(db.Ent, "http://fideliza.test", "fideliza")
	a := app.New(&c.kernel).WithHistory(c.history)
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, c.tenant, nil)
	require.NoError(t, err)
	if c.settings != nil {
		_, err = a.Backoffice.UpdateTenant(sys, tn.ID, *c.settings)
		require.NoError(t, err)
	}
	e := &Env{App: a, TenantID: tn.ID, Ctx: viewer.TenantContext(context.Background(), tn.ID)}
	for _, s := range c.stores {
		st, err := a.Backoffice.CreateStore(sys, tn.ID, s.code, s.name, s.groups...)
		require.NoError(t, err)
		e.Stores = append(e.Stores, st)
	}
	return e
}

// Tenant makes another tenant of the application, named name: the
// application with it.
func (e *Env) Tenant(t testing.TB, name string) *Env {
	t.Helper()
	tn, err := e.App.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), name, nil)
	require.NoError(t, err)
	return &Env{App: e.App, TenantID: tn.ID, Ctx: viewer.TenantContext(context.Background(), tn.ID)}
}

// Process is another process of the application a over its database and
// clock: the contexts wired afresh, with a read model of their own.
func Process(a *app.App) *app.App {
	return app.New(&app.Config{DB: a.DB, Clock: a.Clock, Log: a.Log})
}

// CPF is the i-th of the valid CPFs Customer gives.
func CPF(i int) string { return document.CPFOf(100_000_000 + i*7919) }

// Customer makes the i-th customer of the tenant tenantID: "Cliente i",
// ci@example.com, CPF(i); it returns its id.
func Customer(t testing.TB, a *app.App, tenantID string, i int) string {
	t.Helper()
	c, err := a.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tenantID), customers.CustomerInput{
		Name: opt.Of(fmt.Sprintf("Cliente %d", i)), Email: opt.Of(fmt.Sprintf("c%d@example.com", i)),
		CPF: opt.Of(CPF(i)),
	})
	require.NoError(t, err)
	return c.ID
}
