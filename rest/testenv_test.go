package rest

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// ServerSetup is what a test configures before its server serves: the
// application, and the HTTP interface's own configuration.
type ServerSetup struct {
	*app.App
	Config
	// NoServer builds the handler only (fuzz targets call it directly).
	NoServer bool
	// ServerErrors lets the test's server answer 500s (tests of the
	// answer to an unexpected failure); otherwise one fails the test.
	ServerErrors bool
	// TestClock, when set, is the application's clock; else the real one.
	TestClock *testclock.Clock
	// Around, when set, wraps the served handler (to count requests, say).
	Around func(http.Handler) http.Handler
}

// TestEnv is the one REST test environment: a real HTTP server over a test
// database, wrapped in the OpenAPI contract check; a tenant; an OAuth
// client issuing real tokens for any scopes; a clock the application
// reads; and the server's log, which fails the test on any 500
// or panic.
type TestEnv struct {
	db       *storage.DB
	app      *app.App
	handler  http.Handler     // contract-checked
	mux      http.Handler     // the router itself, for benchmarks and fuzz targets
	srv      *httptest.Server // nil with NoServer
	clock    *testclock.Clock // nil: the real clock
	logs     *logCapture
	tenantID string
	mu       sync.Mutex
	client   *backoffice.ClientCredentials // made by the first tokenFor
}

// newTestEnv builds the environment; configure runs before it serves.
func newTestEnv(tb testing.TB, db *storage.DB, configure ...func(*ServerSetup)) *TestEnv {
	tb.Helper()
	e := &TestEnv{db: db, logs: &logCapture{}}
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	e.app = app.New(&app.Config{DB: db, Auth: auth.NewService(db.Ent, issuer, "fideliza"), Log: log}).WithHistory(demoyear.Play)
	setup := &ServerSetup{App: e.app}
	for _, c := range configure {
		c(setup)
	}
	if e.clock = setup.TestClock; e.clock != nil {
		e.app.Clock = e.clock.Now
	}
	e.mux = NewHandler(e.app, log, setup.Config)
	e.handler = contractCheck(tb, e.mux)
	if setup.NoServer {
		srv.Listener.Close()
	} else {
		srv.Config.Handler = e.handler
		if setup.Around != nil {
			srv.Config.Handler = setup.Around(e.handler)
		}
		srv.Start()
		e.srv = srv
		tb.Cleanup(srv.Close)
	}
	tb.Cleanup(func() {
		if !setup.ServerErrors {
			require.NotContains(tb, e.logs.String(), `"status":500`, "no answer may be an unexpected failure")
			require.NotContains(tb, e.logs.String(), `"msg":"panic"`)
		}
		if tb.Failed() {
			tb.Logf("server log:\n%s", e.logs.String())
		}
	})
	ctx := viewer.SystemContext(context.Background())
	tn, err := e.app.Backoffice.CreateTenant(ctx, "Loja Teste", nil)
	require.NoError(tb, err)
	e.tenantID = tn.ID
	return e
}

// NewTestEnv is the environment for the external tests (package rest_test).
func NewTestEnv(tb testing.TB, db *storage.DB, configure ...func(*ServerSetup)) *TestEnv {
	return newTestEnv(tb, db, configure...)
}

// App is the environment's application.
func (e *TestEnv) App() *app.App { return e.app }

// Server is the environment's HTTP server.
func (e *TestEnv) Server() *httptest.Server { return e.srv }

// TenantID is the environment's tenant.
func (e *TestEnv) TenantID() string { return e.tenantID }

// tokenFor returns a real access token of the env's OAuth client (made on
// first use) holding exactly scopes.
func (e *TestEnv) tokenFor(tb testing.TB, scopes ...string) string {
	tb.Helper()
	e.mu.Lock()
	if e.client == nil {
		c, err := e.app.Backoffice.CreateClient(viewer.SystemContext(context.Background()), e.tenantID, apiclient.KindOauth, "test", nil)
		require.NoError(tb, err)
		e.client = c
	}
	e.mu.Unlock()
	return e.issueToken(tb, e.client, scopes...).AccessToken
}

// issueToken issues a token of client c for scopes.
func (e *TestEnv) issueToken(tb testing.TB, c *backoffice.ClientCredentials, scopes ...string) *auth.Token {
	tb.Helper()
	tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret, Scope: strings.Join(scopes, " "),
	})
	require.NoError(tb, err)
	return tok
}

// newTenant creates a tenant and returns its id.
func (e *TestEnv) newTenant(tb testing.TB, name string) string {
	tb.Helper()
	tn, err := e.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), name, nil)
	require.NoError(tb, err)
	return tn.ID
}

// tenantToken makes an OAuth client of tenantID and returns an access
// token for exactly scopes.
func (e *TestEnv) tenantToken(tb testing.TB, tenantID string, scopes ...string) string {
	tb.Helper()
	c, err := e.app.Backoffice.CreateClient(viewer.SystemContext(context.Background()), tenantID, apiclient.KindOauth, "test", nil)
	require.NoError(tb, err)
	tok := e.issueToken(tb, c, scopes...)
	require.Equal(tb, strings.Join(scopes, " "), tok.Scope)
	return tok.AccessToken
}

// logCapture collects the server's log; handlers log from their own
// goroutines.
type logCapture struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Len is the size of the log so far: a mark to read what follows it.
func (l *logCapture) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// Since is the log written after mark.
func (l *logCapture) Since(mark int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b.Bytes()[mark:])
}

var (
	documentLike = regexp.MustCompile(`\d{3}\.?\d{3}\.?\d{3}-?\d{2}|[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}/?[0-9A-Z]{4}-?\d{2}`)
	emailLike    = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+`)
	fullNameLike = regexp.MustCompile(`"([^"\\]{3,} [^"\\]{3,})"`)
)

// personalData is what in a request body could identify a person: what
// looks like a CPF or CNPJ (as written and unformatted), an e-mail address,
// or a quoted value of two words.
func personalData(body []byte) []string {
	var found []string
	for _, d := range documentLike.FindAll(body, -1) {
		found = append(found, string(d), strings.NewReplacer(".", "", "-", "", "/", "").Replace(string(d)))
	}
	for _, e := range emailLike.FindAll(body, -1) {
		found = append(found, string(e))
	}
	for _, m := range fullNameLike.FindAllSubmatch(body, -1) {
		found = append(found, string(m[1]))
	}
	return found
}

// requireNothingPersonalLogged fails when the log written from mark on holds
// personal data of body: request bodies never reach the log.
func (e *TestEnv) requireNothingPersonalLogged(t testing.TB, mark int, body []byte) {
	t.Helper()
	logged := e.logs.Since(mark)
	for _, p := range personalData(body) {
		if strings.Contains(logged, p) {
			t.Fatalf("the log holds %q of the request body %q:\n%s", p, body, logged)
		}
	}
}

// unlimitedRates turns rate limits off, for benchmarks and fuzzing: they
// send far more than a client's quota.
func unlimitedRates(s *ServerSetup) { s.RateLimits = ratelimit.Unlimited() }

// posClient makes a POS client of the env's tenant and returns its
// credentials.
func (e *TestEnv) posClient(tb testing.TB) (id, secret string) {
	tb.Helper()
	c, err := e.app.Backoffice.CreateClient(viewer.SystemContext(context.Background()), e.tenantID, apiclient.KindPos, "caixa", nil)
	require.NoError(tb, err)
	return c.Client.ID, c.Secret
}

// TestPersonalDataFound keeps the log check able to fail: it must find
// each kind of personal data in a body.
func TestPersonalDataFound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want string }{
		{`{"cpf":"529.982.247-25"}`, "52998224725"},
		{`{"cpf":"529.982.247-25"}`, "529.982.247-25"},
		{`{"id":"12ABC34501DE35"}`, "12ABC34501DE35"},
		{`{"email":"ana.souza@example.com"}`, "ana.souza@example.com"},
		{`{"name":"Ana Souza"}`, "Ana Souza"},
	} {
		require.Contains(t, personalData([]byte(c.body)), c.want, c.body)
	}
}

// startWorkers runs the app's jobs with a River client of cfg until the
// test ends, and returns it.
func (e *TestEnv) startWorkers(tb testing.TB, cfg worker.Config) worker.Client {
	tb.Helper()
	rc, err := worker.NewClient(e.app, cfg)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(tb, rc.Start(ctx))
	tb.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = rc.Stop(stop)
		cancel()
	})
	return rc
}
