package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// TestCashbackCampaignCreditsWallet: in a programme that keeps cashback in
// R$ (cashback_as_points off), the cashback job credits the redemption's
// cashback to the wallet in exact cents, once however often it runs, and
// no points; the wallets' upkeep announces the lot's expiry once a month
// before and expires it on its day; a rollback of the redemption takes
// the cashback back, owing what was no longer there.
func TestCashbackCampaignCreditsWallet(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t0 := time.Now().UTC().Truncate(time.Second)
		b := campSetup(t, db, t0)
		sys := viewer.SystemContext(context.Background())
		require.NoError(t, db.Ent.Tenant.Update().Where(tenant.ID(b.tenant)).SetCashbackAsPoints(false).Exec(sys))
		upkeep := worker.For[jobs.UpkeepWallets](apptest.Process(b.app))
		days := 0
		cmp := b.campaign(b.ctx, t, "Cashback 5%", "cashback", t0.Add(-time.Hour), t0.AddDate(0, 1, 0),
			&campaigns.DiscountInput{Mode: "percentage", Value: decimalPtr("5"), CreditAfterDays: &days})
		cust, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{
			Name: opt.Of("Helena"), Email: opt.Of("helena@example.com"), CPF: opt.Of("52998224725"),
		})
		require.NoError(t, err)
		v, err := b.app.Checkout.ValidateCart(b.ctx, checkout.ValidateInput{CustomerID: cust.ID, Channel: "pdv", Cart: eligibility.Cart{
			Items: []eligibility.Item{{SKU: "A", Quantity: decimal.NewFromInt(1), UnitPrice: decimal.RequireFromString("120.99")}},
		}})
		require.NoError(t, err)
		red, _, err := b.app.Checkout.RedeemCampaign(b.ctx, checkout.RedeemInput{
			CampaignID: cmp.ID, CustomerID: cust.ID, OrderID: "order-1", Token: v.Token, AmountPaid: decimal.RequireFromString("120.99"),
		}, nil)
		require.NoError(t, err)
		queued := b.cashbackJobs(t)
		require.Len(t, queued, 1)
		require.NoError(t, b.work(queued[0]))
		require.NoError(t, b.work(queued[0]))

		cashback := func() wallets.Balance {
			ws, err := b.app.Wallets.Wallets(b.ctx, cust.ID)
			require.NoError(t, err)
			require.Len(t, ws, 1)
			require.Equal(t, wallet.Cashback, ws[0].Unit)
			return ws[0]
		}
		w := cashback()
		require.EqualValues(t, 605, w.Balance, "5%% of R$ 120.99 is R$ 6.0495: R$ 6.05, credited once")
		require.EqualValues(t, 605, w.Spendable)
		require.NotNil(t, w.Expiring)
		require.EqualValues(t, 605, w.Expiring.Cents)
		c, err := b.db.Ent.Customer.Get(b.ctx, cust.ID)
		require.NoError(t, err)
		require.Zero(t, c.PointsBalance, "no points for cashback kept in R$")
		conn, err := b.app.Wallets.Entries(b.ctx, cust.ID, wallet.Cashback, wallets.EntriesFilter{}, nil, 10)
		require.NoError(t, err)
		require.Equal(t, 1, conn.TotalCount)
		e := conn.Edges[0].Node
		require.Equal(t, [2]any{walletentry.SourceKindRedemption, red.ID}, [2]any{e.SourceKind, *e.SourceID})
		require.Equal(t, "cashback of Cashback 5%", e.Reason)

		events := func(typ string) []*ent.Event {
			evs, err := b.db.Ent.Event.Query().Where(event.Type(typ), event.SubjectID(cust.ID)).All(sys)
			require.NoError(t, err)
			return evs
		}
		require.Len(t, events(outbox.CashbackCredited), 1)
		run := func() { require.NoError(t, upkeep.Work(context.Background(), jobOf(jobs.UpkeepWallets{}))) }
		run()
		require.Empty(t, events(outbox.CashbackExpiring), "not within a month of expiry yet")
		b.clock.Set(w.Expiring.ExpiresAt.AddDate(0, 0, -10))
		run()
		run()
		expiring := events(outbox.CashbackExpiring)
		require.Len(t, expiring, 1, "announced once")
		require.Equal(t, "6.05", expiring[0].Data["amount"])
		b.clock.Set(w.Expiring.ExpiresAt)
		run()
		w = cashback()
		require.Zero(t, w.Balance, "expired on its day")
		require.Nil(t, w.Expiring)

		_, err = b.app.Loyalty.RollbackRedemption(b.ctx, red.ID, "pedido cancelado")
		require.NoError(t, err)
		w = cashback()
		require.Equal(t, [3]int64{0, 605, 0}, [3]int64{w.Balance, w.Debt, w.Spendable}, "what had expired is owed")
	})
}
