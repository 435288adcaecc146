package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The topology test's sizes: the sales acknowledged before the kills and in
// all, the point-of-sale connections sending them, the quota of the
// quota's tenant, and how long the surviving worker may take to process
// what is left.
const (
	topologyKillAt    = 200
	topologySales     = 800
	topologySenders   = 8
	topologyQuota     = 12
	topologyRescue    = 3 * time.Second
	topologyDeadline  = 150 * time.Second // River rescues from its leader every 30 s; a killed leader keeps its lease 15 s
	topologySaleWait  = 3 * time.Minute   // the load's own bound, on a CI machine running every package at once
	topologyPublicURL = "http://fideliza.test"
)

// TestTopology runs the scale-out topology of docs/deploy.md on one
// PostgreSQL database, each part a process of the fideliza binary:
// `migrate`, then two `serve --no-worker` and two `worker`. A quota is
// global: a client's requests spread over both servers are allowed exactly
// its quota in all. Point-of-sale clients send sales to both servers in
// turn; one server and one worker are killed with SIGKILL mid-load, the
// clients go on with the survivor. In the end every acknowledged sale is
// processed exactly once (its one credit, its one sale.processed event,
// balances equal to the ledger), and the only failures the clients saw are
// the killed server's connections: any answer but 202 fails the test.
func TestTopology(t *testing.T) {
	if os.Getenv(storagetest.EnvPostgres) == "" {
		t.Skip("PostgreSQL is the scale-out engine: set " + storagetest.EnvPostgres)
	}
	if testing.Short() {
		t.Skip("builds the binary and kills processes; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	dbURL := storagetest.URL(t, dialect.Postgres, false)
	logDir := t.TempDir()
	start := func(name, ready string, args ...string) *crashtest.Process {
		t.Helper()
		return crashtest.Start(t, bin, filepath.Join(logDir, name+".log"), ready,
			append([]string{"--database-url", dbURL, "--log-level", "info", "--public-url", topologyPublicURL}, args...)...)
	}
	start("migrate", "", "migrate").WaitExited(t, 2*time.Minute)

	till := crashtest.NewTill(t, dbURL)
	logs := &syncBuffer{}
	quotaTenant := fideliza(t, logs, dbURL, "tenant", "create", "--name", "Cota")["id"].(string)
	oauth := fideliza(t, logs, dbURL, "client", "create", "--tenant", quotaTenant, "--kind", "oauth", "--scopes", "customers:read")

	var serves []*crashtest.Process
	var bases []string
	for i := range 2 {
		addr := crashtest.FreeAddr(t)
		serves = append(serves, start(fmt.Sprintf("serve-%d", i+1), `"msg":"listening"`, "serve", "--no-worker", "--addr", addr,
			"--rate-limit", "100000/1m", "--rate-limit-tenant", fmt.Sprintf("%s=%d/10m", quotaTenant, topologyQuota)))
		bases = append(bases, "http://"+addr)
	}
	var workers []*crashtest.Process
	for i := range 2 {
		workers = append(workers, start(fmt.Sprintf("worker-%d", i+1), `"msg":"worker started"`, "worker",
			"--workers", "8", "--rescue-after", topologyRescue.String()))
	}
	for _, p := range append(append([]*crashtest.Process{}, serves...), workers...) {
		p.WaitStarted(t, time.Minute)
	}
	allLogs := func() string {
		var b strings.Builder
		for _, p := range append(append([]*crashtest.Process{}, serves...), workers...) {
			b.WriteString(p.Tail() + "\n")
		}
		return b.String()
	}

	// The quota is the database's, not each server's: of 3× the quota's
	// requests sent to the two servers in turn, exactly the quota is
	// allowed, and each server allowed some.
	allowed := topologyQuotaSpent(t, bases, oauth["client_id"].(string), oauth["client_secret"].(string))
	t.Logf("quota %d: allowed %d by %s and %d by %s", topologyQuota, allowed[0], bases[0], allowed[1], bases[1])
	require.Equal(t, topologyQuota, allowed[0]+allowed[1], "the requests the two servers allowed")
	require.Positive(t, allowed[0])
	require.Positive(t, allowed[1])

	// The sale load on both servers; one server and one worker killed once
	// topologyKillAt sales are acknowledged.
	till.SendTo(bases...)
	stop := till.Load(t, topologySenders)
	waitAcknowledged(t, till, topologyKillAt, stop, allLogs)
	serves[1].Kill(t)
	workers[1].Kill(t)
	killed := time.Now()
	t.Logf("killed %s and worker-2 with %d sales acknowledged", bases[1], till.Count())
	waitAcknowledged(t, till, topologySales, stop, allLogs)
	stop()
	st := crashtest.Counts(t, dbURL)
	t.Logf("load ended %v after the kills: %d sales acknowledged, %d processed, %d jobs not completed (%d running)",
		time.Since(killed).Round(time.Millisecond), till.Count(), st.Processed, st.JobsLeft, st.Running)
	for _, base := range bases {
		s := till.Sent(base)
		t.Logf("%s: %d sales acknowledged, %d unanswered", base, s.Acknowledged, s.Unanswered)
		require.Positive(t, s.Acknowledged, "the load went to both servers")
	}
	require.Zero(t, till.Sent(bases[0]).Unanswered, "the surviving server answered every sale")

	crashtest.WaitProcessed(t, dbURL, time.Now().Add(topologyDeadline), allLogs)
	t.Logf("every sale processed %v after the kills", time.Since(killed).Round(time.Millisecond))
	serves[0].Stop(t)
	workers[0].Stop(t)
	till.Verify(t, dbURL)
}

// waitAcknowledged waits until the till has n sales acknowledged.
func waitAcknowledged(t *testing.T, till *crashtest.Till, n int, stop func(), logs func() string) {
	t.Helper()
	deadline := time.Now().Add(topologySaleWait)
	for till.Count() < n {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%d of %d sales acknowledged after %v; logs:\n%s", till.Count(), n, topologySaleWait, logs())
		}
		time.Sleep(20 * time.Millisecond) // polls the till until the deadline above
	}
}

// topologyQuotaSpent takes a token for the client from the first server
// and sends 3× topologyQuota requests to the servers in turn; it returns
// how many each allowed. Any answer but 200 or 429 fails the test.
func topologyQuotaSpent(t *testing.T, bases []string, clientID, secret string) []int {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequest(http.MethodPost, bases[0]+"/auth/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, secret)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	doJSON(t, req, http.StatusOK, &tok)
	allowed := make([]int, len(bases))
	for i := range 3 * topologyQuota {
		req, err := http.NewRequest(http.MethodGet, bases[i%len(bases)]+"/v1/customers", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		switch res.StatusCode {
		case http.StatusOK:
			allowed[i%len(bases)]++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("request %d to %s: status %d", i, bases[i%len(bases)], res.StatusCode)
		}
	}
	return allowed
}
