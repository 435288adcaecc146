package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/demoyear/demotest"
	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// syncBuffer is a log sink written by several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fideliza runs the command line in process and decodes its JSON output.
func fideliza(t *testing.T, logs io.Writer, dbURL string, args ...string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	cmd := newRootCommand(&out, logs)
	cmd.SetArgs(append([]string{"--database-url", dbURL, "--json"}, args...))
	require.NoError(t, cmd.ExecuteContext(context.Background()), "fideliza %v", args)
	var v map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &v), "output of %v: %s", args, out.String())
	return v
}

func TestAdminCommandsPrintDocumentedJSON(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			u := storagetest.URL(t, d, false)

			tenant := fideliza(t, logs, u, "tenant", "create", "--name", "Mercado Bom Preço")
			require.Regexp(t, `^[0-9a-f-]{36}$`, tenant["id"])
			require.Equal(t, "Mercado Bom Preço", tenant["name"])
			tid := tenant["id"].(string)

			updated := fideliza(t, logs, u, "tenant", "update", "--tenant", tid, "--pre-registration=true",
				"--sale-registration=false", "--sale-tolerance=0.25", "--points-per-real=2")
			require.Equal(t, true, updated["pre_registration"])
			require.Equal(t, false, updated["sale_registration"])
			require.Equal(t, "0.25", updated["sale_tolerance"])
			require.Equal(t, "2", updated["points_per_real"])

			sandbox := fideliza(t, logs, u, "tenant", "create", "--name", "Sandbox", "--sandbox-of", tid)
			require.Equal(t, tid, sandbox["sandbox_of"])
			require.Greater(t, countCustomers(t, u, sandbox["id"].(string)), 100, "a sandbox holds the demo data")

			st := fideliza(t, logs, u, "store", "create", "--tenant", tid, "--code", "LJ-9", "--name", "Centro")
			require.Equal(t, "LJ-9", st["code"])

			oauth := fideliza(t, logs, u, "client", "create", "--tenant", tid, "--kind", "oauth", "--scopes", "customers:read campaigns:read")
			require.Equal(t, "oauth", oauth["kind"])
			require.Equal(t, []any{"customers:read", "campaigns:read"}, oauth["scopes"])
			require.Regexp(t, `^cli_`, oauth["client_id"])
			require.Regexp(t, `^fzs_[A-Za-z0-9_-]{43}$`, oauth["client_secret"])

			pos := fideliza(t, logs, u, "client", "create", "--tenant", tid, "--kind", "pos")
			require.Equal(t, []any{}, pos["scopes"])

			rotated := fideliza(t, logs, u, "client", "rotate", "--client-id", pos["client_id"].(string))
			require.Equal(t, pos["client_id"], rotated["client_id"])
			require.NotEqual(t, pos["client_secret"], rotated["client_secret"])

			secrets := []string{oauth["client_secret"].(string), pos["client_secret"].(string), rotated["client_secret"].(string)}
			requireNoSecretStored(t, u, secrets, logs.String())
		})
	}
}

func TestAdminCommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	u := storagetest.URL(t, dialect.SQLite, false)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing name", []string{"--database-url", u, "tenant", "create"}, `required flag(s) "name"`},
		{"bad kind", []string{"--database-url", u, "client", "create", "--tenant", "de000000-0000-4000-8000-000000000001", "--kind", "saml"}, "kind must be oauth or pos"},
		{"bad tolerance", []string{"--database-url", u, "tenant", "update", "--tenant", "x", "--sale-tolerance", "ten"}, "not a decimal"},
		{"bad log level", []string{"--database-url", u, "--log-level", "loud", "migrate"}, "--log-level"},
		{"data key file to create unnamed", []string{"--data-key-file", "", "keys", "create-data"}, "names the file to create"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newRootCommand(io.Discard, io.Discard)
			cmd.SetArgs(tc.args)
			err := cmd.ExecuteContext(context.Background())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestBadConfigurationNamesTheMistakeFirst: each configuration below has
// several mistakes; the command names the first in the order scheme, data
// key file, host, and does nothing before (no key file made, no address
// taken).
func TestBadConfigurationNamesTheMistakeFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	noIssuer := httptest.NewServer(http.NotFoundHandler())
	defer noIssuer.Close()
	const unreachable = "postgres://root@127.0.0.1:1/loyalty"
	noFile := filepath.Join(dir, "absent", "data.key")
	keyDir := t.TempDir()
	require.NoError(t, os.Chmod(keyDir, 0o700)) // past the check of the file's mode
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a file name without a scheme", []string{"--database-url", "fideliza.db", "--data-key-file", "", "migrate"},
			`database url "fideliza.db" has no scheme: for an SQLite file write sqlite://fideliza.db,`},
		{"an absolute path without a scheme", []string{"--database-url", filepath.Join(dir, "f.db"), "--data-key-file", "", "migrate"},
			"for an SQLite file write sqlite://" + filepath.ToSlash(filepath.Join(dir, "f.db"))},
		{"mysql", []string{"--database-url", "mysql://root@127.0.0.1:1/loyalty", "--data-key-file", "", "migrate"},
			`database url "mysql://root@127.0.0.1:1/loyalty": the scheme mysql:// is not supported; use sqlite://`},
		{"sqlite without a file", []string{"--database-url", "sqlite://", "--data-key-file", "", "migrate"},
			"sqlite:// needs a file name"},
		{"serve on a taken address", []string{"--database-url", "mysql://x", "serve", "--addr", busy.Addr().String()},
			"the scheme mysql:// is not supported"},
		{"postgres without a data key file", []string{"--database-url", unreachable, "--data-key-file", "", "migrate"},
			"a PostgreSQL database needs a data key file: --data-key-file"},
		{"a data key file that does not exist", []string{"--database-url", unreachable, "--data-key-file", noFile, "migrate"},
			"data key file " + noFile + ": no such file or directory"},
		{"a data key file that is a directory", []string{"--database-url", unreachable, "--data-key-file", keyDir, "migrate"},
			"data key file " + keyDir + ": is a directory"},
		{"an unreachable host", []string{"--database-url", unreachable, "migrate"},
			`database unreachable: PostgreSQL at 127.0.0.1:1 (database "loyalty")`},
		{"an SQLite file in a directory that does not exist", []string{"--database-url", "sqlite://" + filepath.ToSlash(filepath.Join(dir, "absent", "f.db")),
			"--data-key-file", "", "migrate"},
			"the directory " + filepath.Join(dir, "absent") + " of the SQLite file does not exist: create it first"},
		{"serve on an address in use", []string{"--database-url", "sqlite://" + filepath.ToSlash(filepath.Join(dir, "f.db")), "serve", "--addr", busy.Addr().String()},
			"--addr " + busy.Addr().String() + " (FIDELIZA_ADDR): the address is in use"},
		{"an OpenID provider that cannot be discovered", []string{"--database-url", storagetest.URL(t, dialect.SQLite, true), "serve",
			"--addr", "127.0.0.1:0", "--oidc-issuer", noIssuer.URL, "--oidc-audience", "fideliza"},
			`--oidc-issuer "` + noIssuer.URL + `" (FIDELIZA_OIDC_ISSUER): discovering the OpenID provider`},
	}
	if admin := os.Getenv(storagetest.EnvPostgres); admin != "" {
		absent, err := url.Parse(admin)
		require.NoError(t, err)
		absent.Path = "/fideliza_absent"
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"a PostgreSQL database that does not exist", []string{"--database-url", absent.String(), "migrate"},
			`database "fideliza_absent" does not exist on PostgreSQL at ` + absent.Host + `: create it first (createdb fideliza_absent, or CREATE DATABASE fideliza_absent)`})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			cmd := newRootCommand(io.Discard, logs)
			cmd.SetArgs(tc.args)
			err := cmd.ExecuteContext(context.Background())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, logs.String(), `"msg":"starting"`, "the mistake is named before the start is logged")
		})
	}
	made, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, made, "no key file, no database file")
}

// TestMigrateSaysWhatItApplied: migrate names how many migrations it
// applied and the version the database is at, and says the database is up
// to date only when it applied none.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			all, err := storage.Migrations(d)
			require.NoError(t, err)
			last := all[len(all)-1].Version
			human := func(u string) string {
				var out bytes.Buffer
				cmd := newRootCommand(&out, io.Discard)
				cmd.SetArgs([]string{"--database-url", u, "migrate"})
				require.NoError(t, cmd.ExecuteContext(context.Background()))
				return out.String()
			}
			u := storagetest.URL(t, d, false)
			require.Equal(t, fmt.Sprintf("applied %d migrations; the database is at version %d\n", len(all), last), human(u))
			require.Equal(t, fmt.Sprintf("the database is up to date, at version %d\n", last), human(u))

			u = storagetest.URL(t, d, false)
			for _, applied := range []int{len(all), 0} {
				got := fideliza(t, io.Discard, u, "migrate")
				require.Equal(t, map[string]any{"status": "migrated", "dialect": d, "applied": float64(applied), "version": float64(last)}, got)
			}
		})
	}
}

// countCustomers counts a tenant's customers.
func countCustomers(t *testing.T, dbURL, tenantID string) int {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	n, err := db.Ent.Customer.Query().Count(viewer.TenantContext(context.Background(), tenantID))
	require.NoError(t, err)
	return n
}

// requireNoSecretStored dumps every table of the database and fails when a
// secret appears in it or in the logs.
func requireNoSecretStored(t *testing.T, dbURL string, secrets []string, logs string) {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	tablesQuery := `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	if db.Dialect == dialect.SQLite {
		tablesQuery = `SELECT name FROM sqlite_master WHERE type = 'table'`
	}
	tables := queryStrings(t, db.SQL, tablesQuery)
	require.Contains(t, tables, "api_clients")
	var dump strings.Builder
	for _, table := range tables {
		rows, err := db.SQL.Query(`SELECT * FROM ` + table)
		require.NoError(t, err)
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			fmt.Fprintf(&dump, "%s %v\n", table, vals)
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					dump.Write(b)
				}
			}
		}
		rows.Close()
	}
	require.Contains(t, dump.String(), "api_clients", "the dump must have read the clients")
	for _, s := range secrets {
		require.NotContains(t, dump.String(), s, "a secret is stored in the database")
		require.NotContains(t, logs, s, "a secret is in the logs")
	}
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	return out
}

// startServe runs `fideliza serve` in process until the test ends and waits
// until it is ready.
func startServe(t *testing.T, logs io.Writer, dbURL string, extra ...string) (base string, stdout *syncBuffer) {
	t.Helper()
	base, stdout, done := launchServe(t, logs, dbURL, extra...)
	waitReady(t, base, done)
	return base, stdout
}

// launchServe starts `fideliza serve` and stops it when the test ends.
func launchServe(t *testing.T, logs io.Writer, dbURL string, extra ...string) (string, *syncBuffer, chan error) {
	t.Helper()
	addr := crashtest.FreeAddr(t)
	stdout := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cmd := newRootCommand(stdout, logs)
	cmd.SetArgs(append([]string{"--database-url", dbURL, "serve", "--addr", addr}, extra...))
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "serve must stop cleanly")
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return "http://" + addr, stdout, done
}

func waitReady(t *testing.T, base string, done chan error) {
	t.Helper()
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve exited: %v", err)
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 12*time.Minute, 50*time.Millisecond) // --demo generates a year of history first (~2–3 min on PostgreSQL alone, more beside other tests)
}

// TestServeDemo is the README's first command: serve --demo prints working
// credentials and calls (run as printed), a panel sign-in link, an analyst's
// token and dashboard calls (run as printed, then every playground example
// with that token), and the demo client finds through GraphQL a year of a
// retailer's life: at least 1,000 customers at every level, 10,000 sales on
// 300 days or more, sales by store in the last 30 days, and campaigns with
// redemptions.
func TestServeDemo(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			// serve --demo starts on a copy of the demo's year, as a
			// reader's second start does: the year's template is played
			// once per test run (demotest), where LoadDemo, which serve
			// calls, generates it as on a first start.
			u := demotest.URL(t, d, demotest.Today())
			base, stdout := startServe(t, logs, u, "--demo")
			require.Contains(t, stdout.String(), "curl -sS --fail-with-body "+base+"/graphql")
			require.Contains(t, stdout.String(), "Stores: [LOJA-01 LOJA-02 LOJA-03", "the banner names the demo's stores")
			require.Contains(t, stdout.String(), "LOJA-12]")
			requireBannerCallsWork(t, stdout.String(), logs)
			requireBannerAnalystCalls(t, base, stdout.String(), logs)
			requirePanelSignIn(t, base, u, stdout.String(), logs)

			for _, path := range []string{"/healthz", "/readyz"} {
				resp, err := http.Get(base + path)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode, path)
			}

			secret := between(t, stdout.String(), "cli_demo_oauth  secret ", "\n")
			form := url.Values{"grant_type": {"client_credentials"}}
			req, _ := http.NewRequest(http.MethodPost, base+"/auth/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth("cli_demo_oauth", secret)
			var tok struct {
				AccessToken string `json:"access_token"`
				TokenType   string `json:"token_type"`
			}
			doJSON(t, req, http.StatusOK, &tok)
			require.Equal(t, "Bearer", tok.TokenType)

			var demo struct {
				Customers struct {
					TotalCount int `json:"totalCount"`
					Edges      []struct {
						Node struct{ ID, Name, TenantID string }
					} `json:"edges"`
				} `json:"customers"`
				ByLevel []struct {
					Level     string `json:"level"`
					Customers int    `json:"customers"`
				} `json:"customersByLevel"`
				Year, Month []struct {
					Day   string `json:"day"`
					Sales int    `json:"sales"`
				}
				Campaigns struct {
					Edges []struct {
						Node struct {
							Name, Type  string
							Performance struct{ Redemptions int }
						}
					}
				}
			}
			// The dashboards are an analyst's.
			analyst := fideliza(t, logs, u, "--public-url", base, "user", "token", "--tenant", app.DemoTenantID,
				"--role", "analyst")["access_token"].(string)
			now := time.Now().UTC()
			graphQL(t, base, analyst, `query($yearAgo: Time!, $monthAgo: Time!, $now: Time!) {
				customers(first: 1) { totalCount edges { node { id name tenantID } } }
				customersByLevel { level customers }
				year: salesByStoreDay(from: $yearAgo, to: $now) { day sales }
				month: salesByStoreDay(from: $monthAgo, to: $now) { day sales }
				campaigns(first: 50) { edges { node { name type performance { redemptions } } } }
			}`, map[string]any{"yearAgo": now.AddDate(0, 0, -366), "monthAgo": now.AddDate(0, 0, -30), "now": now}, &demo)
			require.GreaterOrEqual(t, demo.Customers.TotalCount, 1000)
			require.Equal(t, "Ana Souza", demo.Customers.Edges[0].Node.Name, "the README's customers are the newest")
			require.Len(t, demo.ByLevel, 4)
			for _, l := range demo.ByLevel {
				require.Positive(t, l.Customers, "customers at %s", l.Level)
			}
			sales, days := 0, map[string]bool{}
			for _, d := range demo.Year {
				sales, days[d.Day] = sales+d.Sales, true
			}
			require.GreaterOrEqual(t, sales, 10000, "sales in the last year")
			require.GreaterOrEqual(t, len(days), 300, "days with sales in the last year")
			require.NotEmpty(t, demo.Month, "sales by store and day in the last 30 days")
			redeemed := 0
			for _, c := range demo.Campaigns.Edges {
				if c.Node.Performance.Redemptions > 0 {
					redeemed++
				}
			}
			require.GreaterOrEqual(t, redeemed, 3, "campaigns with redemptions: %+v", demo.Campaigns.Edges)

			posSecret := between(t, stdout.String(), "cli_demo_pos  secret ", "\n")
			requireNoSecretStored(t, u, []string{secret, posSecret, tok.AccessToken}, logs.String())
		})
	}
}

// withCLITenant runs fn in parallel on each database, migrated, with a
// tenant the command line created.
func withCLITenant(t *testing.T, name string, fn func(t *testing.T, dbURL, tenantID string, logs *syncBuffer)) {
	t.Helper()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, true)
			logs := &syncBuffer{}
			fn(t, u, fideliza(t, logs, u, "tenant", "create", "--name", name)["id"].(string), logs)
		})
	}
}

// graphQL posts a query with the token and decodes its data into v,
// failing on any error.
func graphQL(t *testing.T, base, token, query string, vars map[string]any, v any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []any           `json:"errors"`
	}
	doJSON(t, req, http.StatusOK, &out)
	require.Empty(t, out.Errors)
	require.NoError(t, json.Unmarshal(out.Data, v))
}

// TestTwoServeProcessesOnOneDatabase starts two servers on one empty
// database at once: both migrate without racing and become ready.
func TestTwoServeProcessesOnOneDatabase(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, false)
			baseA, _, doneA := launchServe(t, io.Discard, u)
			baseB, _, doneB := launchServe(t, io.Discard, u)
			waitReady(t, baseA, doneA)
			waitReady(t, baseB, doneB)
		})
	}
}

func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, start)
	require.True(t, ok, "%q not in %q", start, s)
	v, _, _ := strings.Cut(rest, end)
	return strings.TrimSpace(v)
}

func doJSON(t *testing.T, req *http.Request, status int, v any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, status, resp.StatusCode, string(body))
	require.NoError(t, json.Unmarshal(body, v), string(body))
}
