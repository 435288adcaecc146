package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// injEnv is a POS tenant served over HTTP.
type injEnv struct {
	db               *storage.DB
	srv              *httptest.Server
	tenant           string
	clientID, secret string
}

func injSetup(t *testing.T, db *storage.DB) *injEnv {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	a := app.New(&app.Config{DB: db, Log: log})
	srv := httptest.NewUnstartedServer(nil)
	a.Auth = auth.NewService(db.Ent, "http://"+srv.Listener.Addr().String(), "fideliza")
	srv.Config.Handler = contractCheck(t, NewHandler(a, log, Config{}))
	srv.Start()
	t.Cleanup(srv.Close)
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, "Mercado Injeção", nil)
	require.NoError(t, err)
	_, err = a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
	require.NoError(t, err)
	c, err := a.Backoffice.CreateClient(sys, tn.ID, apiclient.KindPos, "pdv", nil)
	require.NoError(t, err)
	return &injEnv{db: db, srv: srv, tenant: tn.ID, clientID: c.Client.ID, secret: c.Secret}
}

// injSale is a valid sale of an identified customer: two items, one payment.
func injSale(receipt int64) []byte {
	body, _ := json.Marshal(map[string]any{
		"protocol": "PARTNER_V1",
		"customer": map[string]any{"id": "529.982.247-25", "type": "CPF"},
		"sale": map[string]any{
			"id": receipt, "store": map[string]any{"id": "LOJA-01", "posId": "PDV-3"}, "channel": "STORE",
			"date": "2026-03-10T14:22:05Z", "amount": 37.8, "amountPayable": 37.8, "discountAmount": 0,
			"items": []map[string]any{
				{"id": "1", "gtin": "7891000100103", "description": "Café 500 g", "unitPrice": 18.9, "quantity": 1},
				{"id": "2", "gtin": "7894900011517", "description": "Refrigerante 2 l", "unitPrice": 9.45, "quantity": 2},
			},
			"payments": []map[string]any{{"id": 1, "amount": 37.8, "method": "CREDIT_CARD", "installments": 1}},
		},
	})
	return body
}

type injResp struct {
	status int
	header http.Header
	body   []byte
}

func (e *injEnv) postSale(t *testing.T, body []byte) injResp {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/api/v1/tenants/"+e.tenant+"/sales", bytes.NewReader(body))
	require.NoError(t, err)
	req.SetBasicAuth(e.clientID, e.secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Correlation-Id", "6f1c2a8e-3c1d-4e0b-9a55-0d6c1f2b7e41")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return injResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// injCounts counts the rows a sale registration writes.
func (e *injEnv) injCounts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"sales", "sale_items", "sale_payments", "river_job"} {
		var n int
		require.NoError(t, e.db.SQL.QueryRow(`SELECT count(*) FROM `+table).Scan(&n))
		out[table] = n
	}
	return out
}

// injFail makes every insert into table fail inside the database, and
// returns the statements that undo it.
func injFail(t *testing.T, db *storage.DB, table string) (undo []string) {
	t.Helper()
	var do []string
	if db.Dialect == dialect.SQLite {
		do = []string{`CREATE TRIGGER fail_insert BEFORE INSERT ON ` + table + ` BEGIN SELECT RAISE(ABORT, 'injected'); END`}
		undo = []string{`DROP TRIGGER fail_insert`}
	} else {
		do = []string{
			`CREATE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$`,
			`CREATE TRIGGER fail_insert BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION fail_insert()`,
		}
		undo = []string{`DROP TRIGGER fail_insert ON ` + table, `DROP FUNCTION fail_insert()`}
	}
	for _, q := range do {
		_, err := db.SQL.Exec(q)
		require.NoError(t, err, q)
	}
	return undo
}

// TestSaleFailureBeforeCommit: a failure injected after the sale's rows are
// written and before the transaction commits (the insert of its job, or of
// its payments) leaves nothing behind, and the POS gets a 5xx problem it
// will retry, never a 202. Once the fault is gone the retry is accepted and
// stores one sale and one job.
func TestSaleFailureBeforeCommit(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"river_job", "sale_payments"} {
		t.Run(table, func(t *testing.T) {
			t.Parallel()
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				e := injSetup(t, db)
				undo := injFail(t, db, table)

				r := e.postSale(t, injSale(40021))
				require.GreaterOrEqual(t, r.status, 500, "status %d: %s", r.status, r.body)
				require.Less(t, r.status, 600)
				require.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
				var p map[string]any
				require.NoError(t, json.Unmarshal(r.body, &p), "%s", r.body)
				require.Equal(t, "/problems/internal-error", p["type"])
				require.EqualValues(t, r.status, p["status"])
				require.Equal(t, "6f1c2a8e-3c1d-4e0b-9a55-0d6c1f2b7e41", p["correlationId"])
				require.Equal(t, "/api/v1/tenants/"+e.tenant+"/sales", p["instance"])
				require.NotContains(t, string(r.body), "injected", "the cause is logged, not returned")
				require.Equal(t, map[string]int{"sales": 0, "sale_items": 0, "sale_payments": 0, "river_job": 0}, e.injCounts(t))

				for _, q := range undo {
					_, err := db.SQL.Exec(q)
					require.NoError(t, err, q)
				}
				for range 2 { // the retry, and a duplicate of it: one sale, one job
					r = e.postSale(t, injSale(40021))
					require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
					require.Contains(t, string(r.body), `"status":"RECEIVED"`)
					require.Equal(t, map[string]int{"sales": 1, "sale_items": 2, "sale_payments": 1, "river_job": 1}, e.injCounts(t))
				}
				var saleID, kind, args string
				require.NoError(t, db.SQL.QueryRow(`SELECT id FROM sales`).Scan(&saleID))
				require.NoError(t, db.SQL.QueryRow(`SELECT kind, CAST(args AS TEXT) FROM river_job`).Scan(&kind, &args))
				require.Equal(t, "process_sale", kind)
				require.True(t, strings.Contains(args, `"sale_id":"`+saleID+`"`) || strings.Contains(args, `"sale_id": "`+saleID+`"`),
					"the job processes the stored sale: %s", args)
			})
		})
	}
}
