// Package viewer carries who is acting into every ent operation. The privacy
// policies of ent/schema read it to filter and check each query and mutation
// by tenant; nothing else in the code base filters by tenant.
package viewer

import (
	"context"
	"slices"
	"strings"
)

// Role says what kind of principal is acting.
type Role string

const (
	// RoleSystem is the service itself: the admin CLI, migrations, workers
	// before they know the tenant, and authentication lookups. It sees every
	// tenant.
	RoleSystem Role = "system"
	// RoleClient is an OAuth or POS client of one tenant, limited by scopes.
	RoleClient Role = "client"
	// RoleAdmin is a back-office user who may do everything in one tenant.
	RoleAdmin Role = "admin"
	// RoleAnalyst is a back-office user who may read everything in one tenant.
	RoleAnalyst Role = "analyst"
)

// Viewer is the principal of a request or job.
type Viewer struct {
	Role     Role
	TenantID string   // empty only for RoleSystem
	Subject  string   // client id or user subject, for logs and audit
	Scopes   []string // granted OAuth scopes (RoleClient)
	// service marks the service itself acting (SystemContext,
	// OperatorContext, TenantContext): no credential can make one, whatever
	// subject or role an identity provider puts in its token.
	service bool
}

// HasScope reports whether the viewer was granted scope.
func (v Viewer) HasScope(scope string) bool { return slices.Contains(v.Scopes, scope) }

// IsSystem reports whether the viewer acts for the service itself across
// every tenant.
func (v Viewer) IsSystem() bool { return v.Role == RoleSystem }

// IsService reports whether the viewer is the service itself, across every
// tenant or in one (a job's TenantContext); never a request's principal.
func (v Viewer) IsService() bool { return v.service || v.Role == RoleSystem }

// IsOperator reports whether the viewer is the operator at the admin CLI.
func (v Viewer) IsOperator() bool {
	return v.Role == RoleSystem && strings.HasPrefix(v.Subject, operatorPrefix)
}

// ReadOnly reports whether the viewer may never change data.
func (v Viewer) ReadOnly() bool { return v.Role == RoleAnalyst }

type ctxKey struct{}

// NewContext returns a copy of ctx that carries v.
func NewContext(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// FromContext returns the viewer of ctx and whether there is one.
func FromContext(ctx context.Context) (Viewer, bool) {
	v, ok := ctx.Value(ctxKey{}).(Viewer)
	return v, ok
}

// SystemContext returns a context acting as the service itself.
func SystemContext(ctx context.Context) context.Context {
	return NewContext(ctx, Viewer{Role: RoleSystem, Subject: "system", service: true})
}

// operatorPrefix begins the subject of the operator at the admin CLI.
const operatorPrefix = "operator:"

// OperatorContext returns a context acting as the service for the operator
// named name at the admin CLI: it sees every tenant, as the system does, and
// its back-office changes are audited as "operator:<name>".
func OperatorContext(ctx context.Context, name string) context.Context {
	return NewContext(ctx, Viewer{Role: RoleSystem, Subject: operatorPrefix + name, service: true})
}

// TenantContext returns a context acting with full rights inside one tenant,
// as a worker processing that tenant's job does.
func TenantContext(ctx context.Context, tenantID string) context.Context {
	return NewContext(ctx, Viewer{Role: RoleAdmin, TenantID: tenantID, Subject: "system", service: true})
}
