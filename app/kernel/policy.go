package kernel

import (
	"context"
	"fmt"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent/schema/viewer"
)

// Rule says who may call one operation of a context.
type Rule struct {
	// Scopes: a client holding any of them, or a back-office user whose role
	// grants one (Authorize). The first is what the transports require.
	Scopes []string
	// System: the service itself only (workers, the admin CLI, upkeep).
	System bool
	// Internal: called by other contexts on data they already read, never
	// by a transport; no check of its own.
	Internal bool
}

// Scope is the rule of an operation a viewer holding scope may call ("":
// any authenticated viewer).
func Scope(scope ...string) Rule { return Rule{Scopes: scope} }

// System is the rule of an operation only the service calls.
var System = Rule{System: true}

// Internal is the rule of a helper other contexts call.
var Internal = Rule{Internal: true}

// Policy maps each exported operation of a context's Service to its rule:
// declared once beside the operations, enforced by Allow, read by the
// transports (Scope) for their routes, fields and actions. A test fails when
// an operation has no entry.
type Policy map[string]Rule

// Scope returns the scope a transport requires before calling op. It panics
// when op has no rule or is not for transports: a route to an operation
// without an entry cannot be declared.
func (p Policy) Scope(op string) string {
	r, ok := p[op]
	if !ok || r.System || r.Internal || len(r.Scopes) == 0 {
		panic(fmt.Sprintf("policy: %s has no scope a transport may require", op))
	}
	return r.Scopes[0]
}

// Allow checks the viewer of ctx against op's rule. The service itself (a
// system viewer, or a worker acting in a tenant with TenantContext) is the
// explicit caller of jobs and the CLI and may call every operation.
func (p Policy) Allow(ctx context.Context, op string) error {
	r, ok := p[op]
	if !ok {
		return fmt.Errorf("policy: operation %s has no rule", op)
	}
	v, found := viewer.FromContext(ctx)
	switch {
	case r.Internal:
		return nil
	case found && (v.IsSystem() || v.Subject == "system"):
		return nil
	case r.System && !found:
		// A job or the CLI: transports always act as an authenticated
		// viewer, and no route or field can name a system operation
		// (Policy.Scope panics).
		return nil
	case r.System:
		return apperr.Forbidden("insufficient_scope", "the service's own operation")
	case !found:
		return apperr.Forbidden("insufficient_scope", "no credentials")
	}
	var err error
	for _, s := range r.Scopes {
		if err = Authorize(ctx, s); err == nil {
			return nil
		}
	}
	return err
}
