package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// BenchmarkValidate measures POST /v1/campaigns/validate over HTTP with 200
// active campaigns (every type, with channel, segment, SKU, category and
// minimum-subtotal rules) and a 30-item cart: latency one request at a time,
// and throughput with 8 concurrent clients.
//
//	go test ./rest -run '^$' -bench Validate -benchtime 300x
//	FIDELIZA_TEST_DATABASE_URL=postgres://… go test ./rest -run '^$' -bench Validate -benchtime 300x
func BenchmarkValidate(b *testing.B) {
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			db := storagetest.Open(b, d)
			s := newScopeServer(b, db, unlimitedRates)
			ctx := viewer.TenantContext(context.Background(), s.tenantID)
			seg, err := db.Ent.Segment.Create().SetName("vip").Save(ctx)
			require.NoError(b, err)
			cust, err := s.app.Customers.CreateCustomer(ctx, customers.CustomerInput{
				Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725"),
			})
			require.NoError(b, err)
			require.NoError(b, db.Ent.Customer.UpdateOneID(cust.ID).AddSegmentIDs(seg.ID).Exec(ctx))
			start, end := time.Now().Add(-time.Hour), time.Now().Add(30*24*time.Hour)
			batch := make([]*ent.CampaignCreate, 0, 200)
			for i := range 200 {
				c := db.Ent.Campaign.Create().SetName(fmt.Sprintf("campaign %d", i)).
					SetStatus(campaign.StatusActive).SetStartsAt(start).SetEndsAt(end)
				switch i % 4 {
				case 0:
					c.SetType(campaign.TypeDiscount).SetDiscountMode(campaign.DiscountModePercentage).SetDiscountValue(decimal.NewFromInt(int64(5 + i%20)))
				case 1:
					c.SetType(campaign.TypeCashback).SetDiscountMode(campaign.DiscountModeFixedAmount).SetDiscountValue(decimal.NewFromInt(10)).SetCreditAfterDays(7)
				case 2:
					c.SetType(campaign.TypeBonusPoints).SetMultiplier(decimal.RequireFromString("1.5"))
				default:
					c.SetType(campaign.TypeGift).SetGiftSku("GIFT-1")
				}
				switch i % 5 {
				case 0:
					c.SetChannels([]string{"ecommerce", "app"})
				case 1:
					c.SetSegmentID(seg.ID)
				case 2:
					c.SetEligibleSkus([]string{fmt.Sprintf("SKU-%d", i%30), fmt.Sprintf("SKU-%d", (i+7)%30)})
				case 3:
					c.SetEligibleCategories([]string{fmt.Sprintf("cat-%d", i%6)})
				default:
					c.SetMinSubtotal(decimal.NewFromInt(int64(100 + i)))
				}
				if i%3 == 0 {
					c.SetLimitPerCustomer(5)
				}
				batch = append(batch, c)
			}
			require.NoError(b, db.Ent.Campaign.CreateBulk(batch...).Exec(ctx))
			items := make([]map[string]any, 30)
			for i := range items {
				items[i] = map[string]any{"sku": fmt.Sprintf("SKU-%d", i), "category": fmt.Sprintf("cat-%d", i%6),
					"quantity": 1 + i%3, "unit_price": json.Number(fmt.Sprintf("%d.%02d", 5+i, i))}
			}
			body, _ := json.Marshal(map[string]any{"customer_id": cust.ID, "store_id": "LOJA-01", "channel": "ecommerce",
				"cart": map[string]any{"subtotal": 0, "items": items}})
			token := s.tokenFor(b, "campaigns:read")
			validate := func(b *testing.B) {
				req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/v1/campaigns/validate", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
				}
			}
			b.Run("latency", func(b *testing.B) {
				for b.Loop() {
					validate(b)
				}
			})
			b.Run("throughput_8_clients", func(b *testing.B) {
				b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 concurrent clients
				started := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						validate(b)
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(started).Seconds(), "validations/s")
			})
		})
	}
}
