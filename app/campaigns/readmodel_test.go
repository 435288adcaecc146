package campaigns_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// readModelShop is a tenant with a store and a customer, and the campaign
// inputs of its tests.
type readModelShop struct {
	tenantID string
	cpf      string
	ctx      context.Context
}

func newReadModelShop(t *testing.T, db *storage.DB) (*app.App, readModelShop) {
	t.Helper()
	env := apptest.New(t, db, apptest.WithTenant("Mercado Leitura"), apptest.WithStore("LOJA-01", "Loja Centro", "SP"))
	const cpf = "71428793860"
	_, err := env.App.Customers.CreateCustomer(env.Ctx, customers.CustomerInput{Name: opt.Of("Ana"), Email: opt.Of("ana@x.example"), CPF: opt.Of(cpf)})
	require.NoError(t, err)
	return env.App, readModelShop{tenantID: env.TenantID, cpf: cpf, ctx: env.Ctx}
}

// campaign creates a running campaign of typ (a 10% discount, or double
// points) through a.
func (s readModelShop) campaign(t *testing.T, a *app.App, name, typ string) string {
	t.Helper()
	start, end := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	in := campaigns.CampaignInput{Name: name, Type: typ, StartsAt: &start, EndsAt: &end}
	if typ == "discount" {
		ten := decimal.NewFromInt(10)
		in.Discount = &campaigns.DiscountInput{Mode: "percentage", Value: &ten}
	} else {
		two := decimal.NewFromInt(2)
		in.Discount = &campaigns.DiscountInput{Multiplier: &two}
	}
	c, err := a.Campaigns.CreateCampaign(s.ctx, in)
	require.NoError(t, err)
	return c.ID
}

// discounted answers the campaigns whose discounts authorize through a gives
// the customer on one item.
func (s readModelShop) discounted(t *testing.T, a *app.App) []string {
	t.Helper()
	price, one, now := decimal.RequireFromString("20.00"), decimal.NewFromInt(1), time.Now()
	out, err := a.POS.AuthorizeDiscounts(s.ctx, pos.AuthorizeInput{
		SessionID: "s1", Protocol: "PARTNER", Customer: &pos.POSCustomer{ID: s.cpf, Type: "CPF"}, StoreID: "LOJA-01", Date: &now,
		Items: []pos.POSItem{{ID: "1", GTIN: "7891000100103", UnitMeasure: "UN", UnitPrice: &price, Quantity: &one}},
	})
	require.NoError(t, err)
	var ids []string
	for _, it := range out.Items {
		for _, d := range it.Discounts {
			if d.PromotionID != nil {
				ids = append(ids, *d.PromotionID)
			}
		}
	}
	return ids
}

// TestCampaignChangesReachEveryInstance: a campaign created, paused or
// ended through one application instance is honoured by authorize on
// another instance of the same PostgreSQL database within a second (the
// change feed's notification), and on SQLite by the same instance at once,
// in the request after the change.
func TestCampaignChangesReachEveryInstance(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, true)
			open := func() *storage.DB {
				db, err := storage.Open(context.Background(), u)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				return db
			}
			writer, shop := newReadModelShop(t, open())
			reader := writer // SQLite: one process
			if d == "postgres" {
				reader = app.New(&app.Config{DB: open(), Log: slog.New(slog.DiscardHandler)})
			}
			require.Empty(t, shop.discounted(t, reader)) // the reader keeps the tenant's campaigns: none
			honoured := func(want ...string) {
				t.Helper()
				if reader == writer {
					require.ElementsMatch(t, want, shop.discounted(t, reader))
					return
				}
				var got []string
				require.Eventually(t, func() bool {
					got = shop.discounted(t, reader)
					return len(got) == len(want) && (len(want) == 0 || got[0] == want[0])
				}, time.Second, 10*time.Millisecond, "authorize on the other instance gave %v, not %v", got, want)
			}
			first := shop.campaign(t, writer, "10% off", "discount")
			honoured(first)
			_, err := writer.Campaigns.PauseCampaign(shop.ctx, first)
			require.NoError(t, err)
			honoured()
			_, err = writer.Campaigns.ResumeCampaign(shop.ctx, first)
			require.NoError(t, err)
			honoured(first)
			_, err = writer.Campaigns.EndCampaign(shop.ctx, first)
			require.NoError(t, err)
			honoured()
		})
	}
}

// campaignReads matches the statements that read campaigns' rows (not the
// conditional updates of their counters).
var campaignReads = regexp.MustCompile("(?i)^SELECT .* FROM [\"`]campaigns[\"`]")

// TestProcessingReadsNoCampaignDefinition: once the tenant's campaigns are
// kept, processing a sale (with a bonus-points campaign to apply and a
// discount to record) reads no campaign, and the redemptions it counts do
// not drop what is kept; a change of a campaign has the next sale read them
// once again.
func TestProcessingReadsNoCampaignDefinition(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		a, shop := newReadModelShop(t, db)
		discount := shop.campaign(t, a, "10% off", "discount")
		bonus := shop.campaign(t, a, "Double points", "bonus_points")
		receipt := 0
		process := func() (reads int) {
			t.Helper()
			receipt++
			price, one := decimal.RequireFromString("20.00"), decimal.NewFromInt(1)
			unit, after := decimal.RequireFromString("2.00"), decimal.RequireFromString("18.00")
			soldAt := time.Now().Add(-time.Minute)
			s, err := a.POS.RegisterSale(shop.ctx, pos.SaleInput{
				Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: shop.cpf, Type: "CPF"}, SaleID: decimal.NewFromInt(int64(receipt)).String(),
				StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &price, AmountPayable: &after,
				Items: []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &price, Quantity: &one,
					Discounts: []pos.POSDiscount{{PromotionID: &discount, UnitDiscount: &unit, UnitPriceWithDiscount: &after, Quantity: &one}}}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &after, Method: "PIX"}},
			})
			require.NoError(t, err)
			var mu sync.Mutex
			stop := db.Trace(func(q string) {
				if campaignReads.MatchString(q) {
					t.Log(q)
					mu.Lock()
					reads++
					mu.Unlock()
				}
			})
			defer stop()
			require.NoError(t, a.POS.ProcessSale(viewer.SystemContext(context.Background()), jobs.ProcessSale{TenantID: shop.tenantID, SaleID: s.ID}))
			return reads
		}
		require.Positive(t, process(), "the first sale reads the live campaigns")
		require.Zero(t, process(), "nothing changed: no campaign is read")
		require.Zero(t, process(), "the redemptions counted changed no definition")
		_, err := a.Campaigns.PauseCampaign(shop.ctx, bonus)
		require.NoError(t, err)
		require.Positive(t, process(), "a campaign changed: they are read again")
		require.Zero(t, process())
	})
}

// TestPointsOfferReadsPerCart: with points spendable at the till and
// online, authorize and validate answer what the customer may pay with them
// in as many statements whatever the number of live campaigns (issue 36: no
// query per campaign), once the campaigns' change has reached the read
// model.
func TestPointsOfferReadsPerCart(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		a, shop := newReadModelShop(t, db)
		sys := viewer.SystemContext(context.Background())
		_, err := a.Backoffice.UpdateTenant(sys, shop.tenantID,
			backoffice.TenantSettings{PointsSpendChannels: &[]string{"pdv", "ecommerce"}})
		require.NoError(t, err)
		customerID, err := db.Ent.Customer.Query().OnlyID(sys)
		require.NoError(t, err)
		price, one := decimal.RequireFromString("20.00"), decimal.NewFromInt(1)
		offers := map[string]func() bool{
			"authorize": func() bool {
				now := time.Now()
				out, err := a.POS.AuthorizeDiscounts(shop.ctx, pos.AuthorizeInput{
					SessionID: "s1", Protocol: "PARTNER", Customer: &pos.POSCustomer{ID: shop.cpf, Type: "CPF"}, StoreID: "LOJA-01", Date: &now,
					Items: []pos.POSItem{{ID: "1", GTIN: "7891000100103", UnitMeasure: "UN", UnitPrice: &price, Quantity: &one}},
				})
				require.NoError(t, err)
				return out.Points != nil
			},
			"validate": func() bool {
				out, err := a.Checkout.ValidateCart(shop.ctx, checkout.ValidateInput{CustomerID: customerID, Channel: "ecommerce",
					Cart: eligibility.Cart{Items: []eligibility.Item{{GTIN: "7891000100103", Quantity: one, UnitPrice: price}}}})
				require.NoError(t, err)
				return out.Points != nil
			},
		}
		// steady counts a request's statements once the campaigns are kept
		// (on PostgreSQL their change arrives by notification).
		steady := func(offer func() bool) (statements int) {
			t.Helper()
			require.Eventually(t, func() bool {
				var definitions bool
				var mu sync.Mutex
				statements = 0
				stop := db.Trace(func(q string) {
					mu.Lock()
					statements++
					definitions = definitions || campaignReads.MatchString(q)
					mu.Unlock()
				})
				defer stop()
				require.True(t, offer(), "points are taken: the answer says how many")
				return !definitions
			}, 10*time.Second, 20*time.Millisecond)
			return statements
		}
		for i := range 2 {
			shop.campaign(t, a, fmt.Sprint("Desconto ", i), "discount")
		}
		few := map[string]int{}
		for name, offer := range offers {
			few[name] = steady(offer)
		}
		for i := range 20 {
			shop.campaign(t, a, fmt.Sprint("Outro desconto ", i), "discount")
		}
		for name, offer := range offers {
			require.Equal(t, few[name], steady(offer), "%s: 22 campaigns read in as many statements as 2", name)
		}
	})
}

// TestConcurrentRequestsShareOneCampaignsRead: after a change, the
// authorizations that find the campaigns not kept wait for one read of them
// rather than each reading them. The first read is held until the others
// have had time to ask (they either wait for it, or come after it and find
// them kept: one read whatever the timing; without the sharing, each of
// them that asked in the meantime read them again).
func TestConcurrentRequestsShareOneCampaignsRead(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		a, shop := newReadModelShop(t, db)
		id := shop.campaign(t, a, "10% off", "discount")
		require.Equal(t, []string{id}, shop.discounted(t, a))
		shop.campaign(t, a, "Double points", "bonus_points") // a change: the campaigns are read again
		var mu sync.Mutex
		reads := 0
		first, release := make(chan struct{}), make(chan struct{})
		stop := db.Trace(func(q string) {
			if !campaignReads.MatchString(q) {
				return
			}
			mu.Lock()
			reads++
			n := reads
			mu.Unlock()
			if n == 1 {
				close(first)
				<-release
			}
		})
		defer stop()
		const requests = 8
		answers := make(chan []string, requests)
		for range requests {
			go func() { answers <- shop.discounted(t, a) }()
		}
		<-first
		time.Sleep(200 * time.Millisecond) // the others ask meanwhile
		close(release)
		for range requests {
			require.Equal(t, []string{id}, <-answers)
		}
		require.Equal(t, 1, reads)
	})
}
