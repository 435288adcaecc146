package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// sharedProcesses is how many servers the quotas are shared by, each with
// its own connections to one PostgreSQL database, as processes have.
const sharedProcesses = 3

// TestRateLimitSharedAcrossProcesses: on PostgreSQL a client's quota and an
// address's quota of token requests hold across three servers of one
// database: requests sent round-robin to all of them, many at once, get
// the quota in all (within 5%; the counting is exact, so 0%), not three
// times it.
func TestRateLimitSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	if !slices.Contains(storagetest.Dialects(), dialect.Postgres) {
		t.Skip("quotas are shared by the processes of a PostgreSQL database; SQLite has one process")
	}
	limits := ratelimit.Config{Default: ratelimit.Quota{Limit: 60, Window: time.Minute},
		Token: ratelimit.Quota{Limit: 30, Window: time.Minute}}
	servers, first, tenantID := sharedServers(t, limits)
	c, err := first.Backoffice.CreateClient(sys(), tenantID, apiclient.KindOauth, "integração", []string{"customers:read"})
	require.NoError(t, err)
	tok, err := first.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret,
	})
	require.NoError(t, err)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.Client.ID}, "client_secret": {c.Secret}}.Encode()

	for _, tc := range []struct {
		name  string
		quota int
		send  func(base string) (*http.Response, error)
	}{
		{"client", limits.Default.Limit, func(base string) (*http.Response, error) {
			req, err := http.NewRequest(http.MethodGet, base+"/v1/customers", nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			return http.DefaultClient.Do(req)
		}},
		{"token", limits.Token.Limit, func(base string) (*http.Response, error) {
			return http.Post(base+"/auth/token", "application/x-www-form-urlencoded", strings.NewReader(form))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var allowed, refused atomic.Int64
			var wg sync.WaitGroup
			next := make(chan int)
			for range 8 {
				wg.Go(func() {
					for i := range next {
						res, err := tc.send(servers[i%len(servers)].URL)
						if !assertNoError(t, err) {
							continue
						}
						_ = res.Body.Close()
						switch res.StatusCode {
						case http.StatusOK:
							allowed.Add(1)
						case http.StatusTooManyRequests:
							refused.Add(1)
						default:
							t.Errorf("request %d: %s", i, res.Status)
						}
					}
				})
			}
			sent := sharedProcesses * tc.quota
			for i := range sent {
				next <- i
			}
			close(next)
			wg.Wait()
			t.Logf("%s: %d of %d requests allowed across %d servers, quota %d", tc.name, allowed.Load(), sent, sharedProcesses, tc.quota)
			require.InDelta(t, tc.quota, allowed.Load(), float64(tc.quota)*0.05)
			require.Equal(t, int64(sent), allowed.Load()+refused.Load())
		})
	}
}

// sharedServers starts sharedProcesses servers with limits on one new
// PostgreSQL database, each with its own connections as processes have,
// and makes a tenant; it returns the servers, the first's application and
// the tenant. It skips the test without PostgreSQL.
func sharedServers(t *testing.T, limits ratelimit.Config) ([]*httptest.Server, *app.App, string) {
	t.Helper()
	if !slices.Contains(storagetest.Dialects(), dialect.Postgres) {
		t.Skip("quotas are shared by the processes of a PostgreSQL database; SQLite has one process")
	}
	dbURL := storagetest.URL(t, dialect.Postgres, true)
	servers := make([]*httptest.Server, sharedProcesses)
	var first *app.App
	for i := range servers {
		db, err := storage.Open(context.Background(), dbURL)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, db.Close()) })
		a := app.New(&app.Config{DB: db, Auth: auth.NewService(db.Ent, "http://fideliza.test", testAudience), Log: testLogger(t)})
		if first == nil {
			first = a
		}
		servers[i] = httptest.NewServer(rest.NewHandler(a, testLogger(t), rest.Config{RateLimits: limits}))
		t.Cleanup(servers[i].Close)
	}
	tn, err := first.Backoffice.CreateTenant(sys(), "Loja Compartilhada", nil)
	require.NoError(t, err)
	return servers, first, tn.ID
}

// TestClientLockoutSharedAcrossProcesses: on PostgreSQL a client id's
// failed secrets are counted across three servers of one database: after
// five wrong secrets sent to any of them, every server refuses the id,
// the right secret too, until the minute ends.
func TestClientLockoutSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	servers, first, tenantID := sharedServers(t, ratelimit.Config{Token: ratelimit.Quota{Off: true}})
	c, err := first.Backoffice.CreateClient(sys(), tenantID, apiclient.KindOauth, "integração", []string{"customers:read"})
	require.NoError(t, err)
	token := func(server int, secret string) int {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.Client.ID}, "client_secret": {secret}}
		res, err := http.Post(servers[server%len(servers)].URL+"/auth/token", "application/x-www-form-urlencoded",
			strings.NewReader(form.Encode()))
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		return res.StatusCode
	}
	var codes []int
	for i := range 9 {
		codes = append(codes, token(i, "wrong"))
	}
	unauthorized, locked := http.StatusUnauthorized, http.StatusTooManyRequests
	require.Equal(t, []int{unauthorized, unauthorized, unauthorized, unauthorized, unauthorized,
		locked, locked, locked, locked}, codes)
	for i := range servers {
		require.Equal(t, locked, token(i, c.Secret), "server %d", i)
	}
}

// assertNoError reports err, if any, and says whether there was none.
func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
