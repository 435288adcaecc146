package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

func TestWebhookScopes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := whkSetup(t, db)
		ep := e.whkCreate(t, whkBody("https://hooks.example.com/in", "sale.processed"))
		id := ep["id"].(string)
		dlv := whkSeedDeliveries(t, e, id, 1)[0]
		readOnly := e.tenantToken(t, e.tenantID, whkRead)
		writeOnly := e.tenantToken(t, e.tenantID, whkWrite)
		other := e.tenantToken(t, e.tenantID, "customers:read", "customers:write", "campaigns:read", "campaigns:write", "loyalty:read", "loyalty:write")
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
		stranger := e.tenantToken(t, e.newTenant(t, "Outra Loja"), whkRead, whkWrite)

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
		require.ElementsMatch(t, []string{"id", "secret", "previous_secret_expires_at"}, sortedKeys(m))
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
				"last_error", "next_attempt_at", "completed_at", "created_at", "attempt_log"}, sortedKeys(d))
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
