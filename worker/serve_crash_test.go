package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// serveRecovery is what issue 15 promises after a process dies: every
// acknowledged sale processed within a minute, with the default settings.
const serveRecovery = time.Minute

// TestServeCrash kills the real fideliza serve (HTTP and workers in one
// process) with SIGKILL twice: while point-of-sale clients are registering
// sales, and while it works through the queue they left. A third serve with
// default settings must then process every sale it acknowledged exactly
// once within serveRecovery of the second kill, and no sale may be stored
// half-written (without its items, payment or job).
func TestServeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills serve processes; skipped with -short")
	}
	t.Parallel()
	bin := crashBuild(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { serveCrashRun(t, bin, d) })
	}
}

// serveCrashTill is the test's point-of-sale side: a tenant, a POS client
// and the sales the server acknowledged.
type serveCrashTill struct {
	url            string // the server's base URL
	tenant         crashTenantOf
	client, secret string
	next           atomic.Int64 // sale numbers
	mu             sync.Mutex
	acked          map[int]bool
}

func serveCrashRun(t *testing.T, bin, dialectName string) {
	dbURL := storagetest.URL(t, dialectName, true)
	till := serveCrashSeed(t, dbURL)
	logDir := t.TempDir()
	serve := func(name string) *crashWorker {
		t.Helper()
		addr := freeAddr(t)
		till.url = "http://" + addr
		p := crashStartProcess(t, bin, filepath.Join(logDir, name+".log"), `"msg":"listening"`,
			"serve", "--database-url", dbURL, "--addr", addr, "--rate-limit", "off", "--log-level", "info")
		p.waitStarted(t, 30*time.Second)
		return p
	}

	// Kill 1: during ingestion, clients still sending.
	p := serve("serve-1")
	stop := till.load(t, 8)
	time.Sleep(1500 * time.Millisecond)
	p.kill(t)
	stop()
	t.Logf("%s: kill 1 during ingestion: %d sales acknowledged", dialectName, till.count())

	// Kill 2: during processing, the clients done and the queue not yet.
	p = serve("serve-2")
	stop = till.load(t, 8)
	time.Sleep(1500 * time.Millisecond)
	stop()
	p.kill(t)
	killed := time.Now()
	st := crashCounts(t, dbURL)
	t.Logf("%s: kill 2 during processing: %d sales acknowledged, %d processed, %d jobs not completed (%d left running)",
		dialectName, till.count(), st.processed, st.jobsLeft, st.running)

	p = serve("serve-3")
	deadline := killed.Add(serveRecovery)
	for {
		st = crashCounts(t, dbURL)
		stored := serveCrashStored(t, dbURL)
		if st.failed > 0 {
			t.Fatalf("%d sales FAILED; log:\n%s", st.failed, p.tail())
		}
		if st.processed == len(stored) && st.jobsLeft == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the kill: %d/%d sales processed, %d jobs not completed (running %d); log:\n%s",
				serveRecovery, st.processed, len(stored), st.jobsLeft, st.running, p.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s: every sale processed %v after the kill", dialectName, time.Since(killed).Round(time.Millisecond))
	p.stop(t)

	// Every acknowledged sale is stored; a sale stored without an answer
	// (killed between commit and response) is whole; and each is
	// processed exactly once.
	stored := serveCrashStored(t, dbURL)
	till.mu.Lock()
	for n := range till.acked {
		require.Contains(t, stored, n, "acknowledged sale %d is stored", n)
	}
	t.Logf("%s: %d sales acknowledged, %d stored", dialectName, len(till.acked), len(stored))
	till.mu.Unlock()
	var sales []crashSale
	for n, id := range stored {
		l := crashLine(n)
		sales = append(sales, crashSale{id: id, customer: till.tenant.ids[l.customer], points: l.points, status: "PROCESSED"})
	}
	serveCrashWhole(t, dbURL)
	crashVerify(t, dbURL, sales)
}

// serveCrashSeed creates the tenant, its customers and a POS client.
func serveCrashSeed(t *testing.T, dbURL string) *serveCrashTill {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	tn := crashTenant(t, a)
	c, err := a.Backoffice.CreateClient(viewer.SystemContext(context.Background()), tn.id, apiclient.KindPos, "PDV", nil)
	require.NoError(t, err)
	return &serveCrashTill{tenant: tn, client: c.Client.ID, secret: c.Secret, acked: map[int]bool{}}
}

// load sends sales from workers goroutines until the returned stop is
// called; it records those answered 202.
func (c *serveCrashTill) load(t *testing.T, workers int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	hc := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				n := int(c.next.Add(1))
				body, err := json.Marshal(c.sale(n))
				if err != nil {
					t.Error(err)
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/api/v1/tenants/"+c.tenant.id+"/sales", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.SetBasicAuth(c.client, c.secret)
				res, err := hc.Do(req)
				if err != nil {
					continue // the server died under the request: unacknowledged
				}
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusAccepted:
					c.mu.Lock()
					c.acked[n] = true
					c.mu.Unlock()
				default:
					t.Errorf("sale %d: status %d", n, res.StatusCode)
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

func (c *serveCrashTill) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acked)
}

// sale is the body of sale n: crashLine(n) sold to its customer.
func (c *serveCrashTill) sale(n int) map[string]any {
	l := crashLine(n)
	amount := json.Number(l.amount.StringFixed(2))
	return map[string]any{
		"protocol": "PARTNER_V1",
		"customer": map[string]any{"id": c.tenant.docs[l.customer], "type": "CPF"},
		"sale": map[string]any{
			"id":             n,
			"store":          map[string]any{"id": "LOJA-01", "posId": "PDV-1"},
			"channel":        "LOJA_FISICA",
			"date":           time.Now().Add(-time.Minute).Format(time.RFC3339),
			"amount":         amount,
			"amountPayable":  amount,
			"discountAmount": json.Number("0"),
			"items": []any{map[string]any{"id": "1", "gtin": "7891000100103", "description": "Café 500 g",
				"unitPrice": json.Number(l.price.StringFixed(2)), "unitMeasure": "UN", "quantity": json.Number(l.qty.String()),
				"discounts": []any{}}},
			"payments": []any{map[string]any{"id": 1, "amount": amount, "method": "PIX"}},
		},
	}
}

// serveCrashStored maps the number of every stored sale to its id.
func serveCrashStored(t *testing.T, dbURL string) map[int]string {
	t.Helper()
	db := crashOpen(t, dbURL)
	defer db.Close()
	rows, err := db.Reads.Query(`SELECT external_id, id FROM sales`)
	require.NoError(t, err)
	defer rows.Close()
	stored := map[int]string{}
	for rows.Next() {
		var ext, id string
		require.NoError(t, rows.Scan(&ext, &id))
		n, err := strconv.Atoi(ext)
		require.NoError(t, err)
		stored[n] = id
	}
	require.NoError(t, rows.Err())
	return stored
}

// serveCrashWhole fails on a sale stored without its line, its payment or
// its job: registration is one transaction, so a crash leaves all or none.
func serveCrashWhole(t *testing.T, dbURL string) {
	t.Helper()
	db := crashOpen(t, dbURL)
	defer db.Close()
	var partial int
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM sales s WHERE
		(SELECT count(*) FROM sale_items i WHERE i.sale_id = s.id) <> 1 OR
		(SELECT count(*) FROM sale_payments p WHERE p.sale_id = s.id) <> 1`).Scan(&partial))
	require.Zero(t, partial, "sales stored without their item or payment")
	var jobs, sales int
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale'`).Scan(&jobs))
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM sales`).Scan(&sales))
	require.Equal(t, sales, jobs, "one process_sale job per stored sale")
}

// freeAddr is a loopback address with a port free at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
