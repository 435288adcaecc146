package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The tests of /v1/webhooks: a real server over a real database with tokens
// of the real token service. Helpers are prefixed with whk: the package has
// other fixtures.

const (
	whkRead  = "webhooks:read"
	whkWrite = "webhooks:write"
)

// whkEnv is the test environment with a token of its tenant holding both
// webhook scopes.
type whkEnv struct {
	*TestEnv
	token string
}

// whkSetup starts a server; configure runs before it serves.
func whkSetup(t *testing.T, db *storage.DB, configure ...func(*ServerSetup)) *whkEnv {
	t.Helper()
	e := &whkEnv{TestEnv: newTestEnv(t, db, configure...)}
	e.token = e.tokenFor(t, whkRead, whkWrite)
	return e
}

func (e *whkEnv) whkTenant(t *testing.T, name string) string {
	t.Helper()
	tn, err := e.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), name, nil)
	require.NoError(t, err)
	return tn.ID
}

// whkToken returns a token of a new OAuth client of tenantID holding
// exactly scopes.
func (e *whkEnv) whkToken(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	c, err := e.app.Backoffice.CreateClient(viewer.SystemContext(context.Background()), tenantID, apiclient.KindOauth, "webhooks test", nil)
	require.NoError(t, err)
	tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret, Scope: strings.Join(scopes, " "),
	})
	require.NoError(t, err)
	return tok.AccessToken
}

type whkResp struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as one JSON object.
func (r whkResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// whkDo sends body (nil: none; string: as is; else its JSON) with token.
func (e *whkEnv) whkDo(t *testing.T, method, path, token string, body any) whkResp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return whkResp{status: res.StatusCode, header: res.Header, body: b}
}

// whkCreate registers an endpoint and returns the 201 body.
func (e *whkEnv) whkCreate(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.whkDo(t, http.MethodPost, "/v1/webhooks", e.token, body)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	return r.obj(t)
}

// whkEndpointKeys are the keys of the endpoint JSON.
var whkEndpointKeys = []string{"id", "url", "events", "description", "active", "created_at", "updated_at", "previous_secret_expires_at"}

// whkRequireEndpoint checks that m is an endpoint without its secret.
func whkRequireEndpoint(t *testing.T, m map[string]any) {
	t.Helper()
	require.ElementsMatch(t, whkEndpointKeys, whkKeys(m))
	for _, k := range []string{"created_at", "updated_at"} {
		whkRequireTime(t, m[k])
	}
}

// whkRequireTime checks an RFC 3339 time in UTC.
func whkRequireTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	require.Truef(t, ok, "%v is not a string", v)
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(s, "Z"), s)
	return tm
}

// whkRequireNoSecret checks that a body carries no signing secret.
func whkRequireNoSecret(t *testing.T, body []byte, secrets ...string) {
	t.Helper()
	require.NotContains(t, string(body), `"secret"`)
	require.NotContains(t, string(body), "whsec_")
	for _, s := range secrets {
		require.NotContains(t, string(body), s)
	}
}

func whkBody(url string, events ...string) map[string]any {
	return map[string]any{"url": url, "events": events}
}

func TestWebhookEndpointsCRUD(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		before := time.Now().Add(-time.Second)

		created := e.whkCreate(t, map[string]any{
			"url": "https://hooks.example.com/fideliza", "events": []string{"sale.processed", "customer.level_changed", "sale.processed"},
			"description": "ERP", "active": false,
		})
		id, _ := created["id"].(string)
		require.True(t, strings.HasPrefix(id, "whk_"), id)
		secret, _ := created["secret"].(string)
		require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
		delete(created, "secret")
		whkRequireEndpoint(t, created)
		require.Equal(t, "https://hooks.example.com/fideliza", created["url"])
		require.Equal(t, []any{"customer.level_changed", "sale.processed"}, created["events"], "sorted, without duplicates")
		require.Equal(t, "ERP", created["description"])
		require.Equal(t, false, created["active"])
		require.Nil(t, created["previous_secret_expires_at"])
		require.True(t, whkRequireTime(t, created["created_at"]).After(before))

		// Only url and events are required: active defaults to true.
		second := e.whkCreate(t, whkBody("https://other.example.com/hook", "points.expiring"))
		require.Equal(t, true, second["active"])
		require.Equal(t, "", second["description"])

		t.Run("create answers its location", func(t *testing.T) {
			r := e.whkDo(t, http.MethodPost, "/v1/webhooks", e.token, whkBody("https://third.example.com/", "campaign.activated"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Equal(t, "/v1/webhooks/"+r.obj(t)["id"].(string), r.header.Get("Location"))
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			r = e.whkDo(t, http.MethodDelete, r.header.Get("Location"), e.token, nil)
			require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
		})

		t.Run("list and get never show the secret", func(t *testing.T) {
			r := e.whkDo(t, http.MethodGet, "/v1/webhooks", e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			whkRequireNoSecret(t, r.body, secret)
			var list struct {
				Data []map[string]any `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &list))
			require.Len(t, list.Data, 2)
			require.Equal(t, id, list.Data[0]["id"], "oldest first")
			require.Equal(t, second["id"], list.Data[1]["id"])
			for _, m := range list.Data {
				whkRequireEndpoint(t, m)
			}

			r = e.whkDo(t, http.MethodGet, "/v1/webhooks/"+id, e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			whkRequireNoSecret(t, r.body, secret)
			got := r.obj(t)
			whkRequireEndpoint(t, got)
			require.Equal(t, created, got)
		})

		t.Run("patch", func(t *testing.T) {
			path := "/v1/webhooks/" + id
			steps := []struct {
				name  string
				body  any
				check func(t *testing.T, m map[string]any)
			}{
				{"one field changes, the others stay", map[string]any{"active": true}, func(t *testing.T, m map[string]any) {
					require.Equal(t, true, m["active"])
					require.Equal(t, "ERP", m["description"])
					require.Equal(t, "https://hooks.example.com/fideliza", m["url"])
					require.Equal(t, []any{"customer.level_changed", "sale.processed"}, m["events"])
				}},
				{"url and events", map[string]any{"url": " https://new.example.com/in ", "events": []string{"points.expiring"}}, func(t *testing.T, m map[string]any) {
					require.Equal(t, "https://new.example.com/in", m["url"], "trimmed")
					require.Equal(t, []any{"points.expiring"}, m["events"])
					require.Equal(t, true, m["active"])
				}},
				{"null clears the description", `{"description": null}`, func(t *testing.T, m map[string]any) {
					require.Equal(t, "", m["description"])
					require.Equal(t, "https://new.example.com/in", m["url"])
				}},
				{"an empty patch changes nothing", `{}`, func(t *testing.T, m map[string]any) {
					require.Equal(t, "", m["description"])
					require.Equal(t, []any{"points.expiring"}, m["events"])
				}},
			}
			for _, s := range steps {
				t.Run(s.name, func(t *testing.T) {
					r := e.whkDo(t, http.MethodPatch, path, e.token, s.body)
					require.Equal(t, http.StatusOK, r.status, "%s", r.body)
					whkRequireNoSecret(t, r.body, secret)
					m := r.obj(t)
					whkRequireEndpoint(t, m)
					s.check(t, m)
					got := e.whkDo(t, http.MethodGet, path, e.token, nil)
					require.Equal(t, m, got.obj(t), "the answer is what is stored")
				})
			}
		})

		t.Run("delete", func(t *testing.T) {
			path := "/v1/webhooks/" + second["id"].(string)
			r := e.whkDo(t, http.MethodDelete, path, e.token, nil)
			require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
			require.Empty(t, r.body)
			for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPatch} {
				var body any
				if method == http.MethodPatch {
					body = `{"active": false}`
				}
				r = e.whkDo(t, method, path, e.token, body)
				require.Equal(t, http.StatusNotFound, r.status, "%s %s", method, r.body)
				require.Equal(t, "not_found", r.obj(t)["error"])
			}
			r = e.whkDo(t, http.MethodGet, "/v1/webhooks", e.token, nil)
			require.NotContains(t, string(r.body), second["id"])
		})

		t.Run("unknown id", func(t *testing.T) {
			r := e.whkDo(t, http.MethodGet, "/v1/webhooks/whk_00000000000000000000000000", e.token, nil)
			require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
			require.Equal(t, map[string]any{"error": "not_found", "message": "webhook endpoint not found"}, r.obj(t))
		})
	})
}

func TestWebhookValidation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 501)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		ep := e.whkCreate(t, whkBody("https://hooks.example.com/ok", "sale.processed"))
		cases := []struct {
			name   string
			method string // POST (create) or PATCH (of ep)
			body   any
			field  string
			status int // 422 unless set
		}{
			{"not a URL", http.MethodPost, whkBody("not a url", "sale.processed"), "url", 0},
			{"relative URL", http.MethodPost, whkBody("/hooks", "sale.processed"), "url", 0},
			{"http URL", http.MethodPost, whkBody("http://hooks.example.com/in", "sale.processed"), "url", 0},
			{"private IP", http.MethodPost, whkBody("https://10.0.0.1/in", "sale.processed"), "url", 0},
			{"cloud metadata address", http.MethodPost, whkBody("https://169.254.169.254/latest/meta-data", "sale.processed"), "url", 0},
			{"loopback", http.MethodPost, whkBody("https://127.0.0.1:8443/in", "sale.processed"), "url", 0},
			{"localhost", http.MethodPost, whkBody("https://localhost/in", "sale.processed"), "url", 0},
			{"credentials", http.MethodPost, whkBody("https://user:pw@hooks.example.com/in", "sale.processed"), "url", 0},
			{"unknown event type", http.MethodPost, whkBody("https://hooks.example.com/in", "sale.processed", "sale.exploded"), "events", 0},
			{"empty events", http.MethodPost, whkBody("https://hooks.example.com/in"), "events", 0},
			{"missing url", http.MethodPost, map[string]any{"events": []string{"sale.processed"}}, "url", 0},
			{"missing events", http.MethodPost, map[string]any{"url": "https://hooks.example.com/in"}, "events", 0},
			{"description too long", http.MethodPost, map[string]any{"url": "https://hooks.example.com/in", "events": []string{"sale.processed"}, "description": long}, "description", 0},
			{"events not an array", http.MethodPost, `{"url":"https://hooks.example.com/in","events":"sale.processed"}`, "events", 0},
			{"active not a boolean", http.MethodPost, `{"url":"https://hooks.example.com/in","events":["sale.processed"],"active":"yes"}`, "active", 0},
			{"malformed JSON", http.MethodPost, `{"url":`, "", http.StatusBadRequest},
			{"patch: private IP", http.MethodPatch, map[string]any{"url": "https://10.0.0.1/"}, "url", 0},
			{"patch: http URL", http.MethodPatch, map[string]any{"url": "http://hooks.example.com/"}, "url", 0},
			{"patch: empty events", http.MethodPatch, map[string]any{"events": []string{}}, "events", 0},
			{"patch: unknown event type", http.MethodPatch, map[string]any{"events": []string{"nope"}}, "events", 0},
			{"patch: null url", http.MethodPatch, `{"url": null}`, "url", 0},
			{"patch: null events", http.MethodPatch, `{"events": null}`, "events", 0},
			{"patch: null active", http.MethodPatch, `{"active": null}`, "active", 0},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				path := "/v1/webhooks"
				if c.method == http.MethodPatch {
					path += "/" + ep["id"].(string)
				}
				r := e.whkDo(t, c.method, path, e.token, c.body)
				want := c.status
				if want == 0 {
					want = http.StatusUnprocessableEntity
				}
				require.Equal(t, want, r.status, "%s", r.body)
				m := r.obj(t)
				if want == http.StatusBadRequest {
					require.Equal(t, "invalid_json", m["error"])
					return
				}
				require.Equal(t, "validation_error", m["error"], "%s", r.body)
				require.Equal(t, c.field, m["field"], "%s", r.body)
				require.NotEmpty(t, m["message"])
				details, _ := m["details"].([]any)
				require.NotEmpty(t, details, "%s", r.body)
				require.Equal(t, c.field, details[0].(map[string]any)["field"])
			})
		}
		t.Run("nothing was stored or changed", func(t *testing.T) {
			r := e.whkDo(t, http.MethodGet, "/v1/webhooks", e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var list struct {
				Data []map[string]any `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &list))
			require.Len(t, list.Data, 1)
			want := whkCopy(ep)
			delete(want, "secret")
			require.Equal(t, want, list.Data[0])
		})
	})
}

// whkCopy returns a shallow copy of m.
func whkCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// whkKeys returns the keys of m.
func whkKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestWebhookLoopbackGuard: plain http and loopback addresses are accepted
// only where the operator's guard allows loopback.
func TestWebhookLoopbackGuard(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db, func(a *ServerSetup) { a.WebhookGuard = webhook.Guard{AllowLoopback: true} })
		for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost:9000/in", "https://[::1]/in"} {
			r := e.whkDo(t, http.MethodPost, "/v1/webhooks", e.token, whkBody(u, "sale.processed"))
			require.Equal(t, http.StatusCreated, r.status, "%s: %s", u, r.body)
			require.Equal(t, u, r.obj(t)["url"])
		}
		// Loopback does not open private ranges.
		for _, u := range []string{"http://10.0.0.1/in", "https://169.254.169.254/"} {
			r := e.whkDo(t, http.MethodPost, "/v1/webhooks", e.token, whkBody(u, "sale.processed"))
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", u, r.body)
			require.Equal(t, "url", r.obj(t)["field"])
		}
	})
}

// TestWebhookRefusalSaysWhy: without the operator's loopback allowance, a
// loopback URL is refused as loopback and the answer names the flag that
// allows it in development; a private address is refused as not public,
// and plain http elsewhere for its scheme.
func TestWebhookRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		for _, tc := range []struct{ url, want string }{
			{"http://127.0.0.1:9000/hook", "127.0.0.1 is a loopback address"},
			{"https://127.0.0.1/hook", "127.0.0.1 is a loopback address"},
			{"http://localhost:9000/hook", "localhost is a loopback address"},
			{"https://[::1]/hook", "::1 is a loopback address"},
			{"http://10.0.0.1/hook", "10.0.0.1 is not a public address"},
			{"http://hooks.fideliza.invalid/in", "must use https"},
		} {
			r := e.whkDo(t, http.MethodPost, "/v1/webhooks", e.token, whkBody(tc.url, "sale.processed"))
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", tc.url, r.body)
			body := r.obj(t)
			require.Equal(t, "url", body["field"])
			require.Contains(t, body["message"], tc.want, tc.url)
			if strings.Contains(tc.want, "loopback") {
				require.Contains(t, body["message"], "--webhook-allow-loopback", tc.url)
			} else {
				require.NotContains(t, body["message"], "--webhook-allow-loopback", "%s: the flag would not help", tc.url)
			}
		}
	})
}

func TestWebhookScopes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		ep := e.whkCreate(t, whkBody("https://hooks.example.com/in", "sale.processed"))
		id := ep["id"].(string)
		dlv := whkSeedDeliveries(t, e, id, 1)[0]
		readOnly := e.whkToken(t, e.tenantID, whkRead)
		writeOnly := e.whkToken(t, e.tenantID, whkWrite)
		other := e.whkToken(t, e.tenantID, "customers:read", "customers:write", "campaigns:read", "campaigns:write", "loyalty:read", "loyalty:write")
		create := whkBody("https://hooks.example.com/2", "sale.processed")
		cases := []struct {
			method, path string
			body         any
			scope        string
		}{
			{http.MethodPost, "/v1/webhooks", create, whkWrite},
			{http.MethodGet, "/v1/webhooks", nil, whkRead},
			{http.MethodGet, "/v1/webhooks/" + id, nil, whkRead},
			{http.MethodPatch, "/v1/webhooks/" + id, `{"description":"x"}`, whkWrite},
			{http.MethodPost, "/v1/webhooks/" + id + "/rotate-secret", nil, whkWrite},
			{http.MethodGet, "/v1/webhooks/" + id + "/deliveries", nil, whkRead},
			{http.MethodPost, "/v1/webhooks/" + id + "/deliveries/" + dlv + "/redeliver", nil, whkWrite},
			{http.MethodDelete, "/v1/webhooks/" + id, nil, whkWrite},
		}
		for _, c := range cases {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				lacking := []string{other}
				if c.scope == whkWrite {
					lacking = append(lacking, readOnly)
				} else {
					lacking = append(lacking, writeOnly)
				}
				for _, tok := range lacking {
					r := e.whkDo(t, c.method, c.path, tok, c.body)
					require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
					m := r.obj(t)
					require.Equal(t, "insufficient_scope", m["error"])
					require.Contains(t, m["error_description"], c.scope)
					require.Contains(t, r.header.Get("WWW-Authenticate"), `scope="`+c.scope+`"`)
				}
				holder := readOnly
				if c.scope == whkWrite {
					holder = writeOnly
				}
				r := e.whkDo(t, c.method, c.path, holder, c.body)
				require.Less(t, r.status, 300, "%s", r.body)
			})
		}
		n, err := db.Ent.WebhookEndpoint.Query().Count(viewer.SystemContext(context.Background()))
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the holder of webhooks:write created one, and deleted the first")
	})
}

func TestWebhookTenantIsolation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		ep := e.whkCreate(t, map[string]any{"url": "https://hooks.example.com/a", "events": []string{"sale.processed"}, "description": "A"})
		id := ep["id"].(string)
		dlv := whkSeedDeliveries(t, e, id, 1)[0]
		stranger := e.whkToken(t, e.whkTenant(t, "Outra Loja"), whkRead, whkWrite)

		// The other tenant's own endpoint and delivery.
		strangerEP := e.whkDo(t, http.MethodPost, "/v1/webhooks", stranger, whkBody("https://hooks.example.com/b", "sale.processed"))
		require.Equal(t, http.StatusCreated, strangerEP.status, "%s", strangerEP.body)

		cases := []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, "/v1/webhooks/" + id, nil},
			{http.MethodPatch, "/v1/webhooks/" + id, `{"description":"hijacked","url":"https://evil.example.com/"}`},
			{http.MethodPost, "/v1/webhooks/" + id + "/rotate-secret", nil},
			{http.MethodGet, "/v1/webhooks/" + id + "/deliveries", nil},
			{http.MethodPost, "/v1/webhooks/" + id + "/deliveries/" + dlv + "/redeliver", nil},
			{http.MethodPost, "/v1/webhooks/" + strangerEP.obj(t)["id"].(string) + "/deliveries/" + dlv + "/redeliver", nil},
			{http.MethodDelete, "/v1/webhooks/" + id, nil},
		}
		for _, c := range cases {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				r := e.whkDo(t, c.method, c.path, stranger, c.body)
				require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
				require.Equal(t, "not_found", r.obj(t)["error"])
			})
		}
		r := e.whkDo(t, http.MethodGet, "/v1/webhooks", stranger, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, string(r.body), id)

		// Nothing of the first tenant changed.
		r = e.whkDo(t, http.MethodGet, "/v1/webhooks/"+id, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		want := whkCopy(ep)
		delete(want, "secret")
		require.Equal(t, want, r.obj(t))
		d, err := db.Ent.WebhookDelivery.Get(viewer.SystemContext(context.Background()), dlv)
		require.NoError(t, err)
		require.Equal(t, webhookdelivery.StatusFailed, d.Status, "not redelivered")
	})
}

func TestWebhookRotateSecret(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		ep := e.whkCreate(t, whkBody("https://hooks.example.com/in", "sale.processed"))
		id, first := ep["id"].(string), ep["secret"].(string)

		r := e.whkDo(t, http.MethodPost, "/v1/webhooks/"+id+"/rotate-secret", e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		m := r.obj(t)
		require.ElementsMatch(t, []string{"id", "secret", "previous_secret_expires_at"}, whkKeys(m))
		require.Equal(t, id, m["id"])
		second, _ := m["secret"].(string)
		require.True(t, strings.HasPrefix(second, "whsec_"), second)
		require.NotEqual(t, first, second)
		exp := whkRequireTime(t, m["previous_secret_expires_at"])
		require.WithinDuration(t, time.Now().Add(webhooks.PreviousSecretValidity), exp, time.Minute)

		stored, err := db.Ent.WebhookEndpoint.Get(viewer.SystemContext(context.Background()), id)
		require.NoError(t, err)
		require.Equal(t, second, stored.Secret)
		require.Equal(t, first, *stored.PreviousSecret)

		r = e.whkDo(t, http.MethodGet, "/v1/webhooks/"+id, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		whkRequireNoSecret(t, r.body, first, second)
		require.Equal(t, m["previous_secret_expires_at"], r.obj(t)["previous_secret_expires_at"])

		r = e.whkDo(t, http.MethodPost, "/v1/webhooks/whk_00000000000000000000000000/rotate-secret", e.token, nil)
		require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	})
}

// whkSeedDeliveries stores n failed deliveries of n events to endpointID,
// each with two attempts, and returns their ids.
func whkSeedDeliveries(t *testing.T, e *whkEnv, endpointID string, n int) []string {
	t.Helper()
	ctx := viewer.TenantContext(context.Background(), e.tenantID)
	c := e.db.Ent
	ids := make([]string, 0, n)
	for i := range n {
		evt, err := c.Event.Create().SetType("sale.processed").SetSubjectID("sal_x").
			SetData(map[string]any{"sale_id": "sal_x", "n": i}).Save(ctx)
		require.NoError(t, err)
		done := time.Now().UTC().Truncate(time.Microsecond)
		d, err := c.WebhookDelivery.Create().SetEndpointID(endpointID).SetEventID(evt.ID).SetEventType(evt.Type).
			SetStatus(webhookdelivery.StatusFailed).SetAttempts(2).SetLastStatusCode(503).SetLastError("HTTP 503").
			SetCompletedAt(done).Save(ctx)
		require.NoError(t, err)
		_, err = c.WebhookAttempt.Create().SetDeliveryID(d.ID).SetAttemptedAt(done.Add(-time.Minute)).
			SetError("connection refused").SetLatencyMs(3).Save(ctx)
		require.NoError(t, err)
		_, err = c.WebhookAttempt.Create().SetDeliveryID(d.ID).SetAttemptedAt(done).SetStatusCode(503).
			SetLatencyMs(120).SetResponseExcerpt("unavailable").Save(ctx)
		require.NoError(t, err)
		ids = append(ids, d.ID)
	}
	return ids
}

func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		id := e.whkCreate(t, whkBody("https://hooks.example.com/in", "sale.processed"))["id"].(string)
		otherID := e.whkCreate(t, whkBody("https://hooks.example.com/other", "sale.processed"))["id"].(string)
		ids := whkSeedDeliveries(t, e, id, 5)
		otherDlv := whkSeedDeliveries(t, e, otherID, 1)[0]
		path := "/v1/webhooks/" + id + "/deliveries"

		type page struct {
			Data       []map[string]any `json:"data"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
				HasMore    bool    `json:"has_more"`
				Total      int     `json:"total"`
			} `json:"pagination"`
		}
		get := func(t *testing.T, query url.Values) page {
			t.Helper()
			r := e.whkDo(t, http.MethodGet, path+"?"+query.Encode(), e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var p page
			require.NoError(t, json.Unmarshal(r.body, &p))
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(r.body, &raw))
			require.Len(t, raw, 2, "data and pagination: %s", r.body)
			return p
		}

		t.Run("pages, newest first", func(t *testing.T) {
			var seen []string
			q := url.Values{"limit": {"2"}}
			for range 5 {
				p := get(t, q)
				require.Equal(t, 5, p.Pagination.Total)
				for _, d := range p.Data {
					seen = append(seen, d["id"].(string))
				}
				if !p.Pagination.HasMore {
					require.Nil(t, p.Pagination.NextCursor)
					break
				}
				require.Len(t, p.Data, 2)
				require.NotNil(t, p.Pagination.NextCursor)
				q.Set("cursor", *p.Pagination.NextCursor)
			}
			want := slices.Clone(ids)
			slices.Sort(want)
			slices.Reverse(want)
			require.Equal(t, want, seen)
			require.NotContains(t, seen, otherDlv)
		})

		t.Run("a delivery with its attempt log", func(t *testing.T) {
			p := get(t, url.Values{"limit": {"1"}})
			require.Len(t, p.Data, 1)
			d := p.Data[0]
			require.ElementsMatch(t, []string{"id", "event_id", "event_type", "status", "attempts", "last_status_code",
				"last_error", "next_attempt_at", "completed_at", "created_at", "attempt_log"}, whkKeys(d))
			require.True(t, strings.HasPrefix(d["event_id"].(string), "evt_"), d["event_id"])
			require.Equal(t, "sale.processed", d["event_type"])
			require.Equal(t, "failed", d["status"])
			require.Equal(t, 2.0, d["attempts"])
			require.Equal(t, 503.0, d["last_status_code"])
			require.Equal(t, "HTTP 503", d["last_error"])
			require.Nil(t, d["next_attempt_at"])
			whkRequireTime(t, d["completed_at"])
			whkRequireTime(t, d["created_at"])
			log := d["attempt_log"].([]any)
			require.Len(t, log, 2)
			a0, a1 := log[0].(map[string]any), log[1].(map[string]any)
			require.True(t, whkRequireTime(t, a0["attempted_at"]).Before(whkRequireTime(t, a1["attempted_at"])), "oldest first")
			require.Equal(t, map[string]any{"attempted_at": a0["attempted_at"], "status_code": nil, "latency_ms": 3.0,
				"error": "connection refused", "response_excerpt": ""}, a0)
			require.Equal(t, map[string]any{"attempted_at": a1["attempted_at"], "status_code": 503.0, "latency_ms": 120.0,
				"error": nil, "response_excerpt": "unavailable"}, a1)
		})

		t.Run("empty log", func(t *testing.T) {
			fresh := e.whkCreate(t, whkBody("https://hooks.example.com/fresh", "sale.processed"))["id"].(string)
			r := e.whkDo(t, http.MethodGet, "/v1/webhooks/"+fresh+"/deliveries", e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.JSONEq(t, `{"data":[],"pagination":{"next_cursor":null,"has_more":false,"total":0}}`, string(r.body))
		})

		errs := []struct {
			name, query, field string
		}{
			{"limit zero", "limit=0", "limit"},
			{"limit too big", "limit=101", "limit"},
			{"limit not a number", "limit=abc", "limit"},
			{"cursor of nothing", "cursor=garbage", "cursor"},
			{"cursor of another list", "cursor=" + url.QueryEscape(whkCursorOf(t, "cus_00000000000000000000000000")), "cursor"},
		}
		for _, c := range errs {
			t.Run(c.name, func(t *testing.T) {
				r := e.whkDo(t, http.MethodGet, path+"?"+c.query, e.token, nil)
				require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
				m := r.obj(t)
				require.Equal(t, "validation_error", m["error"])
				require.Equal(t, c.field, m["field"])
			})
		}
		t.Run("unknown endpoint", func(t *testing.T) {
			r := e.whkDo(t, http.MethodGet, "/v1/webhooks/whk_00000000000000000000000000/deliveries", e.token, nil)
			require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
			require.Equal(t, "not_found", r.obj(t)["error"])
		})
	})
}

// whkCursorOf renders a next_cursor naming id, as a list keyed by ids does.
func whkCursorOf(t *testing.T, id string) string {
	t.Helper()
	var b strings.Builder
	ent.Cursor{ID: id}.MarshalGQL(&b)
	c, err := strconv.Unquote(b.String())
	require.NoError(t, err)
	return c
}

func TestWebhookRedeliver(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		id := e.whkCreate(t, whkBody("https://hooks.example.com/in", "sale.processed"))["id"].(string)
		otherID := e.whkCreate(t, whkBody("https://hooks.example.com/other", "sale.processed"))["id"].(string)
		dlv := whkSeedDeliveries(t, e, id, 1)[0]
		otherDlv := whkSeedDeliveries(t, e, otherID, 1)[0]
		sys := viewer.SystemContext(context.Background())

		t.Run("a known delivery is sent again", func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			r := e.whkDo(t, http.MethodPost, "/v1/webhooks/"+id+"/deliveries/"+dlv+"/redeliver", e.token, nil)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			m := r.obj(t)
			require.Equal(t, dlv, m["id"])
			require.Equal(t, "pending", m["status"])
			require.Nil(t, m["completed_at"])
			require.True(t, whkRequireTime(t, m["next_attempt_at"]).After(before))
			require.Len(t, m["attempt_log"], 2, "the earlier attempts are kept")

			d, err := db.Ent.WebhookDelivery.Get(sys, dlv)
			require.NoError(t, err)
			require.Equal(t, webhookdelivery.StatusPending, d.Status)
			require.Nil(t, d.CompletedAt)
			var queued int
			require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = $1`, jobs.DeliverWebhook{}.Kind()).Scan(&queued))
			require.Equal(t, 1, queued, "a delivery job is queued")
		})

		notFound := []struct{ name, path string }{
			{"unknown delivery", "/v1/webhooks/" + id + "/deliveries/dlv_00000000000000000000000000/redeliver"},
			{"a delivery of another endpoint", "/v1/webhooks/" + id + "/deliveries/" + otherDlv + "/redeliver"},
			{"unknown endpoint", "/v1/webhooks/whk_00000000000000000000000000/deliveries/" + dlv + "/redeliver"},
		}
		for _, c := range notFound {
			t.Run(c.name, func(t *testing.T) {
				r := e.whkDo(t, http.MethodPost, c.path, e.token, nil)
				require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
				require.Equal(t, "not_found", r.obj(t)["error"])
			})
		}
		d, err := db.Ent.WebhookDelivery.Get(sys, otherDlv)
		require.NoError(t, err)
		require.Equal(t, webhookdelivery.StatusFailed, d.Status, "the other endpoint's delivery is untouched")

		t.Run("deleting the endpoint removes its log", func(t *testing.T) {
			r := e.whkDo(t, http.MethodDelete, "/v1/webhooks/"+id, e.token, nil)
			require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
			n, err := db.Ent.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(id)).Count(sys)
			require.NoError(t, err)
			require.Zero(t, n)
		})
	})
}
