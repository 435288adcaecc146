package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Till is a test's point-of-sale side: a tenant, a POS client, the servers
// it sends sales to and the sales they acknowledged.
type Till struct {
	Tenant         Tenant
	client, secret string
	next           atomic.Int64 // sale numbers
	mu             sync.Mutex
	urls           []string        // the servers' base URLs
	down           map[string]bool // servers that did not answer: no more sales go to them
	acked          map[int]bool
	sent           map[string]*Sent
}

// Sent is what one server did with the sales sent to it.
type Sent struct {
	Acknowledged int // answered 202
	Unanswered   int // the connection failed: the server died under the request, or was dead
}

// NewTill creates the tenant, its customers and a POS client on the
// database at dbURL.
func NewTill(t *testing.T, dbURL string) *Till {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	tn := NewTenant(t, a)
	c, err := a.Backoffice.CreateClient(viewer.SystemContext(context.Background()), tn.ID, apiclient.KindPos, "PDV", nil)
	require.NoError(t, err)
	return &Till{Tenant: tn, client: c.Client.ID, secret: c.Secret, acked: map[int]bool{}, sent: map[string]*Sent{}}
}

// SendTo makes the servers at these base URLs the ones the next sales go
// to, in turn.
func (c *Till) SendTo(urls ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.urls, c.down = urls, map[string]bool{}
	for _, u := range urls {
		if c.sent[u] == nil {
			c.sent[u] = &Sent{}
		}
	}
}

// Load sends sales from workers goroutines until the returned stop is
// called, each to the next server in turn, and records those answered 202.
// A server whose connection fails gets no more sales, as a load balancer
// would take it out; any answer but 202 fails the test.
func (c *Till) Load(t *testing.T, workers int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	hc := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				n := int(c.next.Add(1))
				url, ok := c.pick(n)
				if !ok {
					return // every server is down
				}
				body, err := json.Marshal(c.sale(n))
				if err != nil {
					t.Error(err)
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/tenants/"+c.Tenant.ID+"/sales", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.SetBasicAuth(c.client, c.secret)
				res, err := hc.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						c.record(url, n, false) // the server died under the request: unacknowledged
					}
					continue
				}
				res.Body.Close()
				if res.StatusCode != http.StatusAccepted {
					t.Errorf("sale %d at %s: status %d", n, url, res.StatusCode)
					return
				}
				c.record(url, n, true)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// pick is the server sale n goes to: the n-th in turn of those up.
func (c *Till) pick(n int) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var up []string
	for _, u := range c.urls {
		if !c.down[u] {
			up = append(up, u)
		}
	}
	if len(up) == 0 {
		return "", false
	}
	return up[n%len(up)], true
}

func (c *Till) record(url string, n int, acked bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if acked {
		c.acked[n] = true
		c.sent[url].Acknowledged++
		return
	}
	c.down[url] = true
	c.sent[url].Unanswered++
}

// Count is how many sales were acknowledged.
func (c *Till) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acked)
}

// Sent is what the server at url did with the sales sent to it.
func (c *Till) Sent(url string) Sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.sent[url]; s != nil {
		return *s
	}
	return Sent{}
}

// PointsPayment is the part of a sale paid with points: the hold the
// service answered and the R$ it pays.
type PointsPayment struct {
	HoldID string
	Amount decimal.Decimal
}

// Paid is a part of a sale paid with a hold: its method (POINTS,
// CASHBACK, GIFT_CARD), the hold and the R$ it pays.
type Paid struct {
	Method, HoldID string
	Amount         decimal.Decimal
}

// sale is the body of sale n: Line(n) sold to its customer, paid by PIX
// but for the parts paid with holds.
func (c *Till) sale(n int, paid ...Paid) map[string]any {
	l := Line(n)
	amount := json.Number(l.Amount.StringFixed(2))
	payments := []any{}
	rest := l.Amount
	for i, p := range paid {
		payments = append(payments, map[string]any{"id": i + 1, "amount": json.Number(p.Amount.StringFixed(2)),
			"method": p.Method, "holdId": p.HoldID})
		rest = rest.Sub(p.Amount)
	}
	payments = append(payments, map[string]any{"id": len(paid) + 1, "amount": json.Number(rest.StringFixed(2)), "method": "PIX"})
	return map[string]any{
		"protocol": "PARTNER_V1",
		"customer": map[string]any{"id": c.Tenant.Docs[l.Customer], "type": "CPF"},
		"sale": map[string]any{
			"id":             n,
			"store":          map[string]any{"id": "LOJA-01", "posId": "PDV-1"},
			"channel":        "LOJA_FISICA",
			"date":           time.Now().Add(-time.Minute).Format(time.RFC3339),
			"amount":         amount,
			"amountPayable":  amount,
			"discountAmount": json.Number("0"),
			"items": []any{map[string]any{"id": "1", "gtin": "7891000100103", "description": "Café 500 g",
				"unitPrice": json.Number(l.Price.StringFixed(2)), "unitMeasure": "UN", "quantity": json.Number(l.Qty.String()),
				"discounts": []any{}}},
			"payments": payments,
		},
	}
}

// post sends body to the POS path of the till's tenant at url and decodes
// the answer into out; status 0 is a failed connection.
func (c *Till) post(t *testing.T, url, path string, body, out any) int {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url+"/api/v1/tenants/"+c.Tenant.ID+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(c.client, c.secret)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if out != nil {
		require.NoError(t, json.NewDecoder(res.Body).Decode(out))
	}
	return res.StatusCode
}

// Hold asks the server at url to hold the points that pay amount of sale
// n, as the till does before registering a sale paid with points.
func (c *Till) Hold(t *testing.T, url string, n int, amount decimal.Decimal) PointsPayment {
	t.Helper()
	var out struct {
		Hold struct {
			ID string `json:"id"`
		} `json:"hold"`
	}
	status := c.post(t, url, "/points/holds", map[string]any{"sessionId": "sale-" + strconv.Itoa(n),
		"customer": map[string]any{"id": c.Tenant.Docs[Line(n).Customer], "type": "CPF"},
		"store":    map[string]any{"id": "LOJA-01"}, "amount": json.Number(amount.StringFixed(2))}, &out)
	require.Equal(t, http.StatusCreated, status, "hold of sale %d", n)
	return PointsPayment{HoldID: out.Hold.ID, Amount: amount}
}

// Register sends sale n, part of it paid with points, to the server at url
// and answers the status, 0 when the connection failed.
func (c *Till) Register(t *testing.T, url string, n int, points PointsPayment) int {
	t.Helper()
	return c.RegisterPaid(t, url, n, Paid{Method: "POINTS", HoldID: points.HoldID, Amount: points.Amount})
}

// RegisterPaid sends sale n, the parts paid with holds, to the server at
// url and answers the status, 0 when the connection failed.
func (c *Till) RegisterPaid(t *testing.T, url string, n int, paid ...Paid) int {
	t.Helper()
	return c.post(t, url, "/sales", c.sale(n, paid...), nil)
}

// HoldWallet asks the server at url to hold amount of sale n of the
// customer's cashback (code "") or of the gift card of code, as the till
// does before registering a sale paid with them.
func (c *Till) HoldWallet(t *testing.T, url string, n int, code string, amount decimal.Decimal) Paid {
	t.Helper()
	var out struct {
		Hold struct {
			ID string `json:"id"`
		} `json:"hold"`
	}
	body := map[string]any{"sessionId": "sale-" + strconv.Itoa(n),
		"customer": map[string]any{"id": c.Tenant.Docs[Line(n).Customer], "type": "CPF"},
		"store":    map[string]any{"id": "LOJA-01"}, "wallet": "CASHBACK", "amount": json.Number(amount.StringFixed(2))}
	if code != "" {
		body["wallet"], body["giftCardCode"] = "GIFT_CARD", code
	}
	status := c.post(t, url, "/wallets/holds", body, &out)
	require.Equal(t, http.StatusCreated, status, "%s hold of sale %d", body["wallet"], n)
	return Paid{Method: body["wallet"].(string), HoldID: out.Hold.ID, Amount: amount}
}

// WaitProcessed waits until every stored sale is processed and every sale
// job completed, failing the test at deadline or at a FAILED sale; logs
// gives the processes' logs for the failure message.
func WaitProcessed(t *testing.T, dbURL string, deadline time.Time, logs func() string) {
	t.Helper()
	for {
		st := Counts(t, dbURL)
		stored := len(Stored(t, dbURL))
		if st.Failed > 0 {
			t.Fatalf("%d sales FAILED; log:\n%s", st.Failed, logs())
		}
		if st.Processed == stored && st.JobsLeft == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d/%d sales processed, %d jobs not completed (running %d); log:\n%s",
				st.Processed, stored, st.JobsLeft, st.Running, logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Verify checks, once every sale is processed, that every acknowledged sale
// is stored, that a sale stored without an answer (its server killed
// between commit and response) is whole, and that each stored sale was
// processed exactly once (Verify).
func (c *Till) Verify(t *testing.T, dbURL string) {
	t.Helper()
	stored := Stored(t, dbURL)
	c.mu.Lock()
	for n := range c.acked {
		require.Contains(t, stored, n, "acknowledged sale %d is stored", n)
	}
	t.Logf("%d sales acknowledged, %d stored", len(c.acked), len(stored))
	c.mu.Unlock()
	var sales []Sale
	for n, id := range stored {
		l := Line(n)
		sales = append(sales, Sale{ID: id, Customer: c.Tenant.IDs[l.Customer], Points: l.Points, Status: "PROCESSED"})
	}
	Whole(t, dbURL)
	Verify(t, dbURL, sales)
}

// Stored maps the number of every stored sale to its id.
func Stored(t *testing.T, dbURL string) map[int]string {
	t.Helper()
	db := Open(t, dbURL)
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

// Whole fails on a sale stored without its line, its payment or its job:
// registration is one transaction, so a crash leaves all or none.
func Whole(t *testing.T, dbURL string) {
	t.Helper()
	db := Open(t, dbURL)
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
