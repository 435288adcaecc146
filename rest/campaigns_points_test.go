package rest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestValidateOffersPointsPayment: with the programme taking points online,
// validate answers, beside the campaigns, what the customer may pay with
// points on the cart after its discounts; without, nothing of it.
func TestValidateOffersPointsPayment(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Carla Dias")
		balance := int64(5000)
		_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: cust, OrderID: "seed", Points: &balance})
		require.NoError(t, err)
		e.campCreateID(t, "discount", "name", "Bebidas 10%", "eligibility", map[string]any{"categories": []string{"bebidas"}})

		v := e.campValidate(t, cust, "ecommerce", campCart(), false)
		require.NotContains(t, v, "points_payment", "the programme takes no points online")

		_, err = e.app.Backoffice.UpdateTenant(campSys(), e.tenantID, backoffice.TenantSettings{
			PointsSpendChannels: &[]string{"ecommerce"}})
		require.NoError(t, err)
		v = e.campValidate(t, cust, "ecommerce", campCart(), false)
		require.Len(t, campEligible(t, v), 1)
		require.Equal(t, map[string]any{"available_points": json.Number("5000"), "balance": json.Number("5000"),
			"max_amount": json.Number("19.25"), "min_points": json.Number("0"), "point_value": json.Number("0.01")},
			v["points_payment"], "half of R$ 40.00 less the R$ 1.50 discount")
	})
}
