package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

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

// whkDo sends body (see apiBody) with token.
func (e *whkEnv) whkDo(t *testing.T, method, path, token string, body any) apiResp {
	t.Helper()
	return apiDo(t, e.srv, method, path, token, body)
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
	require.ElementsMatch(t, whkEndpointKeys, sortedKeys(m))
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
