// Package backoffice is the back-office context: tenants and their settings,
// stores, API clients and the audit trail.
package backoffice

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// Service owns the operations of the back-office context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	// Demo is the demo's data and history a new sandbox gets; the
	// composition root sets it (the demo drives every context, so it lives
	// above them).
	Demo Demo

	// origins are the tenants' back-office origins (CORS).
	origins originsCache
}

// Demo seeds the demo's data and plays its history into a tenant.
type Demo interface {
	// Seed writes the small demo's stores, customers, segment and
	// campaigns, in the caller's transaction.
	Seed(ctx context.Context, c *ent.Client, tenantID string) error
	// PlayHistory plays a few months of the living demo into a tenant
	// holding the seed.
	PlayHistory(ctx context.Context, tenantID string) error
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
