package rest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/openapi"
	"github.com/fideliza/fideliza/openapi/openapitest"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The contract tests: every test server of this package and of package rest
// serves through contractCheck, so every response the suite provokes from
// the /v1, /points, /auth/token and point-of-sale paths is validated
// against the OpenAPI documents. TestContractDrift (contract_drift_test.go)
// shows that a drift is caught.

// contractCheck wraps a test server's handler so that every response to an
// operation of the OpenAPI documents is checked against them; a response
// that drifts from its document fails tb. Benchmarks are left unwrapped.
func contractCheck(tb testing.TB, h http.Handler) http.Handler {
	if _, ok := tb.(*testing.B); ok {
		return h
	}
	return openapitest.Middleware(tb, h)
}

// TestContractCoversEveryRoute walks the router: every route of the
// documented interfaces (RouteScopes but GraphQL, POSRoutes, the token
// endpoint) is an operation of a document, and every operation is served.
func TestContractCoversEveryRoute(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storagetest.Open(t, "sqlite3"))
	h := rest.NewHandler(f.app, testLogger(t), rest.Config{})

	documented := map[string]string{} // "METHOD /path" → document
	docs, err := openapi.Loaded()
	require.NoError(t, err)
	for name, doc := range docs {
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				documented[method+" "+path] = name
			}
		}
	}

	mounted := map[string]bool{}
	err = chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		mounted[method+" "+route] = true
		return nil
	})
	require.NoError(t, err)

	var want []string
	for key := range rest.RouteScopes {
		if !strings.HasSuffix(key, " /graphql") {
			want = append(want, key)
		}
	}
	for key := range rest.POSRoutes {
		want = append(want, key)
	}
	want = append(want, "POST /auth/token")
	slices.Sort(want)
	for _, key := range want {
		require.Containsf(t, documented, key, "route %s is served but no OpenAPI document describes it", key)
	}
	for key, doc := range documented {
		require.Truef(t, mounted[key], "%s.yaml describes %s, which is not served", doc, key)
	}
}
