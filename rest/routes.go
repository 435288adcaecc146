package rest

import (
	"fmt"
	"net/http"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"

	"github.com/go-chi/chi/v5"
)

// RouteScopes maps every bearer-protected route to the scope it needs.
// Mounting a protected route that is missing here panics at start, and a
// test walks the router against this table.
var RouteScopes = map[string]string{
	"GET /v1/customers":                      "customers:read",
	"GET /v1/customers/{id}":                 "customers:read",
	"POST /v1/customers":                     "customers:write",
	"PUT /v1/customers/{id}":                 "customers:write",
	"PATCH /v1/customers/{id}":               "customers:write",
	"POST /points/credit":                    "loyalty:write",
	"POST /v1/points/credit":                 "loyalty:write",
	"POST /points/debit":                     "loyalty:write",
	"POST /v1/points/debit":                  "loyalty:write",
	"GET /points/balance/{customer_id}":      "loyalty:read",
	"GET /v1/points/balance/{customer_id}":   "loyalty:read",
	"GET /points/statement/{customer_id}":    "loyalty:read",
	"GET /v1/points/statement/{customer_id}": "loyalty:read",
	"GET /v1/campaigns":                      "campaigns:read",
	"GET /v1/campaigns/{id}":                 "campaigns:read",
	"POST /v1/campaigns":                     "campaigns:write",
	"DELETE /v1/campaigns/{id}":              "campaigns:write",
	"POST /v1/campaigns/validate":            "campaigns:read",
	"POST /v1/campaigns/{id}/redeem":         "campaigns:write",
	"GET /graphql":                           "", // each root field is checked against graph.RootFieldScopes
	"POST /graphql":                          "",

	// Webhook endpoints and their delivery log.
	"POST /v1/webhooks":                                         "webhooks:write",
	"GET /v1/webhooks":                                          "webhooks:read",
	"GET /v1/webhooks/{id}":                                     "webhooks:read",
	"PATCH /v1/webhooks/{id}":                                   "webhooks:write",
	"DELETE /v1/webhooks/{id}":                                  "webhooks:write",
	"POST /v1/webhooks/{id}/rotate-secret":                      "webhooks:write",
	"GET /v1/webhooks/{id}/deliveries":                          "webhooks:read",
	"POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver": "webhooks:write",
}

// POSRoutes authenticate with HTTP Basic credentials of a POS client of the
// path's tenant, not with a bearer token.
var POSRoutes = map[string]bool{
	"POST /api/v1/tenants/{tenantId}/customers/identify":       true,
	"POST /api/v1/tenants/{tenantId}/discounts/authorizations": true,
	"POST /api/v1/tenants/{tenantId}/discounts/authorize":      true,
	"POST /api/v1/tenants/{tenantId}/sales":                    true,
	"GET /api/v1/tenants/{tenantId}/sales/{saleId}":            true,
}

// PublicRoutes need no token.
var PublicRoutes = map[string]bool{
	"GET /healthz":                          true,
	"GET /readyz":                           true,
	"GET /metrics":                          true, // Prometheus; keep it off the public internet (docs/metrics.md)
	"POST /auth/token":                      true,
	"GET /.well-known/openid-configuration": true,
	"GET /.well-known/jwks.json":            true,
	"GET /auth/login":                       true,
	"GET " + auth.SignInPath:                true,
	"GET /playground/":                      true, // the page; its queries need a token
	"GET /playground/assets/*":              true,
	// The OpenAPI documents of /v1 and the POS interface, and their
	// reference page.
	"GET /openapi/":         true,
	"GET /openapi/v1.yaml":  true,
	"GET /openapi/v1.json":  true,
	"GET /openapi/pos.yaml": true,
	"GET /openapi/pos.json": true,
	// The developer panel authenticates a session cookie holding a user's
	// token, each page checking the role; its forms check their Origin.
	"GET /panel/":                        true,
	"GET /panel/assets/*":                true,
	"GET /panel/sso":                     true,
	"POST /panel/session":                true,
	"POST /panel/logout":                 true,
	"POST /panel/sandboxes":              true,
	"GET /panel/sandboxes/{id}":          true,
	"POST /panel/sandboxes/{id}/clients": true,
	"POST /panel/sandboxes/{id}/clients/{clientID}/rotate": true,
	"POST /panel/sandboxes/{id}/reset":                     true,
}

// protected mounts a bearer-authenticated route guarded by its scope, its
// client's requests counted against its tenant's rate limit.
func (s *server) protected(r chi.Router, method, pattern string, h http.HandlerFunc) {
	key := method + " " + pattern
	scope, ok := RouteScopes[key]
	if !ok {
		panic(fmt.Sprintf("route %s has no scope in RouteScopes", key))
	}
	refuse := refusalFor(pattern)
	r.With(s.bearer(refuse), s.limitClient(refuse), s.requireScope(scope)).Method(method, pattern, h)
}

// requireScope answers 403 insufficient_scope naming the missing scope.
func (s *server) requireScope(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := app.Authorize(r.Context(), scope); err != nil {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="fideliza", error="insufficient_scope", scope=%q`, scope))
				s.writeV1Error(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
