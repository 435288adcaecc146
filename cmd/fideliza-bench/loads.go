package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/storage"
)

// loads drives the service's interfaces.
type loads struct {
	bases   []string // the service's processes, sent to in turn
	turn    atomic.Uint64
	f       *fixture
	hc      *http.Client
	token   string
	receipt atomic.Int64 // unique sale and order ids
}

func newLoads(bases []string, f *fixture, conns int) *loads {
	l := &loads{bases: bases, f: f, hc: client(conns)}
	l.receipt.Store(time.Now().Unix() * 1000)
	return l
}

// signIn obtains an access token of the tenant's OAuth client.
func (l *loads) signIn(ctx context.Context) error {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {l.f.OAuthID}, "client_secret": {l.f.OAuthSecret}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.base()+"/auth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := l.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		return fmt.Errorf("no access token (status %d)", res.StatusCode)
	}
	l.token = tok.AccessToken
	return nil
}

// base is the base URL of the next process in turn.
func (l *loads) base() string { return l.bases[l.turn.Add(1)%uint64(len(l.bases))] }

func (l *loads) bearer(r *http.Request) { r.Header.Set("Authorization", "Bearer "+l.token) }
func (l *loads) basic(r *http.Request)  { r.SetBasicAuth(l.f.POSID, l.f.POSSecret) }
func (l *loads) pos(path string) string { return l.base() + "/api/v1/tenants/" + l.f.TenantID + path }

// customerCPF picks one of the generated customers.
func (l *loads) customerCPF() string { return cpf(100000000 + rand.IntN(l.f.Customers)) }

func identifyBody(cpf string) map[string]any {
	return map[string]any{"sessionId": "bench", "protocol": "PARTNER",
		"customer": map[string]any{"id": cpf, "type": "CPF"},
		"store":    map[string]any{"id": benchStore, "posId": "PDV-1"}}
}

// posCart is a 20-item cart at the point of sale.
func posCart(cpf string) map[string]any {
	items := make([]map[string]any, 20)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprint(i + 1), "gtin": gtin(i), "unitMeasure": "UN",
			"unitPrice": json.Number(fmt.Sprintf("%d.%02d", 3+i, (i*17)%100)), "quantity": 1 + i%3, "discounts": []any{}}
	}
	return map[string]any{"sessionId": "bench", "protocol": "PARTNER",
		"customer": map[string]any{"id": cpf, "type": "CPF"},
		"sale": map[string]any{"id": "T-1", "store": map[string]any{"id": benchStore, "posId": "PDV-1"},
			"date": time.Now().Format(time.RFC3339), "items": items}}
}

// onlineCart is a 30-item e-commerce cart for validate; its items' categories
// come from the catalogue.
func onlineCart(customerID string) map[string]any {
	items := make([]map[string]any, 30)
	for i := range items {
		items[i] = map[string]any{"sku": sku(i),
			"quantity": 1 + i%3, "unit_price": json.Number(fmt.Sprintf("%d.%02d", 5+i, i))}
	}
	return map[string]any{"customer_id": customerID, "store_id": benchStore, "channel": "ecommerce",
		"cart": map[string]any{"items": items}}
}

// op returns the load of a named operation.
func (l *loads) op(name string) op {
	switch name {
	case "identify":
		return func(ctx context.Context) (time.Duration, error) {
			return call(ctx, l.hc, http.MethodPost, l.pos("/customers/identify"), identifyBody(l.customerCPF()), l.basic, http.StatusOK, nil)
		}
	case "authorize":
		return func(ctx context.Context) (time.Duration, error) {
			return call(ctx, l.hc, http.MethodPost, l.pos("/discounts/authorizations"), posCart(l.customerCPF()), l.basic, http.StatusOK, nil)
		}
	case "validate":
		return func(ctx context.Context) (time.Duration, error) {
			return call(ctx, l.hc, http.MethodPost, l.base()+"/v1/campaigns/validate", onlineCart(l.f.SampleID), l.bearer, http.StatusOK, nil)
		}
	case "redeem":
		return l.redeem
	case "customer list":
		return func(ctx context.Context) (time.Duration, error) {
			return call(ctx, l.hc, http.MethodGet, l.base()+"/v1/customers?limit=20", nil, l.bearer, http.StatusOK, nil)
		}
	case "customer search":
		return func(ctx context.Context) (time.Duration, error) {
			q := url.Values{"search": {fmt.Sprintf("%s %d", surnames[rand.IntN(len(surnames))], rand.IntN(l.f.Customers))}, "limit": {"20"}}
			return call(ctx, l.hc, http.MethodGet, l.base()+"/v1/customers?"+q.Encode(), nil, l.bearer, http.StatusOK, nil)
		}
	}
	panic("unknown operation " + name)
}

// redeem validates a cart (not measured), then redeems its first eligible
// campaign for a new order (measured).
func (l *loads) redeem(ctx context.Context) (time.Duration, error) {
	var v struct {
		Token    string `json:"validation_token"`
		Eligible []struct {
			CampaignID string `json:"campaign_id"`
		} `json:"eligible_campaigns"`
	}
	if _, err := call(ctx, l.hc, http.MethodPost, l.base()+"/v1/campaigns/validate", onlineCart(l.f.SampleID), l.bearer, http.StatusOK, &v); err != nil {
		return 0, err
	}
	if len(v.Eligible) == 0 {
		return 0, fmt.Errorf("no eligible campaign to redeem")
	}
	body := map[string]any{"customer_id": l.f.SampleID, "order_id": fmt.Sprintf("order-%d", l.receipt.Add(1)),
		"validation_token": v.Token, "amount_paid": json.Number("250.00")}
	return call(ctx, l.hc, http.MethodPost, l.base()+"/v1/campaigns/"+v.Eligible[0].CampaignID+"/redeem", body, l.bearer, http.StatusCreated, nil)
}

// saleBody is a three-item sale with a new receipt number.
func (l *loads) saleBody() map[string]any {
	return map[string]any{"protocol": "PARTNER_V1",
		"customer": map[string]any{"id": l.customerCPF(), "type": "CPF"},
		"sale": map[string]any{
			"id": l.receipt.Add(1) % 100_000_000_000, "store": map[string]any{"id": benchStore, "posId": "PDV-1"}, "channel": "STORE",
			"date": time.Now().UTC().Format(time.RFC3339), "amount": 45.3, "amountPayable": 45.3,
			"items": []map[string]any{
				{"id": "1", "gtin": gtin(1), "description": "Café 500 g", "unitPrice": 18.9, "quantity": 1},
				{"id": "2", "gtin": gtin(2), "description": "Refrigerante 2 l", "unitPrice": 9.45, "quantity": 2},
				{"id": "3", "gtin": gtin(3), "description": "Pão de forma", "unitPrice": 7.5, "quantity": 1},
			},
			"payments": []map[string]any{{"id": 1, "amount": 45.3, "method": "PIX"}},
		}}
}

// sales ingests sales for --sale-duration (sustained), then waits until the workers
// have processed every one. Processing throughput is sales processed per
// second from the first ingestion to the drained queue.
func (l *loads) sales(ctx context.Context, db *storage.DB, o options) (result, result, error) {
	started := time.Now()
	ingested := run(ctx, "sale ingestion", o.conns, o.saleDuration, 0, l.sale)
	loadEnded := time.Now()
	if err := waitDrained(ctx, db); err != nil {
		return ingested, result{}, err
	}
	elapsed := time.Since(started)
	var processed, failed int
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM sales WHERE status = 'PROCESSED'`).Scan(&processed); err != nil {
		return ingested, result{}, err
	}
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM sales WHERE status = 'FAILED'`).Scan(&failed); err != nil {
		return ingested, result{}, err
	}
	return ingested, result{Name: "sale processing (until drained)", Requests: processed, Errors: failed,
		Elapsed: elapsed, PerSecond: float64(processed) / elapsed.Seconds(), DrainedAfter: time.Since(loadEnded)}, nil
}

// sale registers one sale (answered 202 once stored).
func (l *loads) sale(ctx context.Context) (time.Duration, error) {
	return call(ctx, l.hc, http.MethodPost, l.pos("/sales"), l.saleBody(), l.basic, http.StatusAccepted, nil)
}

// waitDrained waits until no sale waits to be processed.
func waitDrained(ctx context.Context, db *storage.DB) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var pending int
		if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM sales WHERE status = 'RECEIVED'`).Scan(&pending); err != nil {
			return err
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d sales still unprocessed after 10 minutes", pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measureRawTx is the database baseline: transactions of the shape of sale
// ingestion (a sale, three items, a payment and a job row) written with
// database/sql into tables of their own, with nothing else around them.
func measureRawTx(ctx context.Context, db *storage.DB, o options) (result, error) {
	ddl := []string{
		`CREATE TABLE IF NOT EXISTS bench_sales (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, store_id TEXT NOT NULL,
			external_id TEXT NOT NULL, customer_document TEXT NOT NULL, sold_at TIMESTAMP NOT NULL, amount TEXT NOT NULL,
			amount_payable TEXT NOT NULL, status TEXT NOT NULL, created_at TIMESTAMP NOT NULL)`,
		`CREATE UNIQUE INDEX IF NOT EXISTS bench_sales_receipt ON bench_sales (tenant_id, store_id, external_id)`,
		`CREATE TABLE IF NOT EXISTS bench_sale_items (id TEXT PRIMARY KEY, sale_id TEXT NOT NULL REFERENCES bench_sales (id),
			gtin TEXT NOT NULL, description TEXT NOT NULL, unit_price TEXT NOT NULL, quantity TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_sale_payments (id TEXT PRIMARY KEY, sale_id TEXT NOT NULL REFERENCES bench_sales (id),
			method TEXT NOT NULL, amount TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS bench_jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, args TEXT NOT NULL, created_at TIMESTAMP NOT NULL)`,
	}
	for _, q := range ddl {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			return result{}, err
		}
	}
	ph := func(n int) string { // placeholders of the dialect
		p := make([]string, n)
		for i := range p {
			p[i] = "?"
			if db.Dialect == dialect.Postgres {
				p[i] = fmt.Sprintf("$%d", i+1)
			}
		}
		return strings.Join(p, ", ")
	}
	var seq atomic.Int64
	return run(ctx, "raw sale transaction", o.conns, o.duration, 0, func(ctx context.Context) (time.Duration, error) {
		started := time.Now()
		id := fmt.Sprint(seq.Add(1))
		now := time.Now().UTC()
		err := inTx(ctx, db.SQL, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO bench_sales VALUES (`+ph(10)+`)`,
				"s"+id, "tenant", benchStore, id, "52998224725", now, "45.3", "45.3", "RECEIVED", now); err != nil {
				return err
			}
			for i := range 3 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO bench_sale_items VALUES (`+ph(6)+`)`,
					fmt.Sprintf("i%s-%d", id, i), "s"+id, gtin(i), "item", "9.45", "1"); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO bench_sale_payments VALUES (`+ph(4)+`)`, "p"+id, "s"+id, "PIX", "45.3"); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO bench_jobs VALUES (`+ph(4)+`)`, "j"+id, "process_sale", `{"sale_id":"s`+id+`"}`, now)
			return err
		})
		return time.Since(started), err
	}), nil
}

func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
