package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestCORS sends a browser's cross-origin requests over HTTP: preflights
// and the requests that follow, from the installation's origin, a tenant's,
// another tenant's and one nobody allows, to the paths CORS covers and to
// those it does not.
func TestCORS(t *testing.T) {
	t.Parallel()
	const (
		installation = "https://install.example.invalid"
		ownOrigin    = "https://office-a.example.invalid:8443"
		otherTenants = "https://office-b.example.invalid"
		nobodys      = "https://elsewhere.example.invalid"
	)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db, func(s *ServerSetup) { s.CORSOrigins = []string{installation} })
		tok, err := e.app.Auth.IssueUserToken(context.Background(), e.tenantID, viewer.RoleAdmin, "office-admin", time.Hour)
		require.NoError(t, err)

		// The tenant's origins are set through GraphQL (as given, upper
		// case too), a bad one refused; the other tenant's by the
		// application, as the CLI does.
		settings := func(origins string) map[string]any {
			var out map[string]any
			resp := corsDo(t, e, http.MethodPost, "/graphql", tok, "", map[string]any{
				"query": `mutation { updateTenantSettings(input: {corsOrigins: ` + origins + `}) { corsOrigins } }`,
			}, &out)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			return out
		}
		out := settings(`["https://office-a.example.invalid/app"]`)
		require.Contains(t, mustJSON(t, out["errors"]), "without a path", "an origin with a path is refused")
		out = settings(`["HTTPS://Office-A.example.invalid:8443"]`)
		require.Nil(t, out["errors"])
		require.Equal(t, []any{ownOrigin}, out["data"].(map[string]any)["updateTenantSettings"].(map[string]any)["corsOrigins"])
		ctx := viewer.SystemContext(context.Background())
		var other *ent.Tenant
		other, err = e.app.Backoffice.CreateTenant(ctx, "Loja B", nil)
		require.NoError(t, err)
		_, err = e.app.Backoffice.UpdateTenant(ctx, other.ID, backoffice.TenantSettings{CORSOrigins: &[]string{otherTenants}})
		require.NoError(t, err)

		for _, c := range []struct {
			name, method, path, origin, token string
			status                            int
			allowed                           bool
		}{
			{"preflight of GraphQL, installation's origin", http.MethodOptions, "/graphql", installation, "", http.StatusNoContent, true},
			{"preflight of GraphQL, the tenant's origin", http.MethodOptions, "/graphql", ownOrigin, "", http.StatusNoContent, true},
			{"preflight of the webhooks API, another tenant's origin", http.MethodOptions, "/v1/webhooks", otherTenants, "", http.StatusNoContent, true},
			{"preflight of /v1, an origin nobody allows", http.MethodOptions, "/v1/customers", nobodys, "", http.StatusNoContent, false},
			{"preflight of the token endpoint", http.MethodOptions, "/auth/token", installation, "", http.StatusMethodNotAllowed, false},
			{"preflight of the panel's sign-in", http.MethodOptions, "/panel/session", installation, "", http.StatusMethodNotAllowed, false},
			{"GraphQL from the tenant's origin", http.MethodPost, "/graphql", ownOrigin, tok, http.StatusOK, true},
			{"GraphQL from the installation's origin", http.MethodPost, "/graphql", installation, tok, http.StatusOK, true},
			{"GraphQL from another tenant's origin", http.MethodPost, "/graphql", otherTenants, tok, http.StatusOK, false},
			{"webhooks API from the tenant's origin", http.MethodGet, "/v1/webhooks", ownOrigin, tok, http.StatusOK, true},
			{"/v1 from another tenant's origin", http.MethodGet, "/v1/customers", otherTenants, tok, http.StatusOK, false},
			{"/v1 from an origin nobody allows", http.MethodGet, "/v1/customers", nobodys, tok, http.StatusOK, false},
			{"/v1 without a token, an origin a tenant allows", http.MethodGet, "/v1/customers", otherTenants, "", http.StatusUnauthorized, true},
			{"/v1 without a token, an origin nobody allows", http.MethodGet, "/v1/customers", nobodys, "", http.StatusUnauthorized, false},
			{"token endpoint, installation's origin", http.MethodPost, "/auth/token", installation, "", http.StatusBadRequest, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				var body any
				if c.path == "/graphql" && c.method == http.MethodPost {
					body = map[string]any{"query": "{ tenants { totalCount } }"}
				}
				resp := corsDo(t, e, c.method, c.path, c.token, c.origin, body, nil)
				require.Equal(t, c.status, resp.StatusCode)
				require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "never credentials mode")
				if !c.allowed {
					for name := range resp.Header {
						require.False(t, strings.HasPrefix(name, "Access-Control-"), "no CORS header for a refused origin: %s", name)
					}
					return
				}
				require.Equal(t, c.origin, resp.Header.Get("Access-Control-Allow-Origin"))
				require.Contains(t, resp.Header.Values("Vary"), "Origin")
				if c.method == http.MethodOptions {
					require.Equal(t, corsMethods, resp.Header.Get("Access-Control-Allow-Methods"))
					require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "Authorization")
					require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
					require.Equal(t, "600", resp.Header.Get("Access-Control-Max-Age"))
				} else {
					require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id")
				}
			})
		}
	})
}

// corsDo sends a request as a browser on origin would (a preflight asks for
// POST with Authorization and Content-Type), decoding the answer into out.
func corsDo(t *testing.T, e *TestEnv, method, path, token, origin string, body, out any) *http.Response {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if method == http.MethodOptions {
		req.Header.Set("Access-Control-Request-Method", http.MethodPost)
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if out != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
	return resp
}
