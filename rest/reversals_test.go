package rest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPointsReverse: a refund takes back the points its order earned, in
// whole reais for a partial one and all for a whole one; points already
// spent become a debt shown in the balance and the statement, which blocks
// spending until the next credit settles it; the same reversal_id is the
// same reversal; what cannot be reversed is refused naming the field.
func TestPointsReverse(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				e := ptsSetup(t, db)
				cust := e.ptsCustomer(t, e.tenantID, "Ana")
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "PED-1", "amount": json.Number("100.00")})
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 70})
				reverse := func(body map[string]any) apiResp {
					return e.ptsDo(t, http.MethodPost, prefix+"/points/reverse", e.token, body)
				}
				body := func(id string, kv ...any) map[string]any {
					return withFields(map[string]any{"customer_id": cust, "order_id": "PED-1", "reversal_id": id, "reason": "devolução"}, kv...)
				}

				// R$ 25.50 back: R$ 74.50 kept, 74 whole reais, 74 points kept.
				m := e.ptsPost(t, prefix, "/points/reverse", body("REF-1", "amount", json.Number("25.50")))
				require.Equal(t, sortedCopy("entry_id", "customer_id", "order_id", "reversal_id", "points_reversed", "amount_refunded",
					"new_balance", "points_debt", "created_at"), sortedKeys(m))
				require.Equal(t, ptsN(26), m["points_reversed"])
				require.Equal(t, json.Number("25.5"), m["amount_refunded"])
				require.Equal(t, [2]any{ptsN(4), ptsN(0)}, [2]any{m["new_balance"], m["points_debt"]})

				r := reverse(body("REF-1", "amount", json.Number("25.50")))
				require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
				require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
				require.Equal(t, m["entry_id"], r.obj(t)["entry_id"])

				refused := []struct {
					name    string
					body    map[string]any
					details []string
				}{
					{"more than remains", body("REF-X", "amount", json.Number("74.51")), []string{"amount"}},
					{"an order never credited", body("REF-X", "order_id", "PED-404"), []string{"order_id"}},
					{"no reason", body("REF-X", "reason", nil), []string{"reason"}},
					{"no reversal_id", body("", "amount", json.Number("1")), []string{"reversal_id"}},
					{"a negative amount", body("REF-X", "amount", json.Number("-1")), []string{"amount"}},
					{"fractions of a cent", body("REF-X", "amount", json.Number("1.001")), []string{"amount"}},
				}
				for _, c := range refused {
					t.Run(c.name, func(t *testing.T) { ptsRequireValidation(t, reverse(c.body), c.details...) })
				}

				// The rest of the order: 74 points, of which 4 are in the
				// balance and 70 were spent.
				m = e.ptsPost(t, prefix, "/points/reverse", body("REF-2"))
				require.Equal(t, ptsN(74), m["points_reversed"])
				require.Equal(t, json.Number("74.5"), m["amount_refunded"])
				require.Equal(t, [2]any{ptsN(0), ptsN(70)}, [2]any{m["new_balance"], m["points_debt"]})
				b := e.ptsBalance(t, prefix, cust)
				require.Equal(t, [3]any{ptsN(0), ptsN(70), json.Number("0")}, [3]any{b["points_balance"], b["points_debt"], b["lifetime_value"]})

				ptsRequireValidation(t, reverse(body("REF-3")), "order_id")
				requireV1Error(t, e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token,
					map[string]any{"customer_id": cust, "points": 1}), http.StatusUnprocessableEntity, "insufficient_points", "points")

				st := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust, e.token, nil)
				require.Equal(t, http.StatusOK, st.status, "%s", st.body)
				last := st.obj(t)["data"].([]any)[0].(map[string]any)
				require.Equal(t, "reversal", last["kind"])
				require.Equal(t, ptsN(-74), last["points"])
				require.Equal(t, ptsN(70), last["debt_after"])

				// The next credit settles the debt first.
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "PED-2", "amount": json.Number("100.00")})
				b = e.ptsBalance(t, prefix, cust)
				require.Equal(t, [2]any{ptsN(30), ptsN(0)}, [2]any{b["points_balance"], b["points_debt"]})

				n, err := e.db.Ent.Event.Query().Where(event.Type("points.reversed"), event.SubjectID(cust)).Count(ptsSys())
				require.NoError(t, err)
				require.Equal(t, 2, n)

				t.Run("an order credited in points is reversed whole", func(t *testing.T) {
					e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "PED-3", "points": 10})
					ptsRequireValidation(t, reverse(withFields(body("REF-4", "amount", json.Number("1")), "order_id", "PED-3")), "amount")
					m := e.ptsPost(t, prefix, "/points/reverse", withFields(body("REF-5"), "order_id", "PED-3"))
					require.Equal(t, ptsN(10), m["points_reversed"])
					require.Nil(t, m["amount_refunded"])
				})
			})
		}
	})
}

// TestRedemptionRollback: a rolled-back redemption gives the campaign's
// limits their redemption back (total and per customer), takes back the
// bonus points it credited (a debt where spent), and answers the same when
// rolled back again.
func TestRedemptionRollback(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		ana := e.campCustomer(t, "Ana Prado")
		limited := e.campCreateID(t, "discount", "name", "Uma por cliente", "limits", map[string]any{"per_customer": 1, "total": 1})
		bonus := e.campCreateID(t, "bonus_points", "name", "Pontos em dobro")
		rollback := func(id string, body any) apiResp {
			return e.campDo(t, http.MethodPost, "/v1/redemptions/"+id+"/rollback", e.token, body)
		}
		count := func(id string) int {
			c, err := e.db.Ent.Campaign.Get(e.ctx, id)
			require.NoError(t, err)
			return c.RedemptionsCount
		}

		r := e.campRedeem(t, limited, campRedeemBody(ana, "order-1", e.campTokenFor(t, ana), "36.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		first := r.obj(t)["redemption_id"].(string)
		r = e.campRedeem(t, limited, campRedeemBody(ana, "order-2", e.campTokenFor(t, ana), "36.00"))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
		require.Equal(t, "campaign_not_eligible", r.obj(t)["error"], "the limit is reached")

		r = rollback(first, map[string]any{"reason": "pedido cancelado"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		m := r.obj(t)
		require.Equal(t, sortedCopy("redemption_id", "campaign_id", "customer_id", "order_id", "status", "rolled_back_at",
			"rollback_reason", "redeemed_at"), sortedKeys(m))
		require.Equal(t, "rolled_back", m["status"])
		require.Equal(t, "pedido cancelado", m["rollback_reason"])
		require.Equal(t, 0, count(limited), "the total limit has it back")

		again := rollback(first, map[string]any{"reason": "de novo"})
		require.Equal(t, http.StatusOK, again.status, "%s", again.body)
		require.Equal(t, m, again.obj(t), "rolled back once")

		r = e.campRedeem(t, limited, campRedeemBody(ana, "order-2", e.campTokenFor(t, ana), "36.00"))
		require.Equal(t, http.StatusCreated, r.status, "the customer's limit has it back too: %s", r.body)

		// The bonus of a redemption credited with its order, then spent.
		r = e.campRedeem(t, bonus, campRedeemBody(ana, "order-3", e.campTokenFor(t, ana), "40.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		bonusRed := r.obj(t)["redemption_id"].(string)
		credit := e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": ana, "order_id": "order-3"})
		require.Equal(t, http.StatusCreated, credit.status, "%s", credit.body)
		c, err := e.db.Ent.Customer.Get(e.ctx, ana)
		require.NoError(t, err)
		require.Equal(t, int64(80), c.PointsBalance, "40 for the order, 40 of bonus")
		debit := e.campDo(t, http.MethodPost, "/points/debit", e.token, map[string]any{"customer_id": ana, "points": 70})
		require.Equal(t, http.StatusCreated, debit.status, "%s", debit.body)

		r = rollback(bonusRed, map[string]any{"reason": "pedido devolvido"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		c, err = e.db.Ent.Customer.Get(e.ctx, ana)
		require.NoError(t, err)
		require.Equal(t, [2]int64{0, 30}, [2]int64{c.PointsBalance, c.PointsDebt}, "10 taken, 30 owed")
		n, err := e.db.Ent.Event.Query().Where(event.Type("redemption.rolled_back")).Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)

		requireV1Error(t, rollback("red_01jd0000000000000000000000", map[string]any{"reason": "x"}), http.StatusNotFound, "not_found", "")
		requireV1Error(t, rollback(first, map[string]any{}), http.StatusUnprocessableEntity, "validation_error", "reason", "reason")
	})
}

// TestReversalsOverGraphQL: the GraphQL mutations are the same operations.
func TestReversalsOverGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana")
		e.ptsCredit(t, "", map[string]any{"customer_id": cust, "order_id": "PED-1", "amount": json.Number("10.00")})
		post := func(query string, vars map[string]any) map[string]any {
			t.Helper()
			raw, err := json.Marshal(map[string]any{"query": query, "variables": vars})
			require.NoError(t, err)
			status, body := rawGraphQL(t, e.TestEnv, e.token, "application/json", string(raw))
			require.Equal(t, http.StatusOK, status, body)
			var a map[string]any
			require.NoError(t, json.Unmarshal([]byte(body), &a))
			return a
		}
		const reverse = `mutation($in: ReversePointsInput!) { reversePoints(input: $in) { replayed entry { kind points debtAfter } } }`
		in := map[string]any{"customerID": cust, "orderID": "PED-1", "reversalID": "REF-1", "reason": "devolução"}
		a := post(reverse, map[string]any{"in": in})
		require.Nil(t, a["errors"], "%v", a)
		require.Equal(t, map[string]any{"replayed": false, "entry": map[string]any{"kind": "reversal", "points": float64(-10), "debtAfter": float64(0)}},
			a["data"].(map[string]any)["reversePoints"])
		a = post(reverse, map[string]any{"in": in})
		require.Equal(t, true, a["data"].(map[string]any)["reversePoints"].(map[string]any)["replayed"])

		a = post(`mutation { rollbackRedemption(id: "red_01jd0000000000000000000000", reason: "x") { id } }`, nil)
		require.Equal(t, []string{"insufficient_scope"}, gqlCodes(t, mustJSON(t, a)), "campaigns:write is needed")
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

// TestRolledBackTokenIsFree: a rolled-back redemption frees its order and
// token: the same validation redeems the campaign again, for another order.
func TestRolledBackTokenIsFree(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		ana := e.campCustomer(t, "Ana Prado")
		discount := e.campCreateID(t, "discount", "name", "Dez por cento")
		tok := e.campTokenFor(t, ana)
		r := e.campRedeem(t, discount, campRedeemBody(ana, "order-1", tok, "36.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		first := r.obj(t)["redemption_id"].(string)
		r = e.campRedeem(t, discount, campRedeemBody(ana, "order-2", tok, "36.00"))
		require.Equal(t, "validation_token_used", r.obj(t)["error"], "%s", r.body)

		rb := e.campDo(t, http.MethodPost, "/v1/redemptions/"+first+"/rollback", e.token, map[string]any{"reason": "cancelado"})
		require.Equal(t, http.StatusOK, rb.status, "%s", rb.body)
		r = e.campRedeem(t, discount, campRedeemBody(ana, "order-2", tok, "36.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.NotEqual(t, first, r.obj(t)["redemption_id"])
	})
}
