package kernel

import (
	"context"
	"fmt"
	"reflect"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/viewer"
)

// Rule says who may call one operation of a context. Each context declares
// its rules as the fields of one struct value, Rules, a field per exported
// operation of its Service and named as it: the operations check their own
// (Rules.Op.Allow) and the transports read theirs (Rules.Op.Scope), so a
// misspelt operation does not compile.
type Rule struct {
	// Scopes: a client holding any of them, or a back-office user whose role
	// grants one (Authorize). The first is what the transports require.
	Scopes []string
	// System: the service itself only (workers, the admin CLI, upkeep).
	System bool
	// Internal: called by other contexts on data they already read, never
	// by a transport; no check of its own.
	Internal bool
	// op is the operation's name, for messages: its field's (NamedRules).
	op string
}

// Scope is the rule of an operation a viewer holding scope may call ("":
// any authenticated viewer).
func Scope(scope ...string) Rule { return Rule{Scopes: scope} }

// System is the rule of an operation only the service calls.
var System = Rule{System: true}

// Internal is the rule of a helper other contexts call.
var Internal = Rule{Internal: true}

// NamedRules returns rules, a context's struct of one Rule per operation,
// with each rule named after its field. It panics, when the context's
// package is initialised, on a field that is not an exported Rule or whose
// rule is not exactly one of scopes, system or internal.
func NamedRules[T any](rules T) T {
	v := reflect.ValueOf(&rules).Elem()
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("policy: rules are a struct of rules, not %s", v.Type()))
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Type != reflect.TypeFor[Rule]() {
			panic(fmt.Sprintf("policy: %s is not an exported Rule", f.Name))
		}
		r := v.Field(i).Addr().Interface().(*Rule)
		kinds := 0
		for _, on := range []bool{len(r.Scopes) > 0, r.System, r.Internal} {
			if on {
				kinds++
			}
		}
		if kinds != 1 {
			panic(fmt.Sprintf("policy: the rule of %s is not exactly one of scopes, system or internal", f.Name))
		}
		r.op = f.Name
	}
	return rules
}

// Scope returns the scope a transport requires before calling the rule's
// operation. It panics when the rule is not for transports: a route to a
// system or internal operation cannot be declared.
func (r Rule) Scope() string {
	if r.System || r.Internal || len(r.Scopes) == 0 {
		panic(fmt.Sprintf("policy: %s has no scope a transport may require", r.op))
	}
	return r.Scopes[0]
}

// Allow checks the viewer of ctx against the rule. The service itself (a
// system viewer, or a worker acting in a tenant with TenantContext) is the
// explicit caller of jobs and the CLI and may call every operation.
func (r Rule) Allow(ctx context.Context) error {
	if !r.Internal && !r.System && len(r.Scopes) == 0 {
		// The zero Rule, never declared: it lets no one by.
		return fmt.Errorf("policy: operation %q has no rule", r.op)
	}
	v, found := viewer.FromContext(ctx)
	switch {
	case r.Internal:
		return nil
	case found && v.IsService():
		return nil
	case r.System && !found:
		// A job or the CLI: transports always act as an authenticated
		// viewer, and no route or field can name a system operation
		// (Rule.Scope panics).
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
