package rest

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/auth"

	"github.com/go-chi/chi/v5"
)

// route is one route of the HTTP interface, declared once: the table mounts
// it and is what the tests walk.
type route struct {
	method, pattern string
	// scope is what a bearer token needs (bearer routes); "" for GraphQL,
	// whose fields are checked one by one (graph.RootFieldScopes).
	scope   string
	handler func(*server, http.ResponseWriter, *http.Request)
}

// bearerRoutes are the routes of /v1 and the points paths, authenticated by
// an access token holding the route's scope. The document gives
// /points/credit without the version prefix; every points path is served
// with and without it.
var bearerRoutes = slices.Concat([]route{
	{"GET", "/v1/customers", "customers:read", (*server).listCustomers},
	{"POST", "/v1/customers", "customers:write", (*server).createCustomer},
	{"POST", "/v1/customers/imports", "customers:write", (*server).startCustomerImport},
	{"GET", "/v1/customers/imports/{id}", "customers:read", (*server).getCustomerImport},
	{"GET", "/v1/customers/imports/{id}/problems", "customers:read", (*server).customerImportProblems},
	{"GET", "/v1/customers/{id}", "customers:read", (*server).getCustomer},
	{"PUT", "/v1/customers/{id}", "customers:write", (*server).replaceCustomer},
	{"PATCH", "/v1/customers/{id}", "customers:write", (*server).patchCustomer},
	{"DELETE", "/v1/customers/{id}", "privacy:write", (*server).eraseCustomer},
	{"GET", "/v1/customers/{id}/export", "privacy:read", (*server).exportCustomer},

	{"GET", "/v1/campaigns", "campaigns:read", (*server).listCampaigns},
	{"POST", "/v1/campaigns", "campaigns:write", (*server).createCampaign},
	{"POST", "/v1/campaigns/validate", "campaigns:read", (*server).validateCart},
	{"GET", "/v1/campaigns/{id}", "campaigns:read", (*server).getCampaign},
	{"DELETE", "/v1/campaigns/{id}", "campaigns:write", (*server).endCampaign},
	{"POST", "/v1/campaigns/{id}/redeem", "campaigns:write", (*server).redeemCampaign},
	{"POST", "/v1/campaigns/{id}/coupons", "campaigns:write", (*server).addCoupons},
	{"GET", "/v1/campaigns/{id}/coupons", "campaigns:read", (*server).listCoupons},
	{"POST", "/v1/products", "campaigns:write", (*server).importProducts},
	{"POST", "/v1/redemptions/{id}/rollback", "campaigns:write", (*server).rollbackRedemption},

	{"POST", "/v1/webhooks", "webhooks:write", (*server).createWebhook},
	{"GET", "/v1/webhooks", "webhooks:read", (*server).listWebhooks},
	{"GET", "/v1/webhooks/{id}", "webhooks:read", (*server).getWebhook},
	{"PATCH", "/v1/webhooks/{id}", "webhooks:write", (*server).patchWebhook},
	{"DELETE", "/v1/webhooks/{id}", "webhooks:write", (*server).deleteWebhook},
	{"POST", "/v1/webhooks/{id}/rotate-secret", "webhooks:write", (*server).rotateWebhookSecret},
	{"GET", "/v1/webhooks/{id}/deliveries", "webhooks:read", (*server).listWebhookDeliveries},
	{"POST", "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", "webhooks:write", (*server).redeliverWebhook},

	{"GET", "/graphql", "", (*server).graphql},
	{"POST", "/graphql", "", (*server).graphql},
	{"GET", "/v2/customers/{id}/churn", "customers:read", (*server).customerChurn},
	{"GET", "/v2/segments/predictive", "customers:read", (*server).predictiveSegments},
	{"GET", "/v2/segments/predictive/{key}/customers", "customers:read", (*server).predictiveSegmentCustomers},
}, pointsRoutes(""), pointsRoutes("/v1"))

func pointsRoutes(prefix string) []route {
	return []route{
		{"POST", prefix + "/points/credit", "loyalty:write", (*server).creditPoints},
		{"POST", prefix + "/points/debit", "loyalty:write", (*server).debitPoints},
		{"POST", prefix + "/points/reverse", "loyalty:write", (*server).reversePoints},
		{"GET", prefix + "/points/balance/{customer_id}", "loyalty:read", (*server).pointsBalance},
		{"GET", prefix + "/points/statement/{customer_id}", "loyalty:read", (*server).pointsStatement},
	}
}

// posPrefix is where the point-of-sale interface lives.
const posPrefix = "/api/v1/tenants/{tenantId}"

// posRouteTable are the routes of the point-of-sale interface, under
// posPrefix, authenticated with HTTP Basic credentials of a POS client of
// the path's tenant.
var posRouteTable = []route{
	{"POST", "/customers/identify", "", (*server).identify},
	{"POST", "/discounts/authorizations", "", (*server).authorize},
	{"POST", "/discounts/authorize", "", (*server).authorize},
	{"POST", "/sales", "", (*server).registerSale},
	{"GET", "/sales/{saleId}", "", (*server).saleOutcome},
	{"POST", "/sales/{saleId}/cancellation", "", (*server).cancelSale},
	{"POST", "/sales/{saleId}/returns", "", (*server).returnSaleItems},
}

// publicRoutes need no token.
var publicRoutes = []route{
	{"GET", "/healthz", "", (*server).healthz},
	{"GET", "/readyz", "", (*server).readyz},
	{"GET", "/metrics", "", (*server).metrics}, // Prometheus; keep it off the public internet (docs/metrics.md)
	{"POST", "/auth/token", "", (*server).token},
	{"GET", "/.well-known/openid-configuration", "", (*server).discovery},
	{"GET", "/.well-known/jwks.json", "", (*server).jwks},
	{"GET", "/problems/{id}", "", (*server).problemPage},
	{"GET", "/auth/login", "", (*server).startSignIn},
	{"GET", auth.SignInPath, "", (*server).finishSignIn},
}

func (rt route) key() string { return rt.method + " " + rt.pattern }

// RouteScopes maps every bearer-protected route to the scope it needs (""
// for GraphQL, checked field by field against graph.RootFieldScopes).
var RouteScopes = func() map[string]string {
	m := map[string]string{}
	for _, rt := range bearerRoutes {
		m[rt.key()] = rt.scope
	}
	return m
}()

// POSRoutes are the point-of-sale routes, with their prefix.
var POSRoutes = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range posRouteTable {
		m[rt.method+" "+posPrefix+rt.pattern] = true
	}
	return m
}()

// PublicRoutes need no token: publicRoutes, and the routes of the handlers
// mounted whole (the playground, the OpenAPI documents, the panel), which
// route within themselves.
var PublicRoutes = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range publicRoutes {
		m[rt.key()] = true
	}
	for _, key := range mountedRoutes {
		m[key] = true
	}
	return m
}()

// mountedRoutes are the routes the mounted handlers serve.
var mountedRoutes = []string{
	"GET /playground/", // the page; its queries need a token
	"GET /playground/assets/*",
	// The OpenAPI documents of /v1 and the POS interface, and their
	// reference page.
	"GET /openapi/",
	"GET /openapi/v1.yaml",
	"GET /openapi/v1.json",
	"GET /openapi/pos.yaml",
	"GET /openapi/pos.json",
	"GET /openapi/v2.yaml",
	"GET /openapi/v2.json",
	// The developer panel authenticates a session cookie holding a user's
	// token, each page checking the role; its forms check their Origin.
	"GET /panel/",
	"GET /panel/assets/*",
	"GET /panel/sso",
	"GET /panel/sign-in", // a single-use sign-in link (serve --demo prints one)
	"POST /panel/session",
	"POST /panel/logout",
	"POST /panel/sandboxes",
	"GET /panel/sandboxes/{id}",
	"POST /panel/sandboxes/{id}/clients",
	"POST /panel/sandboxes/{id}/clients/{clientID}/rotate",
	"POST /panel/sandboxes/{id}/reset",
	"GET /panel/insights",
	"GET /panel/sandboxes/{id}/insights",
	"GET /panel/settings",
	"GET /panel/audit",
	"POST /panel/settings",
}

// handle mounts a route of the table, its handler bound to s.
func (s *server) handle(r chi.Router, rt route) {
	r.Method(rt.method, rt.pattern, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { rt.handler(s, w, req) }))
}

// protected mounts a bearer-authenticated route guarded by its scope, its
// client's requests counted against its tenant's rate limit.
func (s *server) protected(r chi.Router, rt route) {
	refuse := refusalFor(rt.pattern)
	s.handle(r.With(s.bearer(refuse), s.limitClient(refuse), s.requireScope(rt.scope)), rt)
}

// requireScope answers 403 insufficient_scope naming the missing scope.
func (s *server) requireScope(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := kernel.Authorize(r.Context(), scope); err != nil {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="fideliza", error="insufficient_scope", scope=%q`, scope))
				s.writeV1Error(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
