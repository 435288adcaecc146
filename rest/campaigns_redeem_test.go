package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// campRedemptionKeys are the keys of a redeem answer.
var campRedemptionKeys = sortedCopy("redemption_id", "campaign_id", "customer_id", "order_id", "benefit_applied", "redeemed_at")

func TestCampaignRedeem(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		ana := e.campCustomer(t, "Ana Prado")
		bia := e.campCustomer(t, "Bia Rocha")
		discount := e.campCreateID(t, "discount", "name", "Dez por cento")
		gift := e.campCreateID(t, "gift", "name", "Brinde")

		t.Run("201 with the benefit applied", func(t *testing.T) {
			tok := e.campTokenFor(t, ana)
			e.clock.Advance(time.Minute)
			r := e.campRedeem(t, discount, campRedeemBody(ana, "order-1", tok, "36.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.Empty(t, r.header.Get("Idempotent-Replayed"))
			m := r.obj(t)
			require.Equal(t, campRedemptionKeys, sortedKeys(m))
			require.Regexp(t, `^red_[0-9a-z]{26}$`, m["redemption_id"])
			require.Equal(t, discount, m["campaign_id"])
			require.Equal(t, ana, m["customer_id"])
			require.Equal(t, "order-1", m["order_id"])
			require.Equal(t, e.campAt(0), m["redeemed_at"])
			b := m["benefit_applied"].(map[string]any)
			require.Equal(t, sortedCopy("type", "amount", "discount_amount", "items"), sortedKeys(b))
			require.Equal(t, "discount", b["type"])
			campRequireDec(t, "4", b["amount"], "10% of R$ 40")
			campRequireDec(t, "4", b["discount_amount"], "discount_amount")
			require.Len(t, b["items"], 2)

			red, err := e.db.Ent.Redemption.Get(e.ctx, m["redemption_id"].(string))
			require.NoError(t, err)
			require.True(t, red.AmountPaid.Equal(decimal.NewFromInt(36)))
			require.True(t, red.DiscountAmount.Equal(decimal.NewFromInt(4)))
			c, err := e.db.Ent.Campaign.Get(e.ctx, discount)
			require.NoError(t, err)
			require.Equal(t, 1, c.RedemptionsCount)

			// The same validation, order and campaign again.
			r = e.campRedeem(t, discount, campRedeemBody(ana, "order-1", tok, "36.00"))
			requireV1Error(t, r, http.StatusConflict, "already_redeemed", "campaign_id")
			// The same order may take the token's other campaign ...
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-1", tok, "36.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Equal(t, "BRINDE-1", r.obj(t)["benefit_applied"].(map[string]any)["gift_sku"])
			// ... another order may not.
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-2", tok, "36.00"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_token_used", "validation_token")
		})

		t.Run("token refusals", func(t *testing.T) {
			tok := e.campTokenFor(t, ana)
			r := e.campRedeem(t, discount, campRedeemBody(ana, "order-x", "vtk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "validation_token", "validation_token")
			r = e.campRedeem(t, discount, campRedeemBody(bia, "order-x", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id")
			later := e.campCreateID(t, "discount", "name", "Depois do token")
			r = e.campRedeem(t, later, campRedeemBody(ana, "order-x", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_not_eligible", "campaign_id")
			r = e.campRedeem(t, "cmp_00000000000000000000000000", campRedeemBody(ana, "order-x", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_not_eligible", "campaign_id")

			r = e.campRedeem(t, discount, campRedeemBody(ana, "order-3", tok, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-4", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_token_used", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-4"))

			// Another tenant cannot use the token, even knowing the ids.
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			oc, err := e.app.Backoffice.CreateClient(campSys(), other.ID, apiclient.KindOauth, "outra", nil)
			require.NoError(t, err)
			ot, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{GrantType: "client_credentials",
				ClientID: oc.Client.ID, ClientSecret: oc.Secret, Scope: campScopeWrite})
			require.NoError(t, err)
			tok2 := e.campTokenFor(t, ana)
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/"+gift+"/redeem", ot.AccessToken, campRedeemBody(ana, "order-5", tok2, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "validation_token", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-5"))
		})

		t.Run("expired token", func(t *testing.T) {
			tok := e.campTokenFor(t, bia)
			e.clock.Advance(5*time.Minute - time.Second)
			tok2 := e.campTokenFor(t, bia)
			e.clock.Advance(time.Second)
			r := e.campRedeem(t, discount, campRedeemBody(bia, "order-late", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_token_expired", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-late"))
			r = e.campRedeem(t, discount, campRedeemBody(bia, "order-in-time", tok2, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		})

		t.Run("limits", func(t *testing.T) {
			total := e.campCreateID(t, "gift", "name", "Só um", "limits", map[string]any{"total": 1})
			perCustomer := e.campCreateID(t, "gift", "name", "Um por cliente", "limits", map[string]any{"per_customer": 1})
			// Every token is taken before the limits are reached: validate
			// would not offer an exhausted campaign.
			tokA, tokA2, tokB := e.campTokenFor(t, ana), e.campTokenFor(t, ana), e.campTokenFor(t, bia)
			r := e.campRedeem(t, total, campRedeemBody(ana, "order-t1", tokA, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, total, campRedeemBody(bia, "order-t2", tokB, "10"))
			requireV1Error(t, r, http.StatusConflict, "redemption_limit_reached", "limits.total")

			r = e.campRedeem(t, perCustomer, campRedeemBody(ana, "order-t1", tokA, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, perCustomer, campRedeemBody(ana, "order-p2", tokA2, "10"))
			requireV1Error(t, r, http.StatusConflict, "redemption_limit_reached", "limits.per_customer")
			r = e.campRedeem(t, perCustomer, campRedeemBody(bia, "order-t2", tokB, "10"))
			require.Equal(t, http.StatusCreated, r.status, "another customer has a redemption of her own")
			require.Equal(t, 1, e.campRedemptions(t, total))
			require.Equal(t, 2, e.campRedemptions(t, perCustomer))
		})

		t.Run("ended campaign", func(t *testing.T) {
			short := e.campCreateID(t, "gift", "name", "Curta")
			tok := e.campTokenFor(t, bia)
			r := e.campDo(t, http.MethodDelete, "/v1/campaigns/"+short, e.token, nil)
			require.Equal(t, http.StatusOK, r.status)
			r = e.campRedeem(t, short, campRedeemBody(bia, "order-ended", tok, "10"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_not_active", "campaign_id")
		})

		t.Run("Idempotency-Key", func(t *testing.T) {
			tok := e.campTokenFor(t, bia)
			body := campRedeemBody(bia, "order-idem", tok, "40.00")
			first := e.campRedeem(t, discount, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
			require.Empty(t, first.header.Get("Idempotent-Replayed"))
			again := e.campRedeem(t, discount, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, again.status, "%s", again.body)
			require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
			require.Equal(t, "application/json", again.header.Get("Content-Type"))
			require.Equal(t, string(first.body), string(again.body))
			require.Equal(t, 1, e.campRedemptionsOfOrder(t, "order-idem"))

			other := campRedeemBody(bia, "order-idem-2", tok, "40.00")
			r := e.campRedeem(t, discount, other, "Idempotency-Key", "key-1")
			requireV1Error(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key")
			r = e.campRedeem(t, gift, body, "Idempotency-Key", "key-1")
			requireV1Error(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key")

			// Without the key a retry is refused, not replayed.
			r = e.campRedeem(t, discount, body)
			requireV1Error(t, r, http.StatusConflict, "already_redeemed", "campaign_id")

			// Keys belong to the client: another client's same key is new.
			otherClient, err := e.app.Backoffice.CreateClient(campSys(), e.tenantID, apiclient.KindOauth, "outro caixa", nil)
			require.NoError(t, err)
			tk, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{GrantType: "client_credentials",
				ClientID: otherClient.Client.ID, ClientSecret: otherClient.Secret, Scope: campScopeWrite})
			require.NoError(t, err)
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/"+gift+"/redeem", tk.AccessToken, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Empty(t, r.header.Get("Idempotent-Replayed"))

			r = e.campRedeem(t, discount, body, "Idempotency-Key", strings.Repeat("k", 256))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "Idempotency-Key", "Idempotency-Key")
		})

		t.Run("bad bodies", func(t *testing.T) {
			r := e.campRedeem(t, discount, map[string]any{"amount_paid": 10})
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id", "order_id", "validation_token")
			r = e.campRedeem(t, discount, map[string]any{"customer_id": ana, "order_id": "o", "validation_token": "vtk_x"})
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, campRedeemBody(ana, "o", "vtk_x", "-1"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, campRedeemBody(ana, "o", "vtk_x", "1.001"))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, `{"customer_id": 1}`)
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id")
			r = e.campRedeem(t, discount, `{`)
			requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
		})
	})
}

// campRedemptionsOfOrder counts the redemptions of an order.
func (e *campEnv) campRedemptionsOfOrder(t *testing.T, orderID string) int {
	t.Helper()
	n, err := e.db.Ent.Redemption.Query().Where(redemption.OrderID(orderID)).Count(e.ctx)
	require.NoError(t, err)
	return n
}

// TestCampaignRedeemIdempotentConcurrent: 50 redeems with one
// Idempotency-Key and one body at once give one redemption; every answer
// is the 201 (the first, or replayed with the identical body) or a 409.
func TestCampaignRedeemIdempotentConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const n = 50
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Eva Melo")
		camp := e.campCreateID(t, "cashback", "discount", map[string]any{"mode": "percentage", "value": 10, "credit_after_days": 0})
		tok := e.campTokenFor(t, cust)
		bodies := make([]map[string]any, n)
		for i := range bodies {
			bodies[i] = campRedeemBody(cust, "order-concurrent", tok, "40.00")
		}
		began := time.Now()
		answers := e.campRace(t, camp, "caixa-7-venda-1", bodies)
		t.Logf("%s: %d concurrent redeems with one Idempotency-Key in %v", db.Dialect, n, time.Since(began))

		var firsts, replays, conflicts int
		var body string
		for _, a := range answers {
			switch a.status {
			case http.StatusCreated:
				if body == "" {
					body = string(a.body)
				}
				require.Equal(t, body, string(a.body), "every 201 carries the same body")
				if a.header.Get("Idempotent-Replayed") == "true" {
					replays++
				} else {
					firsts++
				}
			case http.StatusConflict:
				conflicts++
			default:
				t.Fatalf("answer %d: %s", a.status, a.body)
			}
		}
		t.Logf("%s: %d first, %d replayed, %d conflicts", db.Dialect, firsts, replays, conflicts)
		require.Equal(t, 1, firsts, "one request redeemed")
		require.Equal(t, n, firsts+replays+conflicts)
		require.Equal(t, 1, e.campRedemptions(t, camp))
		c, err := e.db.Ent.Campaign.Get(e.ctx, camp)
		require.NoError(t, err)
		require.Equal(t, 1, c.RedemptionsCount)
		keys, err := e.db.Ent.IdempotencyKey.Query().Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, keys)
		var jobs int
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'credit_cashback'`).Scan(&jobs))
		require.Equal(t, 1, jobs, "one cashback job")
	})
}

// TestCampaignPointOfSaleFlow is flow 1 of the document: validate, redeem
// after payment, then credit the order's points with only customer_id and
// order_id; a bonus_points campaign adds its points.
func TestCampaignPointOfSaleFlow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Gabi Torres")
		discount := e.campCreateID(t, "discount", "name", "Dez por cento", "channels", []string{"pdv"})
		bonus := e.campCreateID(t, "bonus_points", "name", "Pontos em dobro", "discount", map[string]any{"multiplier": 3})

		v := e.campValidate(t, cust, "pdv", campCart(), false)
		el := campEligible(t, v)
		require.Contains(t, el, discount)
		require.Contains(t, el, bonus)
		require.Equal(t, json.Number("80"), el[bonus]["estimated_benefit"].(map[string]any)["bonus_points"], "R$ 40 × (3 − 1)")
		tok := v["validation_token"].(string)

		// The operator charges R$ 36.00 (R$ 40 less the 10%), then redeems both.
		r := e.campRedeem(t, discount, campRedeemBody(cust, "venda-1001", tok, "36.00"), "Idempotency-Key", "venda-1001-discount")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r = e.campRedeem(t, bonus, campRedeemBody(cust, "venda-1001", tok, "36.00"), "Idempotency-Key", "venda-1001-bonus")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		b := r.obj(t)["benefit_applied"].(map[string]any)
		require.Equal(t, "bonus_points", b["type"])
		require.Equal(t, json.Number("80"), b["bonus_points"])
		bal := e.campBalance(t, cust)
		require.EqualValues(t, 0, bal, "bonus points wait for the order's credit")

		r = e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1001"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		m := r.obj(t)
		require.Equal(t, json.Number("36"), m["points_credited"], "amount_paid of the redemption at 1 point per R$")
		require.Equal(t, json.Number("36"), m["new_balance"])
		require.EqualValues(t, 36+80, e.campBalance(t, cust), "the order's points and the bonus")

		// Crediting the order again credits nothing more.
		r = e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1001"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.EqualValues(t, 116, e.campBalance(t, cust))
		entries, err := e.db.Ent.PointsEntry.Query().Order(pointsentry.ByCreatedAt()).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, entries, 2)
		kinds := []pointsentry.Kind{entries[0].Kind, entries[1].Kind}
		require.ElementsMatch(t, []pointsentry.Kind{pointsentry.KindCredit, pointsentry.KindBonus}, kinds)

		t.Run("order credited before the redeem", func(t *testing.T) {
			tok := e.campTokenFor(t, cust)
			r := e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1002", "amount": 40})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, bonus, campRedeemBody(cust, "venda-1002", tok, "40.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.EqualValues(t, 116+40+80, e.campBalance(t, cust), "the bonus is credited at the redeem")
		})

		t.Run("an order without redemption needs an amount", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-sem-campanha"})
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "amount", "amount")
		})
	})
}

// campBalance reads the points balance over HTTP.
func (e *campEnv) campBalance(t *testing.T, customerID string) int64 {
	t.Helper()
	r := e.campDo(t, http.MethodGet, "/points/balance/"+customerID, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return campInt(t, r.obj(t)["points_balance"])
}
