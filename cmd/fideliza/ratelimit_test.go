package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestServeRefusesBadRateLimits(t *testing.T) {
	t.Parallel()
	u := storagetest.URL(t, dialect.SQLite, false)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-limit", "600"}, `--rate-limit (FIDELIZA_RATE_LIMIT): rate limit "600": want <requests>/<window>`},
		{[]string{"--rate-limit", "0/1m"}, "--rate-limit (FIDELIZA_RATE_LIMIT)"},
		{[]string{"--rate-limit-token", "20/500ms"}, "--rate-limit-token (FIDELIZA_RATE_LIMIT_TOKEN)"},
		{[]string{"--rate-limit-auth-failures", "ten/1m"}, "--rate-limit-auth-failures (FIDELIZA_RATE_LIMIT_AUTH_FAILURES)"},
		{[]string{"--rate-limit-document-lookups", "100"}, "--rate-limit-document-lookups (FIDELIZA_RATE_LIMIT_DOCUMENT_LOOKUPS)"},
		{[]string{"--rate-limit-tenant", "acme=10/1m"}, `--rate-limit-tenant (FIDELIZA_RATE_LIMIT_TENANTS): tenant rate limit "acme=10/1m": "acme" is not a tenant id`},
		{[]string{"--rate-limit-tenant", "de000000-0000-4000-8000-000000000001=10/1x"}, "must be a duration"},
	} {
		cmd := newRootCommand(io.Discard, io.Discard)
		cmd.SetArgs(append([]string{"--database-url", u, "serve", "--addr", "127.0.0.1:0"}, tc.args...))
		err := cmd.ExecuteContext(context.Background())
		require.Error(t, err, "%v", tc.args)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestServeRateLimitsFromEnvironment(t *testing.T) {
	u := storagetest.URL(t, dialect.SQLite, false)
	t.Setenv("FIDELIZA_RATE_LIMIT_TENANTS", "de000000-0000-4000-8000-000000000001=10/1m, nope")
	cmd := newRootCommand(io.Discard, io.Discard)
	cmd.SetArgs([]string{"--database-url", u, "serve", "--addr", "127.0.0.1:0"})
	err := cmd.ExecuteContext(context.Background())
	require.ErrorContains(t, err, `FIDELIZA_RATE_LIMIT_TENANTS): tenant rate limit "nope"`)
}

// TestServeRateLimits: a tenant's override applies to its clients, the
// default to the others'.
func TestServeRateLimits(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	u := storagetest.URL(t, dialect.SQLite, false)
	big := fideliza(t, logs, u, "tenant", "create", "--name", "Grande")["id"].(string)
	small := fideliza(t, logs, u, "tenant", "create", "--name", "Pequena")["id"].(string)
	base, _ := startServe(t, logs, u, "--rate-limit", "2/1m", "--rate-limit-tenant", big+"=3/30s")
	for tenant, policy := range map[string]string{big: `"client";q=3;w=30`, small: `"client";q=2;w=60`} {
		c := fideliza(t, logs, u, "client", "create", "--tenant", tenant, "--kind", "oauth")
		token := clientToken(t, base, c["client_id"].(string), c["client_secret"].(string))

		req, _ := http.NewRequest(http.MethodGet, base+"/v1/customers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, policy, resp.Header.Get("RateLimit-Policy"))
	}
	require.Contains(t, logs.String(), `"rate_limit_client":"2/1m"`, "the start line says the quota")
}

// TestServeMakesRateWindowsAgain: on PostgreSQL, a database whose shared
// rate limit table is missing (an UNLOGGED table a restore left out) gets
// it back when serve starts, which says so, and the quota holds. SQLite
// counts in memory: it has no such table.
func TestServeMakesRateWindowsAgain(t *testing.T) {
	if os.Getenv(storagetest.EnvPostgres) == "" {
		t.Skip("the shared rate limit is PostgreSQL's: set " + storagetest.EnvPostgres)
	}
	t.Parallel()
	logs := &syncBuffer{}
	u := storagetest.URL(t, dialect.Postgres, false)
	tenant := fideliza(t, logs, u, "tenant", "create", "--name", "Restaurada")["id"].(string)
	db, err := storage.Open(context.Background(), u)
	require.NoError(t, err)
	_, err = db.SQL.Exec(`DROP TABLE rate_windows`)
	db.Close()
	require.NoError(t, err)

	base, _ := startServe(t, logs, u, "--rate-limit", "2/1m")
	c := fideliza(t, logs, u, "client", "create", "--tenant", tenant, "--kind", "oauth")
	token := clientToken(t, base, c["client_id"].(string), c["client_secret"].(string))
	var statuses []int
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/customers", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	require.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests}, statuses, "the quota holds")
	require.Contains(t, logs.String(), `"table":"rate_windows"`, "serve says it made the table again")
}
