package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// posRoutes are the POS operations with a body each accepts.
func posRoutes() []posReq {
	return []posReq{
		{path: "/customers/identify", body: posIdentifyBody("s", "52998224725", "CPF")},
		{path: "/discounts/authorizations", body: posAuthorizeBody(nil, posItem("1", posGTINA, "10.00", "1"))},
		{path: "/discounts/authorize", body: posAuthorizeBody(nil, posItem("1", posGTINA, "10.00", "1"))},
		{path: "/sales", body: posSaleBody(posN("9001"), nil)},
		{method: http.MethodGet, path: "/sales/9001"},
	}
}

func TestPOSAuthentication(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// Dozens of refusals from one address: more than its quota of
		// failed authentications (ratelimit_test.go tests that quota).
		e := posSetup(t, db, func(a *ServerSetup) { a.RateLimits.AuthFailures = ratelimit.Quota{Off: true} })
		other, err := e.app.Backoffice.CreateTenant(posSys(), "Outra Rede", nil)
		require.NoError(t, err)
		otherPOS, err := e.app.Backoffice.CreateClient(posSys(), other.ID, apiclient.KindPos, "caixa da outra", nil)
		require.NoError(t, err)
		oauth, err := e.app.Backoffice.CreateClient(posSys(), e.tenantID, apiclient.KindOauth, "integração", nil)
		require.NoError(t, err)
		rotated, err := e.app.Backoffice.CreateClient(posSys(), e.tenantID, apiclient.KindPos, "caixa 2", nil)
		require.NoError(t, err)
		renewed, err := e.app.Backoffice.RotateClient(posSys(), rotated.Client.ID)
		require.NoError(t, err)
		require.NotEqual(t, rotated.Secret, renewed.Secret)
		token, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
			GrantType: "client_credentials", ClientID: oauth.Client.ID, ClientSecret: oauth.Secret,
		})
		require.NoError(t, err)

		for _, route := range posRoutes() {
			name := posOr(route.method, http.MethodPost) + " " + route.path
			t.Run(name, func(t *testing.T) {
				refused := []struct {
					name string
					q    posReq
				}{
					{"no credentials", posReq{noAuth: true}},
					{"unknown client", posReq{creds: &[2]string{"cli_unknown", e.secret}}},
					{"wrong secret", posReq{creds: &[2]string{e.clientID, e.secret + "x"}}},
					{"empty secret", posReq{creds: &[2]string{e.clientID, ""}}},
					{"revoked secret (rotated)", posReq{creds: &[2]string{rotated.Client.ID, rotated.Secret}}},
					{"another tenant's POS client", posReq{creds: &[2]string{otherPOS.Client.ID, otherPOS.Secret}}},
					{"an OAuth client of the tenant", posReq{creds: &[2]string{oauth.Client.ID, oauth.Secret}}},
					{"a bearer token", posReq{noAuth: true, headers: []string{"Authorization", "Bearer " + token.AccessToken}}},
					{"not base64", posReq{noAuth: true, headers: []string{"Authorization", "Basic %%%"}}},
					{"a client id that is not UTF-8", posReq{creds: &[2]string{"cli_\xff\xfe", e.secret}}},
					{"a client id with NUL", posReq{creds: &[2]string{"cli_\x00", e.secret}}},
				}
				var first []byte
				for _, c := range refused {
					q := c.q
					q.method, q.path, q.body = route.method, route.path, route.body
					r := e.posDo(t, q)
					posRequireProblem(t, r, http.StatusUnauthorized, "unauthorized")
					if first == nil {
						first = r.body
					}
					require.Equal(t, string(first), string(r.body), "%s: every refusal has the same body", c.name)
				}

				// The renewed secret of the rotated client works.
				q := route
				q.creds = &[2]string{rotated.Client.ID, renewed.Secret}
				r := e.posDo(t, q)
				require.Less(t, r.status, 500, "%s", r.body)
				require.NotEqual(t, http.StatusUnauthorized, r.status, "%s", r.body)

				// tenantId is checked first: 400 even without credentials.
				for _, bad := range []string{"not-a-uuid", "12345", "{" + e.tenantID + "}", "urn:uuid:" + e.tenantID, e.tenantID + "0"} {
					for _, noAuth := range []bool{true, false} {
						q := route
						q.tenant, q.noAuth = bad, noAuth
						r := e.posDo(t, q)
						posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "tenantId")
					}
				}
				// An upper-case UUID is the same tenant.
				q = route
				q.tenant = strings.ToUpper(e.tenantID)
				r = e.posDo(t, q)
				require.NotEqual(t, http.StatusUnauthorized, r.status, "%s", r.body)
				require.NotEqual(t, http.StatusBadRequest, r.status, "%s", r.body)

				// Credentials of tenant A on tenant B's path: 401.
				q = route
				q.tenant = other.ID
				posRequireProblem(t, e.posDo(t, q), http.StatusUnauthorized, "unauthorized")
				// Genuine credentials on the path of a tenant that does not
				// exist: 404 (TestPOSTenantChecks walks the whole order).
				q.tenant = "9b2f5a3e-0c1d-4e7f-8a9b-0c1d2e3f4a5b"
				posRequireProblem(t, e.posDo(t, q), http.StatusNotFound, "tenant-not-found")
			})
		}

		t.Run("inactive tenant", func(t *testing.T) {
			e.posSettings(t, backoffice.TenantSettings{Active: posBool(false)})
			defer e.posSettings(t, backoffice.TenantSettings{Active: posBool(true)})
			for _, route := range posRoutes() {
				r := e.posDo(t, route)
				posRequireProblem(t, r, http.StatusNotFound, "tenant-not-found")
				// The credentials are checked before the tenant's state.
				q := route
				q.creds = &[2]string{e.clientID, "wrong"}
				posRequireProblem(t, e.posDo(t, q), http.StatusUnauthorized, "unauthorized")
				q = route
				q.body = "not json"
				posRequireProblem(t, e.posDo(t, q), http.StatusNotFound, "tenant-not-found")
			}
		})
	})
}

func posOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestPOSProblems(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		const corr = "2f0c6d0e-8f43-4c57-9a1e-5b8a1d0c7e11"

		t.Run("correlation id echoed in header and body", func(t *testing.T) {
			r := e.posPost(t, "/customers/identify", map[string]any{"sessionId": "s"}, "X-Correlation-Id", corr)
			m := posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer")
			require.Equal(t, corr, m["correlationId"])
			require.Equal(t, corr, r.header.Get("X-Correlation-Id"))

			r = e.posDo(t, posReq{path: "/customers/identify", body: "{}", noAuth: true, headers: []string{"X-Correlation-Id", corr}})
			posRequireProblem(t, r, http.StatusUnauthorized, "unauthorized")
			r = e.posDo(t, posReq{path: "/customers/identify", tenant: "x", body: "{}", headers: []string{"X-Correlation-Id", corr}})
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "tenantId")

			r = e.posPost(t, "/customers/identify", posIdentifyBody("s", posCPF(), "CPF"), "X-Correlation-Id", corr)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, corr, r.header.Get("X-Correlation-Id"), "echoed on success too")

			r = e.posPost(t, "/customers/identify", map[string]any{"sessionId": "s"})
			m = posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer")
			require.NotContains(t, m, "correlationId", "only when the caller sent one")
			require.Empty(t, r.header.Get("X-Correlation-Id"))
		})

		t.Run("404 and 405 inside the POS paths", func(t *testing.T) {
			for _, path := range []string{"/unknown", "/customers", "/customers/identify/x", "/discounts", "/sales/1/items"} {
				r := e.posDo(t, posReq{path: path, body: "{}", headers: []string{"X-Correlation-Id", corr}})
				posRequireProblem(t, r, http.StatusNotFound, "resource-not-found")
			}
			for _, c := range []struct {
				q     posReq
				allow string // RFC 9110 §15.5.6: the methods the path serves
			}{
				{posReq{method: http.MethodGet, path: "/customers/identify"}, "POST"},
				{posReq{method: http.MethodPut, path: "/sales", body: "{}"}, "POST"},
				{posReq{method: http.MethodDelete, path: "/sales/1"}, "GET"},
				{posReq{method: http.MethodGet, path: "/discounts/authorize"}, "POST"},
				{posReq{method: http.MethodPatch, path: "/discounts/authorizations", body: "{}"}, "POST"},
			} {
				r := e.posDo(t, c.q)
				posRequireProblem(t, r, http.StatusMethodNotAllowed, "method-not-allowed")
				require.Equal(t, c.allow, r.header.Get("Allow"), "%s %s", c.q.method, c.q.path)
			}
		})

		t.Run("415 for a body that is not JSON", func(t *testing.T) {
			for _, route := range posRoutes()[:4] {
				for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "-", "application/json;;"} {
					q := route
					q.contentType = ct
					posRequireProblem(t, e.posDo(t, q), http.StatusUnsupportedMediaType, "unsupported-media-type")
				}
				q := route
				q.contentType = "application/json; charset=utf-8"
				r := e.posDo(t, q)
				require.Less(t, r.status, 300, "%s", r.body)
			}
		})

		t.Run("413 for a body over 2 MiB", func(t *testing.T) {
			for _, route := range posRoutes()[:4] {
				raw, err := json.Marshal(route.body)
				require.NoError(t, err)
				big := append(raw[:len(raw)-1:len(raw)-1], []byte(`,"padding":"`+strings.Repeat("x", 2<<20)+`"}`)...)
				q := route
				q.body = big
				posRequireProblem(t, e.posDo(t, q), http.StatusRequestEntityTooLarge, "payload-too-large")
				// White space counts as well.
				q.body = append(bytes.Repeat([]byte(" "), 2<<20), raw...)
				posRequireProblem(t, e.posDo(t, q), http.StatusRequestEntityTooLarge, "payload-too-large")
			}
		})

		t.Run("a sale of 1,000 items up to 2 MiB fits", func(t *testing.T) {
			body := posSaleBody(posN("4242"), nil)
			items := make([]any, 1000)
			for i := range items {
				items[i] = map[string]any{"id": strconv.Itoa(i + 1), "gtin": posGTINA, "description": strings.Repeat("d", 1500),
					"unitPrice": posN("0.10"), "quantity": posN("1"), "discounts": []any{}}
			}
			posSet(body, "sale.items", items)
			posSet(body, "sale.amount", posN("100.00"))
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			require.Greater(t, len(raw), 3<<19, "over 1.5 MiB")
			require.Less(t, len(raw), 2<<20)
			items0 := e.posCount(t, "sale_items")
			r := e.posPost(t, "/sales", raw)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			require.Equal(t, items0+1000, e.posCount(t, "sale_items"))
		})

		t.Run("NUL in a string is refused, not stored", func(t *testing.T) {
			for _, raw := range []string{
				`{"protocol":"PARTNER_V1","sale":{"id":1,"store":{"id":"LJ001\u0000","posId":"1"}}}`,
				strings.Replace(string(posJSON(t, posSaleBody(posN("4343"), nil))), `"Arroz 5 kg"`, `"Arroz\u00005 kg"`, 1),
				strings.Replace(string(posJSON(t, posSaleBody(posN("4344"), nil))), `"PDV-01"`, `"PDV\u0000"`, 1),
			} {
				posRequireProblem(t, e.posPost(t, "/sales", raw), http.StatusBadRequest, "validation-error")
			}
			r := e.posPost(t, "/customers/identify", `{"sessionId":"a\u0000","customer":{"id":"52998224725","type":"CPF"}}`)
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error")
			// An escaped backslash followed by u0000 is text, not NUL.
			body := strings.Replace(string(posJSON(t, posSaleBody(posN("4345"), nil))), `"Arroz 5 kg"`, `"Arroz \\u0000"`, 1)
			r = e.posPost(t, "/sales", body)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		})
	})
}
