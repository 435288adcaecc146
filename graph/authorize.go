package graph

import (
	"context"

	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/graph/apperr"
)

// ScopeBackoffice is held by back-office users (admin, analyst) only: it
// guards what an integration has no business reading, such as the tenant's
// list of API clients. It cannot be requested at /auth/token.
const ScopeBackoffice = "backoffice:read"

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
	case v.HasScope(scope):
		return nil
	}
	return apperr.Forbidden("insufficient_scope", "the access token lacks the scope "+scope)
}
