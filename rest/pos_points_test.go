package rest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// posPointsSale is posSaleBody for doc's customer paying paid (R$) of the
// R$ 100.00 with the hold, the rest by card.
func posPointsSale(receipt, doc, paid, rest, hold string) map[string]any {
	body := posSaleBody(posN(receipt), map[string]any{"id": doc, "type": "CPF"})
	sale := body["sale"].(map[string]any)
	sale["payments"] = []any{
		map[string]any{"id": posN("1"), "amount": posN(paid), "method": "POINTS", "holdId": hold},
		map[string]any{"id": posN("2"), "amount": posN(rest), "method": "CREDIT_CARD"},
	}
	return body
}

// TestPOSPointsPayment: identify and authorize tell what the customer may
// pay with points; a hold reserves them; a sale paying with the hold, sent
// twice and processed twice, debits once (with its store and sale in the
// ledger and a points.spent event); an offline sale cannot pay with points;
// a released hold pays nothing; a return gives back its share of the points
// paid and a cancellation the rest, the ledger showing both lines.
func TestPOSPointsPayment(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cu := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		balance := int64(3000)
		_, err := e.app.Loyalty.CreditPoints(e.posTenantCtx(), loyalty.CreditInput{CustomerID: cu.ID, OrderID: "seed", Points: &balance})
		require.NoError(t, err)

		// Points off at the till: identify says nothing of them, a hold is refused.
		r := e.posPost(t, "/customers/identify", posIdentifyBody("s-0", doc, "CPF"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.NotContains(t, r.obj(t), "points")
		holdBody := func(session, amount string) map[string]any {
			return map[string]any{"sessionId": session, "customer": map[string]any{"id": doc, "type": "CPF"},
				"store": map[string]any{"id": posStore}, "amount": posN(amount), "saleAmount": posN("100.00")}
		}
		posRequireProblem(t, e.posPost(t, "/points/holds", holdBody("s-1", "20.00")), http.StatusUnprocessableEntity, "points-payment-refused")

		e.posSettings(t, backoffice.TenantSettings{PointsSpendChannels: &[]string{"pdv"}})
		r = e.posPost(t, "/customers/identify", posIdentifyBody("s-0", doc, "CPF"))
		require.Equal(t, map[string]any{"available": posN("3000"), "balance": posN("3000"), "maxAmount": posN("30.00"),
			"minPoints": posN("0"), "value": posN("0.01")}, r.obj(t)["points"])
		item := posItem("1", posGTINA, "40.00", "1")
		r = e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, item))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, posN("20.00"), r.obj(t)["points"].(map[string]any)["maxAmount"], "half the cart")

		posRequireProblem(t, e.posPost(t, "/points/holds", holdBody("s-1", "60.00")),
			http.StatusUnprocessableEntity, "points-payment-refused") // over half the sale
		r = e.posPost(t, "/points/holds", holdBody("s-1", "20.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		h := r.obj(t)["hold"].(map[string]any)
		require.Equal(t, posN("2000"), h["points"])
		require.Equal(t, "open", h["status"])
		holdID := h["id"].(string)
		r = e.posPost(t, "/points/holds", holdBody("s-2", "20.00"))
		posRequireProblem(t, r, http.StatusUnprocessableEntity, "insufficient-points") // 1,000 left unheld

		offline := posPointsSale("501", doc, "20.00", "80.00", holdID)
		offline["sale"].(map[string]any)["offline"] = true
		posRequireProblem(t, e.posPost(t, "/sales", offline), http.StatusUnprocessableEntity, "points-payment-offline")
		sale := posPointsSale("500", doc, "20.00", "80.00", holdID)
		for range 2 {
			r = e.posPost(t, "/sales", sale)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		}
		posRequireProblem(t, e.posPost(t, "/sales", posPointsSale("502", doc, "20.00", "80.00", holdID)),
			http.StatusUnprocessableEntity, "points-hold-unavailable") // taken by sale 500
		saleID := e.posSaleID(t, "500")
		posWork(t, e, saleID)
		posWork(t, e, saleID)
		debits, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit)).All(posSys())
		require.NoError(t, err)
		require.Len(t, debits, 1)
		require.Equal(t, int64(-2000), debits[0].Points)
		require.Equal(t, saleID, *debits[0].SourceID)
		require.Equal(t, "paid sale 500 at "+posStore, debits[0].Reason)
		bal, _, _ := e.posBalance(t, cu.ID)
		require.Equal(t, int64(3000-2000+80), bal, "R$ 80.00 paid by card earned 80 points")
		spent := e.posEvents(t, "points.spent")
		require.Len(t, spent, 1)
		require.Equal(t, "20.00", spent[0].Data["amount"])

		// A hold released pays nothing; its points are available again.
		r = e.posPost(t, "/points/holds", holdBody("s-3", "10.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		other := r.obj(t)["hold"].(map[string]any)["id"].(string)
		r = e.posDo(t, posReq{method: http.MethodDelete, path: "/points/holds/" + other})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "released", r.obj(t)["hold"].(map[string]any)["status"])
		posRequireProblem(t, e.posDo(t, posReq{method: http.MethodDelete, path: "/points/holds/" + holdID}),
			http.StatusUnprocessableEntity, "points-hold-unavailable") // spent
		posRequireProblem(t, e.posPost(t, "/sales", posPointsSale("503", doc, "10.00", "90.00", other)),
			http.StatusUnprocessableEntity, "points-hold-unavailable")

		// A return of a quarter of the sale gives back a quarter of the points
		// paid, before taking back the points it earned; the cancellation the rest.
		refunds := func() (sum int64) {
			list, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindRefund)).All(posSys())
			require.NoError(t, err)
			for _, r := range list {
				sum += r.Points
			}
			return sum
		}
		r = e.posPost(t, "/sales/500/returns", posReturnBody("R1", "2", "2")) // 2 × R$ 12.50
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		require.Empty(t, posWorkReturns(t, e))
		require.Equal(t, int64(500), refunds())
		bal, _, _ = e.posBalance(t, cu.ID)
		require.Equal(t, int64(1080+500-20), bal, "500 points given back, 20 of the 80 earned taken back")
		r = e.posPost(t, "/sales/500/cancellation", posCancellationBody("C1"))
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		require.Empty(t, posWorkReturns(t, e))
		require.Equal(t, int64(2000), refunds())
		bal, _, _ = e.posBalance(t, cu.ID)
		require.Equal(t, int64(3000), bal, "every point paid given back, every point earned taken back")
	})
}
