package loyalty_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPointsLiability: outstanding points by level and by month of expiry,
// of the viewer's tenant only.
func TestPointsLiability(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		env := apptest.New(t, db, apptest.WithClock(func() time.Time { return now }), apptest.WithTenant("A"))
		svc, a, b := env.App, env.Ctx, env.Tenant(t, "B").Ctx
		customer := func(ctx context.Context, email, cpf string) string {
			c, err := svc.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("X"), Email: opt.Of(email), CPF: opt.Of(cpf)})
			require.NoError(t, err)
			return c.ID
		}
		credit := func(ctx context.Context, cust, order string, pts int64) {
			_, err := svc.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: cust, OrderID: order, Points: &pts})
			require.NoError(t, err)
		}
		ana, bia := customer(a, "ana@x.com", "52998224725"), customer(a, "bia@x.com", "11144477735")
		credit(a, ana, "o1", 300)
		now = now.AddDate(0, 1, 0) // a month later: lots expire a month apart
		credit(a, ana, "o2", 1200) // Ana reaches silver (1,500 earned)
		credit(a, bia, "o3", 50)
		_, err := svc.Loyalty.DebitPoints(a, loyalty.DebitInput{CustomerID: ana, Points: 100}) // from the January lot
		require.NoError(t, err)
		credit(b, customer(b, "ana@x.com", "52998224725"), "o1", 9999) // another tenant

		l, err := svc.Loyalty.PointsLiability(a)
		require.NoError(t, err)
		require.Equal(t, int64(1450), l.Total)
		require.Equal(t, []loyalty.LevelLiability{
			{Level: points.Bronze, Customers: 1, Points: 50},
			{Level: points.Silver, Customers: 1, Points: 1400},
			{Level: points.Gold}, {Level: points.Diamond},
		}, l.ByLevel)
		require.Equal(t, []loyalty.MonthLiability{{Month: "2027-01", Points: 200}, {Month: "2027-02", Points: 1250}}, l.ByExpiryMonth)
	})
}
