package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent/event"
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

// TestOnlinePointsPayment: an online order pays part with points: a hold
// for the order (the same order asked again answers it), refused off the
// channel, below the fewest points, over the share or the balance; its
// capture debits once (a points.spent event), a second capture replays it;
// its rollback gives the points back as a refund, once; an open hold rolled
// back is released. Each answer is checked against the /v1 document.
func TestOnlinePointsPayment(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Diego Rocha")
		balance := int64(5000)
		_, err := e.app.Loyalty.CreditPoints(e.ctx, loyalty.CreditInput{CustomerID: cust, OrderID: "seed", Points: &balance})
		require.NoError(t, err)
		hold := func(order, amount string) apiResp {
			return e.campDo(t, http.MethodPost, "/v1/points/holds", e.token, map[string]any{"customer_id": cust,
				"order_id": order, "amount": json.Number(amount), "order_amount": json.Number("100.00")})
		}
		code := func(r apiResp) string { return fmt.Sprint(r.status, " ", r.obj(t)["error"]) }

		require.Equal(t, "422 points_payment_off", code(hold("PED-1", "20.00")))
		_, err = e.app.Backoffice.UpdateTenant(campSys(), e.tenantID, backoffice.TenantSettings{
			PointsSpendChannels: &[]string{"ecommerce"}, PointsSpendMin: new(int64(200))})
		require.NoError(t, err)
		require.Equal(t, "422 points_below_minimum", code(hold("PED-1", "1.99")))
		require.Equal(t, "422 points_over_share", code(hold("PED-1", "50.01")))
		require.Equal(t, "422 validation_error", code(hold(strings.Repeat("9", 119), "20.00")))

		r := hold("PED-1", "20.00")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		h := r.obj(t)
		id := h["hold_id"].(string)
		require.Equal(t, map[string]any{"hold_id": id, "customer_id": cust, "order_id": "PED-1", "amount": json.Number("20.00"),
			"points": json.Number("2000"), "status": "open", "expires_at": h["expires_at"]}, h)
		again := hold("PED-1", "20.00")
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, id, again.obj(t)["hold_id"])
		require.Equal(t, "409 points_hold_session", code(hold("PED-1", "10.00")), "the order holds other points")
		require.Equal(t, "422 insufficient_points", code(hold("PED-2", "30.01")), "3,000 points are left to hold")

		capture := func(id, order, total string) apiResp {
			return e.campDo(t, http.MethodPost, "/v1/points/holds/"+id+"/capture", e.token,
				map[string]any{"order_id": order, "order_amount": json.Number(total)})
		}
		require.Equal(t, "422 points_hold_foreign", code(capture(id, "PED-9", "100.00")), "another order")
		require.Equal(t, "422 points_over_share", code(capture(id, "PED-1", "39.98")))
		r = capture(id, "PED-1", "100.00")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		c := r.obj(t)
		require.Equal(t, "spent", c["status"])
		entry := c["entry"].(map[string]any)
		require.Equal(t, []any{"debit", json.Number("-2000"), json.Number("3000")}, []any{entry["kind"], entry["points"], entry["new_balance"]})
		r = capture(id, "PED-1", "100.00")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.Equal(t, entry["entry_id"], r.obj(t)["entry"].(map[string]any)["entry_id"])
		spent, err := e.db.Ent.Event.Query().Where(event.Type(outbox.PointsSpent)).All(campSys())
		require.NoError(t, err)
		require.Len(t, spent, 1)
		require.Equal(t, []any{"PED-1", id, "ecommerce"}, []any{spent[0].Data["order_id"], spent[0].Data["hold_id"], spent[0].Data["channel"]})
		b := e.campDo(t, http.MethodGet, "/v1/points/balance/"+cust, e.token, nil).obj(t)
		require.Equal(t, json.Number("3000"), b["points_balance"])

		rollback := func(id string) apiResp {
			return e.campDo(t, http.MethodPost, "/v1/points/holds/"+id+"/rollback", e.token, map[string]any{"reason": "pedido cancelado"})
		}
		r = rollback(id)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		rb := r.obj(t)
		require.Equal(t, "released", rb["status"])
		entry = rb["entry"].(map[string]any)
		require.Equal(t, []any{"refund", json.Number("2000"), json.Number("5000")}, []any{entry["kind"], entry["points"], entry["new_balance"]})
		r = rollback(id)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.Equal(t, entry["entry_id"], r.obj(t)["entry"].(map[string]any)["entry_id"])
		require.Equal(t, "422 points_hold_unavailable", code(capture(id, "PED-1", "100.00")))

		r = hold("PED-2", "10.00") // an open hold rolled back is released
		require.Equal(t, http.StatusCreated, r.status)
		r = rollback(r.obj(t)["hold_id"].(string))
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "released", r.obj(t)["status"])
		require.NotContains(t, r.obj(t), "entry")
		b = e.campDo(t, http.MethodGet, "/points/balance/"+cust, e.token, nil).obj(t)
		require.Equal(t, json.Number("5000"), b["points_balance"])
	})
}
