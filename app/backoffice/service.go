// Package backoffice is the back-office context: tenants and their settings,
// stores, API clients and the audit trail.
package backoffice

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
)

// Service owns the operations of the back-office context.
type Service struct {
	*kernel.Kernel
	// SeedDemo gives a new sandbox the demo's data; the composition root
	// sets it (the demo drives every context, so it lives above them).
	SeedDemo func(ctx context.Context, tenantID string) error

	// origins are the tenants' back-office origins (CORS).
	origins originsCache
}
