package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// fixture is the generated tenant the loads run against.
type fixture struct {
	TenantID             string
	OAuthID, OAuthSecret string
	POSID, POSSecret     string
	Customers            int
	SampleID             string // a customer validate and redeem use: the first of the loads' own
}

const (
	benchTenantName = "Mercado Bench"
	benchStore      = "LOJA-01"
	pdvCampaigns    = 50
	onlineCampaigns = 50
	customerBatch   = 2000
)

// cpf returns the valid CPF whose first nine digits are n.
func cpf(n int) string { return document.CPFOf(n) }

// seed creates the tenant, its store, credentials and campaigns, and the
// first customers.
func seed(ctx context.Context, a *app.App, customers int, pointsSpend bool) (*fixture, error) {
	sys := viewer.SystemContext(ctx)
	t, err := a.Backoffice.CreateTenant(sys, benchTenantName, nil)
	if err != nil {
		return nil, err
	}
	f := &fixture{TenantID: t.ID}
	// The tenant a sandbox gets (its store benchStore included), with a
	// few months of a retailer's history; the loads' own campaigns and
	// customers come on top.
	if err := a.Backoffice.SeedDemoTenant(ctx, t.ID); err != nil {
		return nil, err
	}
	// The demo's history takes points at the till; the loads take them
	// where --points-spend says.
	channels := []string{}
	if pointsSpend {
		channels = []string{loyalty.ChannelPOS, loyalty.ChannelEcommerce}
	}
	if _, err := a.Backoffice.UpdateTenant(sys, t.ID, backoffice.TenantSettings{PointsSpendChannels: &channels}); err != nil {
		return nil, err
	}
	oauth, err := a.Backoffice.CreateClient(sys, t.ID, apiclient.KindOauth, "bench", nil)
	if err != nil {
		return nil, err
	}
	pos, err := a.Backoffice.CreateClient(sys, t.ID, apiclient.KindPos, "bench pdv", nil)
	if err != nil {
		return nil, err
	}
	f.OAuthID, f.OAuthSecret, f.POSID, f.POSSecret = oauth.Client.ID, oauth.Secret, pos.Client.ID, pos.Secret
	if err := seedCatalogue(viewer.TenantContext(ctx, t.ID), a.DB.Ent); err != nil {
		return nil, err
	}
	if err := seedCampaigns(viewer.TenantContext(ctx, t.ID), a.DB.Ent); err != nil {
		return nil, err
	}
	if err := growCustomers(ctx, a.DB, f, customers); err != nil {
		return nil, err
	}
	first, err := a.Customers.CustomerByDocument(viewer.TenantContext(ctx, t.ID), cpf(100000000))
	if err != nil {
		return nil, err
	}
	f.SampleID = first.ID
	return f, nil
}

// seedCatalogue makes the products of the loads' items: the point of sale's
// by GTIN, the web shop's by SKU, each with a category path and a brand,
// which the carts do not carry (the catalogue gives them).
func seedCatalogue(ctx context.Context, c *ent.Client) error {
	var all []*ent.ProductCreate
	for i := range 200 {
		all = append(all, c.Product.Create().SetGtin(gtin(i)).SetName(fmt.Sprintf("Produto %d", i)).
			SetCategory(fmt.Sprintf("Dept-%d > Sec-%d", i%4, i%12)).SetBrand(fmt.Sprintf("Marca-%d", i%5)))
	}
	for i := range 30 {
		all = append(all, c.Product.Create().SetSku(sku(i)).SetName(fmt.Sprintf("Item %d", i)).
			SetCategory(fmt.Sprintf("cat-%d > sub-%d", i%6, i%2)).SetBrand(fmt.Sprintf("Marca-%d", i%5)))
	}
	return c.Product.CreateBulk(all...).Exec(ctx)
}

// seedCampaigns makes 50 point-of-sale discounts (the authorize load) and
// 50 online campaigns of every type (validate and redeem), as a chain's are
// (issue 19): matched by SKU/GTIN, or by the catalogue's category or brand,
// each for the bench's store by its code or by its group, and
// each discount or cashback with money budgets in all, per store and per day
// (large enough that the loads never spend them: checking them is measured,
// refusals are not).
func seedCampaigns(ctx context.Context, c *ent.Client) error {
	start, end := time.Now().Add(-time.Hour), time.Now().AddDate(0, 1, 0)
	budget := decimal.NewFromInt(1_000_000_000)
	target := func(cc *ent.CampaignCreate, i int) {
		if i%2 == 0 {
			cc.SetStoreCodes([]string{benchStore, "LOJA-02"})
		} else {
			cc.SetStoreGroups([]string{"SP"}) // benchStore's group in the demo's data
		}
	}
	withBudget := func(cc *ent.CampaignCreate) {
		cc.SetBudgetTotal(budget).SetBudgetPerStore(budget).SetBudgetPeriod(campaign.BudgetPeriodDay).SetBudgetPerPeriod(budget)
	}
	var all []*ent.CampaignCreate
	for i := range pdvCampaigns {
		cc := c.Campaign.Create().SetName(fmt.Sprintf("pdv %d", i)).SetType(campaign.TypeDiscount).
			SetStatus(campaign.StatusActive).SetStartsAt(start).SetEndsAt(end).SetChannels([]string{"pdv"})
		if i%2 == 0 {
			cc.SetDiscountMode(campaign.DiscountModePercentage).SetDiscountValue(decimal.NewFromInt(int64(5 + i%25)))
		} else {
			cc.SetDiscountMode(campaign.DiscountModeFixedAmount).SetDiscountValue(decimal.New(int64(50+i*10), -2))
		}
		switch i % 3 {
		case 0:
			cc.SetEligibleSkus([]string{gtin(i % 20), gtin((i + 7) % 20), gtin(100 + i)})
		case 1:
			cc.SetEligibleCategories([]string{fmt.Sprintf("Dept-%d", i%4)})
		default:
			cc.SetEligibleBrands([]string{fmt.Sprintf("Marca-%d", i%5)})
		}
		target(cc, i)
		withBudget(cc)
		all = append(all, cc)
	}
	for i := range onlineCampaigns {
		cc := c.Campaign.Create().SetName(fmt.Sprintf("online %d", i)).SetStatus(campaign.StatusActive).
			SetStartsAt(start).SetEndsAt(end).SetChannels([]string{"ecommerce"})
		switch i % 3 {
		case 0:
			cc.SetType(campaign.TypeDiscount).SetDiscountMode(campaign.DiscountModePercentage).
				SetDiscountValue(decimal.NewFromInt(int64(5 + i%20))).SetEligibleCategories([]string{fmt.Sprintf("cat-%d", i%6)})
			withBudget(cc)
		case 1:
			cc.SetType(campaign.TypeCashback).SetDiscountMode(campaign.DiscountModePercentage).
				SetDiscountValue(decimal.NewFromInt(3)).SetCreditAfterDays(0).SetMinSubtotal(decimal.NewFromInt(int64(20 + i)))
			withBudget(cc)
		default:
			cc.SetType(campaign.TypeBonusPoints).SetMultiplier(decimal.NewFromInt(2)).SetEligibleSkus([]string{sku(i % 30)})
		}
		target(cc, i)
		all = append(all, cc)
	}
	return c.Campaign.CreateBulk(all...).Exec(ctx)
}

func gtin(i int) string { return fmt.Sprintf("78910001%05d", i) }
func sku(i int) string  { return fmt.Sprintf("SKU-%d", i) }

var surnames = []string{"Silva", "Santos", "Oliveira", "Souza", "Lima", "Pereira", "Costa", "Almeida", "Ferreira", "Rodrigues"}
var givenNames = []string{"Ana", "Bruno", "Carla", "Diego", "Elisa", "Fábio", "Gabriela", "Hugo", "Isabela", "João"}

// growCustomers adds customers until the tenant has n, in batches through
// ent (its hooks fill the search columns).
func growCustomers(ctx context.Context, db *storage.DB, f *fixture, n int) error {
	tctx := viewer.TenantContext(ctx, f.TenantID)
	for f.Customers < n {
		size := min(customerBatch, n-f.Customers)
		err := db.InTx(tctx, func(tx storage.Tx) error {
			batch := make([]*ent.CustomerCreate, size)
			for j := range batch {
				i := f.Customers + j
				batch[j] = tx.Ent.Customer.Create().SetTenantID(f.TenantID).
					SetName(fmt.Sprintf("%s %s %d", givenNames[i%len(givenNames)], surnames[(i/10)%len(surnames)], i)).
					SetEmail(fmt.Sprintf("c%d@bench.example", i)).
					SetDocumentType(customer.DocumentTypeCPF).SetDocument(cpf(100000000 + i))
			}
			// SQLite bounds a statement's variables (32,766): 500 rows each.
			for chunk := range slices.Chunk(batch, 500) {
				if err := tx.Ent.Customer.CreateBulk(chunk...).Exec(tctx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("adding customers: %w", err)
		}
		f.Customers += size
	}
	return nil
}
