package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPointsHoldBelongsToItsOwner (issue 50): a hold is used only by the
// channel and order or store it was placed for. An online order's hold
// named as a till sale's POINTS payment is refused at registration (422
// points-hold-foreign) and its order still captures it with a debit of its
// own, once; the till cannot release an online hold, /v1 can neither
// capture nor roll back a till's, nor capture an order's hold for another
// order; a till hold pays no sale of another store; and a hold a till sale
// spent (as a database written before the rule may hold) answers neither a
// capture nor a rollback of its order.
func TestPointsHoldBelongsToItsOwner(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cu := e.posCustomer(t, doc, posCust{name: "Bruna Lima"})
		seed := int64(3000)
		_, err := e.app.Loyalty.CreditPoints(e.posTenantCtx(), loyalty.CreditInput{CustomerID: cu.ID, OrderID: "seed", Points: &seed})
		require.NoError(t, err)
		e.posSettings(t, backoffice.TenantSettings{PointsSpendChannels: &[]string{"pdv", "ecommerce"}})
		const otherStore = "LOJA-02"
		_, err = e.app.Backoffice.CreateStore(posSys(), e.tenantID, otherStore, "Loja Norte")
		require.NoError(t, err)
		token := e.tokenFor(t, "loyalty:read", "loyalty:write")

		online := func(t *testing.T, order string) string { // R$ 5.00: 500 points
			r := apiDo(t, e.srv, http.MethodPost, "/v1/points/holds", token, map[string]any{"customer_id": cu.ID,
				"order_id": order, "amount": json.Number("5.00"), "order_amount": json.Number("100.00")})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			return r.obj(t)["hold_id"].(string)
		}
		till := func(t *testing.T, session string) string {
			r := e.posPost(t, "/points/holds", map[string]any{"sessionId": session,
				"customer": map[string]any{"id": doc, "type": "CPF"}, "store": map[string]any{"id": posStore},
				"amount": posN("5.00"), "saleAmount": posN("100.00")})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			return r.obj(t)["hold"].(map[string]any)["id"].(string)
		}
		capture := func(t *testing.T, id, order string) apiResp {
			return apiDo(t, e.srv, http.MethodPost, "/v1/points/holds/"+id+"/capture", token,
				map[string]any{"order_id": order, "order_amount": json.Number("100.00")})
		}
		rollback := func(t *testing.T, id string) apiResp {
			return apiDo(t, e.srv, http.MethodPost, "/v1/points/holds/"+id+"/rollback", token, map[string]any{"reason": "pedido cancelado"})
		}
		code := func(t *testing.T, r apiResp) string { return fmt.Sprint(r.status, " ", r.obj(t)["error"]) }
		status := func(t *testing.T, id string) pointshold.Status {
			h, err := e.db.Ent.PointsHold.Get(posSys(), id)
			require.NoError(t, err)
			return h.Status
		}
		debited := func(t *testing.T) (n int, points int64) {
			list, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit)).All(posSys())
			require.NoError(t, err)
			for _, d := range list {
				points += d.Points
			}
			return len(list), points
		}

		t.Run("online hold as a till payment", func(t *testing.T) {
			h := online(t, "ord-1")
			posRequireProblem(t, e.posPost(t, "/sales", posPointsSale("700", doc, "5.00", "95.00", h)),
				http.StatusUnprocessableEntity, "points-hold-foreign")
			require.Equal(t, pointshold.StatusOpen, status(t, h), "the refused sale took nothing")
			r := capture(t, h, "ord-1")
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			c := r.obj(t)
			require.Equal(t, "spent", c["status"])
			entry, _ := c["entry"].(map[string]any)
			require.NotNil(t, entry, "the capture debits the order itself: %s", r.body)
			require.Equal(t, []any{"debit", json.Number("-500"), json.Number("2500")}, []any{entry["kind"], entry["points"], entry["new_balance"]})
			r = capture(t, h, "ord-1") // its own debit replayed
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
			require.Equal(t, entry["entry_id"], r.obj(t)["entry"].(map[string]any)["entry_id"])
			n, points := debited(t)
			require.Equal(t, 1, n, "one debit for one payment")
			require.Equal(t, int64(-500), points)
			bal, _, _ := e.posBalance(t, cu.ID)
			require.Equal(t, int64(2500), bal)
		})

		t.Run("till release of an online hold, /v1 use of a till hold, another order", func(t *testing.T) {
			h := online(t, "ord-2")
			posRequireProblem(t, e.posDo(t, posReq{method: http.MethodDelete, path: "/points/holds/" + h}),
				http.StatusUnprocessableEntity, "points-hold-foreign")
			require.Equal(t, "422 points_hold_foreign", code(t, capture(t, h, "ord-9")), "another order")
			th := till(t, "s-1")
			require.Equal(t, "422 points_hold_foreign", code(t, capture(t, th, "ord-2")), "a till's hold")
			require.Equal(t, "422 points_hold_foreign", code(t, rollback(t, th)), "a till's hold")
			require.Equal(t, pointshold.StatusOpen, status(t, h))
			require.Equal(t, pointshold.StatusOpen, status(t, th))

			sale := posPointsSale("701", doc, "5.00", "95.00", th)
			sale["sale"].(map[string]any)["store"].(map[string]any)["id"] = otherStore
			posRequireProblem(t, e.posPost(t, "/sales", sale), http.StatusUnprocessableEntity, "points-hold-foreign")
			r := e.posPost(t, "/sales", posPointsSale("701", doc, "5.00", "95.00", th)) // its own store's sale
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			posWork(t, e, e.posSaleID(t, "701"))
			require.Equal(t, pointshold.StatusSpent, status(t, th))
			rb := rollback(t, h) // the order's own rollback still releases it
			require.Equal(t, http.StatusOK, rb.status, "%s", rb.body)
			require.Equal(t, "released", rb.obj(t)["status"])
		})

		t.Run("online hold a till sale spent", func(t *testing.T) {
			h := online(t, "ord-3")
			r := e.posPost(t, "/sales", posSaleBody(posN("702"), map[string]any{"id": doc, "type": "CPF"}))
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			saleID := e.posSaleID(t, "702")
			require.NoError(t, e.db.Ent.PointsHold.UpdateOneID(h).SetStatus(pointshold.StatusSpent).SetSaleID(saleID).
				SetClosedAt(time.Now().UTC()).Exec(posSys()))
			before, _ := debited(t)
			require.Equal(t, "422 points_hold_foreign", code(t, capture(t, h, "ord-3")), "no replay of another's debit")
			require.Equal(t, "422 points_hold_foreign", code(t, rollback(t, h)), "no refund of another's debit")
			after, _ := debited(t)
			require.Equal(t, before, after)
			require.Equal(t, pointshold.StatusSpent, status(t, h))
		})
	})
}
