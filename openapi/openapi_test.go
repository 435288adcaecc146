package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

func TestDocumentsAreValid(t *testing.T) {
	for _, d := range Documents() {
		doc, err := Load(d)
		require.NoError(t, err)
		require.Equal(t, "3.1.0", doc.OpenAPI, d.Name)
	}
}

// TestEveryOperationHasExamples: each operation shows an example of its
// request body and of each response that has a body.
func TestEveryOperationHasExamples(t *testing.T) {
	docs, err := Loaded()
	require.NoError(t, err)
	for name, doc := range docs {
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				where := name + ".yaml " + method + " " + path
				if op.RequestBody != nil {
					for mt, c := range op.RequestBody.Value.Content {
						require.Truef(t, len(c.Examples) > 0 || c.Example != nil, "%s: request %s has no example", where, mt)
					}
				}
				for code, res := range op.Responses.Map() {
					for mt, c := range res.Value.Content {
						require.Truef(t, len(c.Examples) > 0 || c.Example != nil, "%s: response %s %s has no example", where, code, mt)
					}
				}
			}
		}
	}
}

func TestHandler(t *testing.T) {
	r := chi.NewRouter()
	r.Mount("/openapi", Handler())
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		return res, string(b)
	}

	res, page := get("/openapi/")
	require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")
	for _, want := range []string{
		`id="v1-op-createCustomer"`, `id="pos-op-registerSale"`, `id="v1-schema-Customer"`,
		"/v1/campaigns/{id}/redeem", "/api/v1/tenants/{tenantId}/customers/identify",
		"duplicate_customer", "grant_type=client_credentials", "customer.level_changed",
		`href="v1.yaml"`, `href="pos.json"`,
	} {
		require.Contains(t, page, want)
	}
	// The CSP allows the style sheet by its hash: it must be the exact text.
	require.Contains(t, page, "<style>"+styleSheet+"</style>")
	require.NotContains(t, page, "<script")
	require.NotContains(t, page, "http://")
	require.NotContains(t, page, "https://cdn")

	for _, d := range Documents() {
		res, body := get("/openapi/" + d.Name + ".yaml")
		require.Equal(t, "application/yaml; charset=utf-8", res.Header.Get("Content-Type"))
		require.Equal(t, string(d.YAML), body)
		res, body = get("/openapi/" + d.Name + ".json")
		require.Equal(t, "application/json", res.Header.Get("Content-Type"))
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &doc))
		require.Equal(t, "3.1.0", doc["openapi"])
		require.True(t, strings.HasPrefix(res.Header.Get("ETag"), `"`))
	}
}
