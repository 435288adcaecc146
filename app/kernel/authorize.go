package kernel

import (
	"context"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/viewer"
)

// Back-office scopes are held by back-office users only and cannot be
// requested at /auth/token: ScopeBackoffice (admin and analyst) guards what
// an integration has no business reading, such as the tenant's API clients;
// ScopeBackofficeWrite (admin) guards operator actions such as point
// adjustments.
const (
	ScopeBackoffice      = "backoffice:read"
	ScopeBackofficeWrite = "backoffice:write"
)

// Authorize says whether the viewer of ctx holds scope; "" needs only a
// viewer. It is the one check behind every REST route and GraphQL field.
func Authorize(ctx context.Context, scope string) error {
	v, ok := viewer.FromContext(ctx)
	switch {
	case !ok:
		return apperr.Forbidden("insufficient_scope", "no credentials")
	case scope == "" || v.IsSystem():
		return nil
	case scope == ScopeBackoffice && (v.Role == viewer.RoleAdmin || v.Role == viewer.RoleAnalyst):
		return nil
	case scope == ScopeBackofficeWrite && v.Role == viewer.RoleAdmin:
		return nil
	case v.HasScope(scope):
		return nil
	}
	return apperr.Forbidden("insufficient_scope", "the access token lacks the scope "+scope)
}

// ViewerTenant returns the tenant the viewer of ctx acts in.
func ViewerTenant(ctx context.Context) (string, error) {
	v, ok := viewer.FromContext(ctx)
	if !ok || v.TenantID == "" {
		return "", apperr.Forbidden("forbidden", "the viewer acts in no tenant")
	}
	return v.TenantID, nil
}
