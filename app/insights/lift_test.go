package insights_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// liftText renders a lift's figures, to compare them as text.
func liftText(l *experiment.Lift) string {
	m := func(x experiment.Metric) string {
		return fmt.Sprintf("%s %s %s [%v %v] %v", x.Treated, x.HeldOut, x.Difference, x.Low, x.High, x.Significant)
	}
	return fmt.Sprintf("treated %d/%d %s held %d/%d %s\nshare %s\nper customer %s\nper buyer %s\ndiscounts %s incremental %s net %s\n%s: %s",
		l.Treated.Buyers, l.Treated.Customers, l.Treated.Revenue, l.HeldOut.Buyers, l.HeldOut.Customers, l.HeldOut.Revenue,
		m(l.BuyerShare), m(l.RevenuePerCustomer), m(l.RevenuePerBuyer), l.Discounts, l.IncrementalRevenue, l.NetRevenue,
		l.Verdict, l.Summary())
}

// TestCampaignLiftEndToEnd: a small synthetic tenant whose treated
// customers buy more (50% against 30%), its sales and the campaign's
// redemptions written in the database; the app's lift of the campaign is
// the domain's (experiment.Measure) of the outcomes the test drew, sales
// before the campaign, after now and cancelled ones left out, on both databases.
// Another experiment over the same sales that gave
// nothing says so (a bonus-points one is not judged to have given nothing);
// a campaign without a holdout has no lift.
func TestCampaignLiftEndToEnd(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		env := apptest.New(t, db, apptest.WithClock(func() time.Time { return now }), apptest.WithTenant("Experimentos"),
			apptest.WithStore("LOJA-01", "Loja"))
		a, ctx, tn, st := env.App, env.Ctx, env.TenantID, env.Stores[0]
		sys := viewer.SystemContext(context.Background())
		start, end := now.AddDate(0, 0, -10), now.AddDate(0, 0, 20)
		in := campaigns.CampaignInput{Name: "Dez por cento", Type: "discount", StartsAt: &start, EndsAt: &end,
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: ptr(decimal.NewFromInt(10))}, HoldoutBasisPoints: 2000}
		c, err := a.Campaigns.CreateCampaign(ctx, in)
		require.NoError(t, err)
		in.Name = "Nada dado"
		idle, err := a.Campaigns.CreateCampaign(ctx, in)
		require.NoError(t, err)
		bonus, err := a.Campaigns.CreateCampaign(ctx, campaigns.CampaignInput{Name: "Pontos em dobro", Type: "bonus_points",
			StartsAt: &start, EndsAt: &end, Discount: &campaigns.DiscountInput{Multiplier: ptr(decimal.NewFromInt(2))}, HoldoutBasisPoints: 2000})
		require.NoError(t, err)
		in.HoldoutBasisPoints, in.Name = 0, "Sem grupo de controle"
		plain, err := a.Campaigns.CreateCampaign(ctx, in)
		require.NoError(t, err)

		const n = 400
		creates := make([]*ent.CustomerCreate, n)
		for i := range creates {
			creates[i] = db.Ent.Customer.Create().SetTenantID(tn).SetDocument(fmt.Sprintf("%011d", 70000000000+i)).SetName("Cliente " + strconv.Itoa(i))
		}
		custs, err := db.Ent.Customer.CreateBulk(creates...).Save(sys)
		require.NoError(t, err)

		rng := rand.New(rand.NewPCG(37, 2026))
		var treated, heldOut experiment.Group
		var sales []*ent.SaleCreate
		var redemptions []*ent.RedemptionCreate
		discounts := decimal.Zero
		newSale := func(cust *ent.Customer, at time.Time, amount decimal.Decimal) *ent.SaleCreate {
			return db.Ent.Sale.Create().SetTenantID(tn).SetStoreID(st.ID).SetExternalID(strconv.Itoa(len(sales) + 1)).
				SetCustomerID(cust.ID).SetCustomerDocument(cust.Document).SetSoldAt(at).SetAmount(amount).SetAmountPayable(amount).
				SetDiscountAmount(decimal.Zero).SetStatus(sale.StatusPROCESSED)
		}
		for _, cust := range custs {
			held := experiment.HeldOut(cust.ID, c.ID, 2000)
			p, g := 0.5, &treated
			if held {
				p, g = 0.3, &heldOut
			}
			// Before the campaign, and cancelled: not counted.
			if rng.IntN(4) == 0 {
				sales = append(sales, newSale(cust, start.Add(-time.Hour), decimal.NewFromInt(99)))
			}
			if rng.IntN(10) == 0 {
				sales = append(sales, newSale(cust, now.Add(-time.Hour), decimal.NewFromInt(77)).SetStatus(sale.StatusCANCELLED))
			}
			// Sold after now (a till's clock ahead), within the period: not yet.
			if rng.IntN(10) == 0 {
				sales = append(sales, newSale(cust, now.Add(time.Hour), decimal.NewFromInt(55)))
			}
			if rng.Float64() >= p {
				g.Add(false, decimal.Zero)
				continue
			}
			total := decimal.Zero
			for range 1 + rng.IntN(3) {
				amount := decimal.New(1000+rng.Int64N(20000), -2)
				total = total.Add(amount)
				sales = append(sales, newSale(cust, start.Add(time.Duration(rng.Int64N(int64(now.Sub(start))))), amount))
			}
			g.Add(true, total)
			if !held && rng.IntN(3) == 0 {
				off := decimal.New(100+rng.Int64N(900), -2)
				discounts = discounts.Add(off)
				redemptions = append(redemptions, db.Ent.Redemption.Create().SetTenantID(tn).SetCampaignID(c.ID).
					SetCustomerID(cust.ID).SetOrderID("pedido-"+strconv.Itoa(len(redemptions))).SetCreatedAt(now.Add(-2*time.Hour)).
					SetAmountPaid(total).SetDiscountAmount(off).SetCashbackAmount(decimal.Zero).SetBenefit(json.RawMessage(`{}`)))
			}
		}
		for len(sales) > 0 {
			k := min(len(sales), 500)
			require.NoError(t, db.Ent.Sale.CreateBulk(sales[:k]...).Exec(sys))
			sales = sales[k:]
		}
		require.NoError(t, db.Ent.Redemption.CreateBulk(redemptions...).Exec(sys))

		got, err := a.Insights.CampaignLift(ctx, c)
		require.NoError(t, err)
		require.NotNil(t, got)
		want := experiment.Measure(treated, heldOut, discounts, true)
		require.Equal(t, liftText(&want), liftText(got))
		require.NotEqual(t, experiment.NoBenefit, got.Verdict, "it gave discounts")
		require.Positive(t, want.HeldOut.Buyers, "both sides bought: %s", liftText(&want))
		require.Positive(t, want.Treated.Buyers)
		require.NotNil(t, want.RevenuePerBuyer.Low, "an interval to compare")
		t.Log(liftText(got))

		// Their sides are drawn apart from the first's, with the sales
		// drawn for its: no difference but chance.
		idleLift, err := a.Insights.CampaignLift(ctx, idle)
		require.NoError(t, err)
		require.Equal(t, experiment.NoBenefit, idleLift.Verdict, liftText(idleLift))
		require.True(t, idleLift.Discounts.IsZero())
		require.Contains(t, idleLift.Summary(), "The campaign gave nothing in its period")
		bonusLift, err := a.Insights.CampaignLift(ctx, bonus)
		require.NoError(t, err)
		require.NotEqual(t, experiment.NoBenefit, bonusLift.Verdict, liftText(bonusLift))

		none, err := a.Insights.CampaignLift(ctx, plain)
		require.NoError(t, err)
		require.Nil(t, none)
	})
}

func ptr[T any](v T) *T { return &v }
