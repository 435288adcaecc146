package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// manyTokenRequests lets one address (every test's 127.0.0.1) request more
// tokens than the default quota of /auth/token, for tests that make dozens.
func manyTokenRequests(a *rest.ServerSetup) {
	a.RateLimits.Token = ratelimit.Quota{Limit: 10_000, Window: time.Minute}
}

// rlEnv is a handler, called directly so that each request says its peer
// address, with two tenants and a controllable rate-limit clock.
type rlEnv struct {
	app               *app.App
	h                 http.Handler
	clock             *testclock.Clock
	tenantID, otherID string
}

// newRLEnv makes the tenants, then runs configure on the rate limits
// (which may name them), then the handler.
func newRLEnv(t *testing.T, db *storage.DB, configure func(e *rlEnv, c *ratelimit.Config)) *rlEnv {
	t.Helper()
	log := testLogger(t)
	e := &rlEnv{clock: testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))}
	e.app = app.New(&app.Config{DB: db, Auth: auth.NewService(db.Ent, "http://fideliza.test", testAudience), Log: log})
	a, err := e.app.Backoffice.CreateTenant(sys(), "Loja Limitada", nil)
	require.NoError(t, err)
	b, err := e.app.Backoffice.CreateTenant(sys(), "Loja Maior", nil)
	require.NoError(t, err)
	e.tenantID, e.otherID = a.ID, b.ID
	cfg := rest.Config{RateLimits: ratelimit.Config{Now: e.clock.Now}}
	if configure != nil {
		configure(e, &cfg.RateLimits)
	}
	e.h = contractCheck(t, rest.NewHandler(e.app, log, cfg))
	return e
}

// bearer returns a token of a new OAuth client of tenantID.
func (e *rlEnv) bearer(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	c, err := e.app.Backoffice.CreateClient(sys(), tenantID, apiclient.KindOauth, "integração", scopes)
	require.NoError(t, err)
	tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret,
	})
	require.NoError(t, err)
	return tok.AccessToken
}

// serve sends a request from addr; headers are name, value pairs.
func (e *rlEnv) serve(method, path, addr, body string, headers ...string) *httptest.ResponseRecorder {
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	}
	req.RemoteAddr = addr
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

func (e *rlEnv) customers(addr, token string) *httptest.ResponseRecorder {
	return e.serve(http.MethodGet, "/v1/customers", addr, "", "Authorization", "Bearer "+token)
}

const (
	addrA = "198.51.100.7:40001"
	addrB = "203.0.113.9:40002"
)

// requireRateLimit checks the RateLimit-Policy and RateLimit headers.
func requireRateLimit(t *testing.T, rec *httptest.ResponseRecorder, policy string, q, w, r, reset int) {
	t.Helper()
	require.Equal(t, `"`+policy+`";q=`+strconv.Itoa(q)+`;w=`+strconv.Itoa(w), rec.Header().Get("RateLimit-Policy"), "%s", rec.Body)
	require.Equal(t, `"`+policy+`";r=`+strconv.Itoa(r)+`;t=`+strconv.Itoa(reset), rec.Header().Get("RateLimit"), "%s", rec.Body)
}

// require429 checks a refusal: 429, Retry-After in whole seconds, headers
// with nothing remaining; it returns the JSON body.
func require429(t *testing.T, rec *httptest.ResponseRecorder, policy string, q, w, retryAfter int) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, rec.Code, "%s", rec.Body)
	require.Equal(t, strconv.Itoa(retryAfter), rec.Header().Get("Retry-After"))
	requireRateLimit(t, rec, policy, q, w, 0, retryAfter)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "%s", rec.Body)
	return body
}

func TestRateLimitPerClient(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newRLEnv(t, db, func(_ *rlEnv, c *ratelimit.Config) {
			c.Default = ratelimit.Quota{Limit: 5, Window: time.Minute}
		})
		flooder := e.bearer(t, e.tenantID, "customers:read")
		neighbour := e.bearer(t, e.tenantID, "customers:read")

		// Exactly the quota passes, the remaining count going down.
		for i := 1; i <= 5; i++ {
			rec := e.customers(addrA, flooder)
			require.Equal(t, http.StatusOK, rec.Code, "request %d: %s", i, rec.Body)
			requireRateLimit(t, rec, "client", 5, 60, 5-i, 60)
			require.Empty(t, rec.Header().Get("Retry-After"))
		}
		e.clock.Advance(15 * time.Second)
		rec := e.customers(addrA, flooder)
		body := require429(t, rec, "client", 5, 60, 45)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.Equal(t, "rate_limited", body["error"])
		require.Contains(t, body["message"], "5 requests per 60 seconds")
		require.Contains(t, body["message"], "retry in 45 seconds")

		// Another client of the same tenant, from the same address, is
		// untouched by the flood.
		for i := 1; i <= 3; i++ {
			for range 10 {
				require.Equal(t, http.StatusTooManyRequests, e.customers(addrA, flooder).Code)
			}
			rec := e.customers(addrA, neighbour)
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
			requireRateLimit(t, rec, "client", 5, 60, 5-i, 60)
		}

		// Every protected answer counts and carries the headers: a path the
		// token has no scope for is a 403 of the flooder, still 429 now.
		require.Equal(t, http.StatusTooManyRequests,
			e.serve(http.MethodPost, "/v1/points/credit", addrA, "{}", "Authorization", "Bearer "+flooder).Code)

		// The window of the flooder ends 60 s after its first request,
		// however much it sent meanwhile.
		e.clock.Advance(45*time.Second - time.Millisecond)
		require429(t, e.customers(addrA, flooder), "client", 5, 60, 1)
		e.clock.Advance(time.Millisecond)
		rec = e.customers(addrA, flooder)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		requireRateLimit(t, rec, "client", 5, 60, 4, 60)

		rec = e.serve(http.MethodPost, "/v1/points/credit", addrA, "{}", "Authorization", "Bearer "+flooder)
		require.Equal(t, http.StatusForbidden, rec.Code, "%s", rec.Body)
		requireRateLimit(t, rec, "client", 5, 60, 3, 60)
	})
}

func TestRateLimitTenantOverride(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newRLEnv(t, db, func(e *rlEnv, c *ratelimit.Config) {
			c.Default = ratelimit.Quota{Limit: 2, Window: time.Minute}
			c.Tenants = map[string]ratelimit.Quota{e.otherID: {Limit: 4, Window: 30 * time.Second}}
		})
		small := e.bearer(t, e.tenantID, "customers:read")
		big := e.bearer(t, e.otherID, "customers:read")
		for i := 1; i <= 2; i++ {
			requireRateLimit(t, e.customers(addrA, small), "client", 2, 60, 2-i, 60)
		}
		require429(t, e.customers(addrA, small), "client", 2, 60, 60)
		for i := 1; i <= 4; i++ {
			rec := e.customers(addrA, big)
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
			requireRateLimit(t, rec, "client", 4, 30, 4-i, 30)
		}
		require429(t, e.customers(addrA, big), "client", 4, 30, 30)
	})
}

func TestRateLimitDefaults(t *testing.T) {
	t.Parallel()
	e := newRLEnv(t, storagetest.Open(t, "sqlite3"), nil)
	rec := e.customers(addrA, e.bearer(t, e.tenantID))
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
	requireRateLimit(t, rec, "client", 600, 60, 599, 60)

	rec = e.serve(http.MethodPost, "/auth/token", addrA, "grant_type=client_credentials",
		"Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusUnauthorized, rec.Code, "%s", rec.Body)
	requireRateLimit(t, rec, "token", 20, 60, 19, 60)

	rec = e.serve(http.MethodGet, "/api/v1/tenants/"+e.tenantID+"/sales/9001", addrA, "")
	require.Equal(t, http.StatusUnauthorized, rec.Code, "%s", rec.Body)
	requireRateLimit(t, rec, "auth-failures", 10, 60, 9, 60)

	// Health checks are not limited.
	rec = e.serve(http.MethodGet, "/healthz", addrA, "")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, rec.Header().Get("RateLimit"))

	// No limits at all.
	off := newRLEnv(t, storagetest.Open(t, "sqlite3"), func(_ *rlEnv, c *ratelimit.Config) {
		now := c.Now
		*c = ratelimit.Unlimited()
		c.Now = now
	})
	tok := off.bearer(t, off.tenantID)
	for range 610 {
		rec := off.customers(addrA, tok)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Empty(t, rec.Header().Get("RateLimit-Policy"))
	}
}

func TestRateLimitTokenEndpoint(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newRLEnv(t, db, func(_ *rlEnv, c *ratelimit.Config) {
			c.Token = ratelimit.Quota{Limit: 3, Window: time.Minute}
		})
		c, err := e.app.Backoffice.CreateClient(sys(), e.tenantID, apiclient.KindOauth, "integração", nil)
		require.NoError(t, err)
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.Client.ID}, "client_secret": {c.Secret}}
		token := func(addr string, form url.Values) *httptest.ResponseRecorder {
			return e.serve(http.MethodPost, "/auth/token", addr, form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		}
		for i := 1; i <= 3; i++ {
			rec := token(addrA, form)
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
			requireRateLimit(t, rec, "token", 3, 60, 3-i, 60)
		}
		e.clock.Advance(10 * time.Second)
		rec := token(addrA, form)
		body := require429(t, rec, "token", 3, 60, 50)
		require.Equal(t, "too_many_requests", body["error"])
		require.Contains(t, body["error_description"], "3 token requests per 60 seconds")
		require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		// Refused before the credentials are read: wrong ones too.
		wrong := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.Client.ID}, "client_secret": {"x"}}
		require429(t, token(addrA, wrong), "token", 3, 60, 50)

		// Another address has its own quota.
		rec = token(addrB, form)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		requireRateLimit(t, rec, "token", 3, 60, 2, 60)

		// IPv6 addresses are counted per /64.
		for i := 1; i <= 3; i++ {
			requireRateLimit(t, token("[2001:db8:1:2::"+strconv.Itoa(i)+"]:5000", form), "token", 3, 60, 3-i, 60)
		}
		require429(t, token("[2001:db8:1:2:ffff::1]:5000", form), "token", 3, 60, 60)
		requireRateLimit(t, token("[2001:db8:1:3::1]:5000", form), "token", 3, 60, 2, 60)

		e.clock.Advance(50 * time.Second)
		rec = token(addrA, form)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		requireRateLimit(t, rec, "token", 3, 60, 2, 60)
	})
}

func TestRateLimitFailedBasicAuthentication(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// The default quota of failures (10 a minute), and a small quota
		// per client to show POS clients are counted too.
		e := newRLEnv(t, db, func(_ *rlEnv, c *ratelimit.Config) {
			c.Default = ratelimit.Quota{Limit: 15, Window: time.Minute}
		})
		pos, err := e.app.Backoffice.CreateClient(sys(), e.tenantID, apiclient.KindPos, "caixa 1", nil)
		require.NoError(t, err)
		pos2, err := e.app.Backoffice.CreateClient(sys(), e.tenantID, apiclient.KindPos, "caixa 2", nil)
		require.NoError(t, err)
		path := "/api/v1/tenants/" + e.tenantID + "/sales/9001"
		basic := func(addr string, c *backoffice.ClientCredentials, secret string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.SetBasicAuth(c.Client.ID, secret)
			return e.serve(http.MethodGet, path, addr, "", "Authorization", req.Header.Get("Authorization"))
		}
		authenticated := func(t *testing.T, rec *httptest.ResponseRecorder) {
			t.Helper()
			require.Equal(t, http.StatusNotFound, rec.Code, "%s", rec.Body) // sale 9001 does not exist
		}
		requireProblem := func(t *testing.T, rec *httptest.ResponseRecorder, status int, typ string) {
			t.Helper()
			require.Equal(t, status, rec.Code, "%s", rec.Body)
			require.Equal(t, "application/problem+json", rec.Header().Get("Content-Type"))
			var p map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
			require.Equal(t, typ, p["type"])
			require.EqualValues(t, status, p["status"])
		}

		// Successes do not count against the failures of the address.
		for i := 1; i <= 3; i++ {
			rec := basic(addrA, pos, pos.Secret)
			authenticated(t, rec)
			requireRateLimit(t, rec, "client", 15, 60, 15-i, 60)
		}
		// Ten failures are answered 401, counting down...
		for i := 1; i <= 10; i++ {
			rec := basic(addrA, pos, "guess-"+strconv.Itoa(i))
			requireProblem(t, rec, http.StatusUnauthorized, "/problems/unauthorized")
			requireRateLimit(t, rec, "auth-failures", 10, 60, 10-i, 60)
			if i == 5 {
				authenticated(t, basic(addrA, pos, pos.Secret))
			}
		}
		// ...then the address is refused before its credentials are
		// checked, right ones included.
		e.clock.Advance(20 * time.Second)
		rec := basic(addrA, pos, "guess-11")
		require429(t, rec, "auth-failures", 10, 60, 40)
		requireProblem(t, rec, http.StatusTooManyRequests, "/problems/rate-limited")
		require429(t, basic(addrA, pos, pos.Secret), "auth-failures", 10, 60, 40)
		require429(t, e.serve(http.MethodGet, path, addrA, ""), "auth-failures", 10, 60, 40)

		// The right client from another address keeps working, counted as a
		// client: over its own quota it is refused, and another POS client
		// of the tenant is not.
		for i := 5; i <= 15; i++ {
			rec := basic(addrB, pos, pos.Secret)
			authenticated(t, rec)
			requireRateLimit(t, rec, "client", 15, 60, 15-i, 40)
		}
		rec = basic(addrB, pos, pos.Secret)
		require429(t, rec, "client", 15, 60, 40)
		requireProblem(t, rec, http.StatusTooManyRequests, "/problems/rate-limited")
		rec = basic(addrB, pos2, pos2.Secret)
		authenticated(t, rec)
		requireRateLimit(t, rec, "client", 15, 60, 14, 60)

		// When the window of failures ends the address may try again.
		e.clock.Advance(40 * time.Second)
		rec = basic(addrA, pos, pos.Secret)
		authenticated(t, rec)
		requireRateLimit(t, rec, "client", 15, 60, 14, 60)
		rec = basic(addrA, pos, "guess-12")
		requireProblem(t, rec, http.StatusUnauthorized, "/problems/unauthorized")
		requireRateLimit(t, rec, "auth-failures", 10, 60, 9, 60)
	})
}

func TestRateLimitGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newRLEnv(t, db, func(_ *rlEnv, c *ratelimit.Config) {
			c.Default = ratelimit.Quota{Limit: 2, Window: time.Minute}
		})
		tok := e.bearer(t, e.tenantID, "customers:read")
		query := `{"query":"{ customers(first: 1) { totalCount } }"}`
		gql := func() *httptest.ResponseRecorder {
			return e.serve(http.MethodPost, "/graphql", addrA, query, "Authorization", "Bearer "+tok, "Content-Type", "application/json")
		}
		for i := 1; i <= 2; i++ {
			rec := gql()
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
			require.NotContains(t, rec.Body.String(), `"errors"`)
			requireRateLimit(t, rec, "client", 2, 60, 2-i, 60)
		}
		e.clock.Advance(30 * time.Second)
		rec := gql()
		body := require429(t, rec, "client", 2, 60, 30)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		var out struct {
			Data   any `json:"data"`
			Errors []struct {
				Message    string
				Extensions map[string]any
			}
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		require.Len(t, out.Errors, 1, "%v", body)
		require.Equal(t, "rate_limited", out.Errors[0].Extensions["code"])
		require.Contains(t, out.Errors[0].Message, "retry in 30 seconds")
		require.Nil(t, out.Data)
	})
}

func TestRateLimitRequestsWithoutValidToken(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newRLEnv(t, db, func(_ *rlEnv, c *ratelimit.Config) {
			c.Default = ratelimit.Quota{Limit: 3, Window: time.Minute}
		})
		tok := e.bearer(t, e.tenantID, "customers:read")
		for i := 1; i <= 3; i++ {
			rec := e.customers(addrA, "forged."+strconv.Itoa(i)+".token")
			require.Equal(t, http.StatusUnauthorized, rec.Code, "%s", rec.Body)
			requireRateLimit(t, rec, "anonymous", 3, 60, 3-i, 60)
		}
		body := require429(t, e.customers(addrA, "forged"), "anonymous", 3, 60, 60)
		require.Equal(t, "rate_limited", body["error"])
		rec := e.serve(http.MethodGet, "/v1/customers", addrA, "")
		require429(t, rec, "anonymous", 3, 60, 60)

		// A valid token is never refused for its address's bad requests.
		rec = e.customers(addrA, tok)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		requireRateLimit(t, rec, "client", 3, 60, 2, 60)
		// GraphQL answers its own format.
		rec = e.serve(http.MethodPost, "/graphql", addrA, `{"query":"{ customers(first: 1) { totalCount } }"}`,
			"Authorization", "Bearer forged", "Content-Type", "application/json")
		require.Equal(t, http.StatusTooManyRequests, rec.Code)
		require.Contains(t, rec.Body.String(), `"code":"rate_limited"`)
	})
}
