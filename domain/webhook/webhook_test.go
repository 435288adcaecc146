package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/webhook"
)

// The published test vector of the Standard Webhooks specification.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

var vectorAt = time.Unix(vectorTimestamp, 0)

func headers(id string, at time.Time, sigs ...string) http.Header {
	h := http.Header{}
	h.Set(webhook.HeaderID, id)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(webhook.HeaderSignature, strings.Join(sigs, " "))
	return h
}

func TestSignStandardWebhooksVector(t *testing.T) {
	sig, err := webhook.Sign(vectorSecret, vectorID, vectorAt, []byte(vectorBody))
	require.NoError(t, err)
	require.Equal(t, vectorSignature, sig)
	// Only the second counts: a sub-second part changes nothing.
	sig, err = webhook.Sign(vectorSecret, vectorID, vectorAt.Add(999*time.Millisecond), []byte(vectorBody))
	require.NoError(t, err)
	require.Equal(t, vectorSignature, sig)
	require.NoError(t, webhook.Verify(vectorSecret, headers(vectorID, vectorAt, vectorSignature),
		[]byte(vectorBody), vectorAt, 5*time.Minute))
}

func TestSignRejectsBadSecrets(t *testing.T) {
	for _, secret := range []string{
		"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // no prefix
		"whsec_not base64!", "wh_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	} {
		_, err := webhook.Sign(secret, vectorID, vectorAt, []byte(vectorBody))
		require.Error(t, err, "secret %q", secret)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	require.NotEqual(t, a, b)
	for _, s := range []string{a, b} {
		require.True(t, strings.HasPrefix(s, webhook.SecretPrefix), s)
		sig, err := webhook.Sign(s, "evt_1", vectorAt, []byte("{}"))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(sig, "v1,"), sig)
	}
	require.Len(t, strings.TrimPrefix(a, webhook.SecretPrefix), 44, "base64 of 32 bytes")
}

func TestVerify(t *testing.T) {
	body := []byte(vectorBody)
	other := webhook.NewSecret()
	otherSig, err := webhook.Sign(other, vectorID, vectorAt, body)
	require.NoError(t, err)
	const tolerance = 5 * time.Minute
	tests := []struct {
		name    string
		secret  string
		h       http.Header
		body    string
		now     time.Time
		wantErr string // "" when it verifies
	}{
		{name: "the vector", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature), body: vectorBody, now: vectorAt},
		{name: "tampered body", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: `{"test": 2432232315}`, now: vectorAt, wantErr: "no signature matches"},
		{name: "body with an extra space", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody + " ", now: vectorAt, wantErr: "no signature matches"},
		{name: "tampered id", secret: vectorSecret, h: headers("msg_p5jXN8AQM9LWM0D4loKWxJel", vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "tampered timestamp", secret: vectorSecret, h: headers(vectorID, vectorAt.Add(time.Second), vectorSignature),
			body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "another secret", secret: other, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "signature without version", secret: vectorSecret,
			h: headers(vectorID, vectorAt, strings.TrimPrefix(vectorSignature, "v1,")), body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "unknown version", secret: vectorSecret,
			h: headers(vectorID, vectorAt, "v2,"+strings.TrimPrefix(vectorSignature, "v1,")), body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "rotation: new signature first", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature, otherSig),
			body: vectorBody, now: vectorAt},
		{name: "rotation: new signature second", secret: vectorSecret, h: headers(vectorID, vectorAt, otherSig, vectorSignature),
			body: vectorBody, now: vectorAt},
		{name: "rotation: verified with the other secret", secret: other, h: headers(vectorID, vectorAt, vectorSignature, otherSig),
			body: vectorBody, now: vectorAt},
		{name: "rotation: neither matches", secret: webhook.NewSecret(), h: headers(vectorID, vectorAt, vectorSignature, otherSig),
			body: vectorBody, now: vectorAt, wantErr: "no signature matches"},
		{name: "within tolerance, late", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt.Add(tolerance)},
		{name: "within tolerance, early", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt.Add(-tolerance)},
		{name: "too old", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt.Add(tolerance + time.Second), wantErr: "too far"},
		{name: "too new", secret: vectorSecret, h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt.Add(-tolerance - time.Second), wantErr: "too far"},
		{name: "missing id", secret: vectorSecret, h: headers("", vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt, wantErr: "missing"},
		{name: "missing signature", secret: vectorSecret, h: headers(vectorID, vectorAt),
			body: vectorBody, now: vectorAt, wantErr: "missing"},
		{name: "missing timestamp", secret: vectorSecret, h: func() http.Header {
			h := headers(vectorID, vectorAt, vectorSignature)
			h.Del(webhook.HeaderTimestamp)
			return h
		}(), body: vectorBody, now: vectorAt, wantErr: "missing"},
		{name: "bad timestamp", secret: vectorSecret, h: func() http.Header {
			h := headers(vectorID, vectorAt, vectorSignature)
			h.Set(webhook.HeaderTimestamp, "1614265330.5")
			return h
		}(), body: vectorBody, now: vectorAt, wantErr: "bad webhook-timestamp"},
		{name: "bad secret", secret: "not-a-secret", h: headers(vectorID, vectorAt, vectorSignature),
			body: vectorBody, now: vectorAt, wantErr: "whsec_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secret, tt.h, []byte(tt.body), tt.now, tolerance)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

// received is one request a test receiver got.
type received struct {
	method string
	header http.Header
	body   []byte
}

// receiver is an httptest server on loopback that records requests and
// answers with answer.
func receiver(t *testing.T, answer func(w http.ResponseWriter)) (*httptest.Server, chan received, *atomic.Int64) {
	t.Helper()
	got := make(chan received, 16)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method, header: r.Header.Clone(), body: body}
		answer(w)
	}))
	t.Cleanup(srv.Close)
	return srv, got, &hits
}

func envelope() webhook.Envelope {
	return webhook.Envelope{
		ID: "evt_01JTEST", Type: "sale.processed", TenantID: "ten_01JTEST",
		CreatedAt: time.Date(2026, 5, 4, 15, 0, 0, 123456000, time.UTC),
		Data:      map[string]any{"sale_id": "sal_1", "points_credited": 12.0},
	}
}

func TestSendSucceeds(t *testing.T) {
	t.Parallel()
	srv, got, _ := receiver(t, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNoContent)
	})
	secret, previous := webhook.NewSecret(), webhook.NewSecret()
	now := time.Now().Truncate(time.Second)
	s := webhook.NewSender(webhook.Guard{AllowLoopback: true})
	res := s.Send(t.Context(), webhook.Request{URL: srv.URL + "/hooks?x=1", Secrets: []string{secret, previous}, Body: envelope(), Now: now})
	require.NoError(t, res.Err)
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	require.Empty(t, res.Excerpt)
	require.Positive(t, res.Latency)

	r := <-got
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, "evt_01JTEST", r.header.Get(webhook.HeaderID))
	require.Equal(t, strconv.FormatInt(now.Unix(), 10), r.header.Get(webhook.HeaderTimestamp))
	require.Len(t, strings.Fields(r.header.Get(webhook.HeaderSignature)), 2, "one signature per secret")
	require.NoError(t, webhook.Verify(secret, r.header, r.body, now, 5*time.Minute))
	require.NoError(t, webhook.Verify(previous, r.header, r.body, now, 5*time.Minute))
	require.Error(t, webhook.Verify(webhook.NewSecret(), r.header, r.body, now, 5*time.Minute))

	var env webhook.Envelope
	require.NoError(t, json.Unmarshal(r.body, &env))
	require.Equal(t, envelope(), env)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(r.body, &raw))
	require.ElementsMatch(t, []string{"id", "type", "tenant_id", "created_at", "data"}, keys(raw))
	require.Equal(t, "2026-05-04T15:00:00.123456Z", raw["created_at"])
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSendAny2xxSucceeds(t *testing.T) {
	t.Parallel()
	for _, code := range []int{200, 201, 202, 204, 299} {
		srv, _, _ := receiver(t, func(w http.ResponseWriter) {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "ok")
		})
		res := webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
			URL: srv.URL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
		})
		require.NoError(t, res.Err, "status %d", code)
		require.Equal(t, code, res.StatusCode)
		if code != http.StatusNoContent {
			require.Equal(t, "ok", res.Excerpt)
		}
	}
}

func TestSendFailureKeepsAnExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", webhook.MaxExcerpt-3) + "éééé" + strings.Repeat("y", 5000)
	srv, got, _ := receiver(t, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, long)
	})
	res := webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
		URL: srv.URL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
	})
	require.Len(t, got, 1)
	require.ErrorContains(t, res.Err, "answered 500")
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	require.LessOrEqual(t, len(res.Excerpt), webhook.MaxExcerpt, "at most MaxExcerpt bytes")
	require.True(t, strings.HasPrefix(res.Excerpt, strings.Repeat("x", webhook.MaxExcerpt-3)))
	require.NotContains(t, res.Excerpt, "y")
	require.True(t, strings.HasSuffix(res.Excerpt, "xé"), "a rune cut at the limit is dropped: %q", res.Excerpt[len(res.Excerpt)-8:])

	for _, code := range []int{400, 404, 410, 429, 503} {
		srv, _, _ := receiver(t, func(w http.ResponseWriter) { w.WriteHeader(code) })
		res := webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
			URL: srv.URL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
		})
		require.ErrorContains(t, res.Err, "answered "+strconv.Itoa(code))
		require.Equal(t, code, res.StatusCode)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	target, _, targetHits := receiver(t, func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) })
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv, got, _ := receiver(t, func(w http.ResponseWriter) {
			w.Header().Set("Location", target.URL+"/moved")
			w.WriteHeader(code)
		})
		res := webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
			URL: srv.URL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
		})
		require.Len(t, got, 1)
		require.Equal(t, code, res.StatusCode)
		require.ErrorContains(t, res.Err, "redirects are not followed")
	}
	require.Zero(t, targetHits.Load(), "the redirect target is never reached")
}

func TestSendWithoutAnswer(t *testing.T) {
	t.Parallel()
	// A server that closes at once: no status, an error.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hj, ok := w.(http.Hijacker)
		require.True(t, ok)
		conn, _, err := hj.Hijack()
		require.NoError(t, err)
		conn.Close()
	}))
	defer srv.Close()
	res := webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
		URL: srv.URL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
	})
	require.Error(t, res.Err)
	require.Zero(t, res.StatusCode)

	// A bad secret fails before any request.
	ok, got, hits := receiver(t, func(w http.ResponseWriter) { w.WriteHeader(200) })
	res = webhook.NewSender(webhook.Guard{AllowLoopback: true}).Send(t.Context(), webhook.Request{
		URL: ok.URL, Secrets: []string{"nope"}, Body: envelope(), Now: time.Now(),
	})
	require.ErrorContains(t, res.Err, "whsec_")
	require.Zero(t, hits.Load())
	require.Empty(t, got)
}
