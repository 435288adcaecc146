package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// pbConns is how many POS connections the benchmark keeps busy at once.
const pbConns = 64

// BenchmarkPOS measures the point-of-sale interface over HTTP with 64
// concurrent connections: discount authorization of a 20-item cart against
// 50 pdv discount campaigns, and sale ingestion (the sale, its items,
// payment and processing job committed before the 202). It reports
// throughput and the p50 and p99 latency of the requests.
//
//	go test ./rest -run '^$' -bench POS -benchtime 2000x
//	FIDELIZA_TEST_DATABASE_URL=postgres://… go test ./rest -run '^$' -bench POS -benchtime 2000x
func BenchmarkPOS(b *testing.B) {
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			db := storagetest.Open(b, d)
			log := slog.New(slog.DiscardHandler)
			a := app.New(&app.Config{DB: db, Log: log})
			srv := httptest.NewUnstartedServer(nil)
			a.Auth = auth.NewService(db.Ent, "http://"+srv.Listener.Addr().String(), "fideliza")
			srv.Config.Handler = NewHandler(a, log, Config{RateLimits: ratelimit.Unlimited()})
			srv.Start()
			b.Cleanup(srv.Close)

			sys := viewer.SystemContext(context.Background())
			tn, err := a.Backoffice.CreateTenant(sys, "Mercado Bench", nil)
			require.NoError(b, err)
			_, err = a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
			require.NoError(b, err)
			pos, err := a.Backoffice.CreateClient(sys, tn.ID, apiclient.KindPos, "pdv", nil)
			require.NoError(b, err)
			ctx := viewer.TenantContext(context.Background(), tn.ID)
			const cpf = "52998224725"
			_, err = a.Customers.CreateCustomer(ctx, customers.CustomerInput{
				Name: opt.Of("Ana Souza"), Email: opt.Of("ana@example.com"), CPF: opt.Of(cpf),
			})
			require.NoError(b, err)

			gtin := func(i int) string { return fmt.Sprintf("78910001%05d", i) }
			start, end := time.Now().Add(-time.Hour), time.Now().Add(30*24*time.Hour)
			camps := make([]*ent.CampaignCreate, 50)
			for i := range camps {
				c := db.Ent.Campaign.Create().SetName(fmt.Sprintf("pdv %d", i)).SetType(campaign.TypeDiscount).
					SetStatus(campaign.StatusActive).SetStartsAt(start).SetEndsAt(end).SetChannels([]string{"pdv"})
				if i%2 == 0 {
					c.SetDiscountMode(campaign.DiscountModePercentage).SetDiscountValue(decimal.NewFromInt(int64(5 + i%25)))
				} else {
					c.SetDiscountMode(campaign.DiscountModeFixedAmount).SetDiscountValue(decimal.New(int64(50+i*10), -2))
				}
				switch i % 3 {
				case 0: // a few products of the cart
					c.SetEligibleSkus([]string{gtin(i % 20), gtin((i + 7) % 20), gtin(100 + i)})
				case 1:
					c.SetMinSubtotal(decimal.NewFromInt(int64(50 + i)))
				}
				if i%5 == 0 {
					c.SetLimitPerCustomer(3)
				}
				camps[i] = c
			}
			require.NoError(b, db.Ent.Campaign.CreateBulk(camps...).Exec(ctx))

			items := make([]map[string]any, 20)
			for i := range items {
				items[i] = map[string]any{"id": fmt.Sprint(i + 1), "gtin": gtin(i), "unitMeasure": "UN",
					"unitPrice": json.Number(fmt.Sprintf("%d.%02d", 3+i, (i*17)%100)), "quantity": 1 + i%3, "discounts": []any{}}
			}
			items[3]["discounts"] = []any{map[string]any{"promotionId": nil, "partnerPromotionId": "0",
				"unitDiscount": 0.5, "unitPriceWithDiscount": 5.01, "quantity": 1}}
			authorizeBody, _ := json.Marshal(map[string]any{
				"sessionId": "sess-bench", "protocol": "PARTNER",
				"customer": map[string]any{"id": cpf, "type": "CPF"},
				"sale": map[string]any{"id": "T-1", "store": map[string]any{"id": "LOJA-01", "posId": "PDV-1"},
					"date": time.Now().Format(time.RFC3339), "items": items},
			})
			var receipt atomic.Int64 // unique sale ids across every run of sale_ingestion
			receipt.Store(1_000_000)
			saleBody := func() []byte {
				body, _ := json.Marshal(map[string]any{
					"protocol": "PARTNER_V1",
					"customer": map[string]any{"id": cpf, "type": "CPF"},
					"sale": map[string]any{
						"id": receipt.Add(1), "store": map[string]any{"id": "LOJA-01", "posId": "PDV-1"}, "channel": "STORE",
						"date": time.Now().UTC().Format(time.RFC3339), "amount": 45.3, "amountPayable": 45.3,
						"items": []map[string]any{
							{"id": "1", "gtin": gtin(1), "description": "Café 500 g", "unitPrice": 18.9, "quantity": 1},
							{"id": "2", "gtin": gtin(2), "description": "Refrigerante 2 l", "unitPrice": 9.45, "quantity": 2},
							{"id": "3", "gtin": gtin(3), "description": "Pão de forma", "unitPrice": 7.5, "quantity": 1},
						},
						"payments": []map[string]any{{"id": 1, "amount": 45.3, "method": "PIX"}},
					},
				})
				return body
			}

			client := &http.Client{Transport: &http.Transport{
				MaxIdleConns: pbConns, MaxIdleConnsPerHost: pbConns, MaxConnsPerHost: pbConns, IdleConnTimeout: time.Minute,
			}}
			b.Cleanup(client.CloseIdleConnections)
			base := srv.URL + "/api/v1/tenants/" + tn.ID
			post := func(path string, body []byte, want int) error {
				req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
				if err != nil {
					return err
				}
				req.SetBasicAuth(pos.Client.ID, pos.Secret)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != want {
					return fmt.Errorf("POST %s: status %d: %s", path, resp.StatusCode, got)
				}
				return nil
			}

			// The cart does get discounts: the benchmark measures real work.
			var first struct {
				Messages []messageJSON `json:"messages"`
			}
			req, _ := http.NewRequest(http.MethodPost, base+"/discounts/authorizations", bytes.NewReader(authorizeBody))
			req.SetBasicAuth(pos.Client.ID, pos.Secret)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			require.NoError(b, err)
			require.NoError(b, json.NewDecoder(resp.Body).Decode(&first))
			resp.Body.Close()
			require.Equal(b, http.StatusOK, resp.StatusCode)
			require.Equal(b, "SUCCESS", first.Messages[0].Type, "%+v", first.Messages)
			b.Logf("%s: authorize answers %q", d, first.Messages[0].Content)

			b.Run("authorize", func(b *testing.B) {
				pbRun(b, func() error { return post("/discounts/authorizations", authorizeBody, http.StatusOK) })
			})
			before := receipt.Load()
			b.Run("sale_ingestion", func(b *testing.B) {
				pbRun(b, func() error { return post("/sales", saleBody(), http.StatusAccepted) })
			})
			var sales, jobs int64
			require.NoError(b, db.SQL.QueryRow(`SELECT count(*) FROM sales`).Scan(&sales))
			require.NoError(b, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale'`).Scan(&jobs))
			require.Equal(b, receipt.Load()-before, sales, "one sale per 202")
			require.Equal(b, sales, jobs, "one job per sale")
		})
	}
}

// pbRun makes b.N requests with do from pbConns goroutines and reports the
// throughput and the latency percentiles.
func pbRun(b *testing.B, do func() error) {
	var next atomic.Int64
	latencies := make([][]time.Duration, pbConns)
	var failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	b.ResetTimer()
	started := time.Now()
	for g := range pbConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				err := do()
				latencies[g] = append(latencies[g], time.Since(t0))
				if err != nil {
					failed.Add(1)
					once.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	b.StopTimer()
	if firstErr != nil {
		b.Fatalf("%d of %d requests failed; first: %v", failed.Load(), b.N, firstErr)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	pct := func(p float64) float64 { // nearest rank
		i := int(math.Ceil(float64(len(all))*p)) - 1
		return float64(all[max(0, min(i, len(all)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}
