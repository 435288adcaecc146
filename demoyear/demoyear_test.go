package demoyear_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestLivingDemoIsDeterministic: two demos loaded from the seed on two
// databases hold the same year: the same customers, sales and points,
// some of the sales paid in part with points at the till.
func TestLivingDemoIsDeterministic(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	var figures [2][5]int
	for i := range figures {
		db := storagetest.Open(t, "sqlite3")
		a := app.New(&app.Config{DB: db, Clock: func() time.Time { return end }}).WithHistory(demoyear.Play)
		started := time.Now()
		_, err := a.LoadDemo(context.Background())
		require.NoError(t, err)
		t.Logf("the living demo loaded in %v", time.Since(started).Round(time.Millisecond))
		ctx := viewer.TenantContext(context.Background(), app.DemoTenantID)
		customers, err := db.Ent.Customer.Query().Count(ctx)
		require.NoError(t, err)
		sales, err := db.Ent.Sale.Query().Count(ctx)
		require.NoError(t, err)
		redemptions, err := db.Ent.Redemption.Query().Count(ctx)
		require.NoError(t, err)
		liability, err := a.Loyalty.PointsLiability(ctx)
		require.NoError(t, err)
		paid, err := db.Ent.SalePayment.Query().Where(salepayment.Method(pos.MethodPoints), salepayment.HoldIDNotNil()).Count(ctx)
		require.NoError(t, err)
		spent, err := db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit), pointsentry.SourceKindEQ(pointsentry.SourceKindSale)).Count(ctx)
		require.NoError(t, err)
		require.Equal(t, paid, spent, "every sale paid with points debited them once")
		require.Greater(t, paid, 100, "the year's tills take points")
		figures[i] = [5]int{customers, sales, redemptions, int(liability.Total), paid}
		t.Logf("customers, sales, redemptions, points outstanding, sales paid with points: %v", figures[i])
	}
	require.Equal(t, figures[0], figures[1])
}
