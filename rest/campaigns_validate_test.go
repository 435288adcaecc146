package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestCampaignValidate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Carla Dias")
		vip := e.campSegment(t, "vip", cust)
		others := e.campSegment(t, "outros")

		discount := e.campCreateID(t, "discount", "name", "Bebidas 10%", "channels", []string{"pdv"},
			"eligibility", map[string]any{"categories": []string{"bebidas"}})
		cashback := e.campCreateID(t, "cashback", "name", "Cashback R$ 15", "segment_id", vip,
			"discount", map[string]any{"mode": "fixed_amount", "value": 15, "credit_after_days": 7})
		bonus := e.campCreateID(t, "bonus_points", "name", "Café em dobro", "eligibility", map[string]any{"skus": []string{"SKU-CAFE"}})
		gift := e.campCreateID(t, "gift", "name", "Brinde", "eligibility", map[string]any{"min_subtotal": 30})
		shipping := e.campCreateID(t, "discount", "name", "Frete grátis", "channels", []string{"ecommerce"},
			"discount", map[string]any{"mode": "free_shipping"})
		segment := e.campCreateID(t, "discount", "name", "Outros", "segment_id", others)
		minimum := e.campCreateID(t, "discount", "name", "Acima de 100", "eligibility", map[string]any{"min_subtotal": json.Number("100.00")})
		later := e.campCreateID(t, "discount", "name", "Amanhã", "starts_at", e.campAt(24*time.Hour))
		noItems := e.campCreateID(t, "discount", "name", "Eletrônicos", "eligibility", map[string]any{"categories": []string{"eletronicos"}})

		v := e.campValidate(t, cust, "pdv", campCart(), false)
		require.Equal(t, sortedCopy("customer_id", "eligible_campaigns", "validation_token", "expires_at"), sortedKeys(v))
		require.Equal(t, cust, v["customer_id"])
		require.Regexp(t, `^vtk_[A-Za-z0-9_-]+$`, v["validation_token"], "the pattern openapi gives")
		require.Equal(t, e.campAt(5*time.Minute), v["expires_at"], "valid five minutes")
		eligible := campEligible(t, v)
		require.Len(t, eligible, 4)
		for _, id := range []string{discount, cashback, bonus, gift} {
			require.Contains(t, eligible, id)
			require.Equal(t, sortedCopy("campaign_id", "name", "type", "description", "applicable_items", "estimated_benefit"), sortedKeys(eligible[id]))
		}

		d := eligible[discount]
		require.Equal(t, "Bebidas 10%", d["name"])
		require.Equal(t, "discount", d["type"])
		require.Equal(t, "Campanha de teste discount", d["description"])
		require.Equal(t, []any{"SKU-SUCO"}, d["applicable_items"])
		b := d["estimated_benefit"].(map[string]any)
		require.Equal(t, sortedCopy("amount", "discount_amount", "items"), sortedKeys(b))
		campRequireDec(t, "1.5", b["amount"], "amount")
		campRequireDec(t, "1.5", b["discount_amount"], "discount_amount")
		items := b["items"].([]any)
		require.Len(t, items, 1)
		it := items[0].(map[string]any)
		require.Equal(t, sortedCopy("sku", "quantity", "discount_amount", "bonus_points"), sortedKeys(it))
		require.Equal(t, "SKU-SUCO", it["sku"])
		campRequireDec(t, "3", it["quantity"], "quantity")
		campRequireDec(t, "1.5", it["discount_amount"], "item discount")
		require.Equal(t, json.Number("0"), it["bonus_points"])

		c := eligible[cashback]
		require.Equal(t, []any{"SKU-CAFE", "SKU-SUCO"}, c["applicable_items"])
		b = c["estimated_benefit"].(map[string]any)
		require.Equal(t, sortedCopy("amount", "cashback_amount", "credit_after_days", "items"), sortedKeys(b))
		campRequireDec(t, "15", b["amount"], "amount")
		campRequireDec(t, "15", b["cashback_amount"], "cashback_amount")
		require.Equal(t, json.Number("7"), b["credit_after_days"])
		items = b["items"].([]any)
		require.Len(t, items, 2)
		campRequireDec(t, "9.375", items[0].(map[string]any)["cashback_amount"], "cashback of the coffee (25/40 of 15)")
		campRequireDec(t, "5.625", items[1].(map[string]any)["cashback_amount"], "cashback of the juice (15/40 of 15)")
		campRequireDec(t, "0", items[0].(map[string]any)["discount_amount"], "no discount")

		bp := eligible[bonus]
		require.Equal(t, []any{"SKU-CAFE"}, bp["applicable_items"])
		b = bp["estimated_benefit"].(map[string]any)
		require.Equal(t, sortedCopy("amount", "bonus_points", "multiplier", "items"), sortedKeys(b))
		campRequireDec(t, "0", b["amount"], "amount of points")
		require.Equal(t, json.Number("25"), b["bonus_points"], "R$ 25 × 1 point × (2 − 1)")
		campRequireDec(t, "2", b["multiplier"], "multiplier")
		require.Equal(t, json.Number("25"), b["items"].([]any)[0].(map[string]any)["bonus_points"])

		g := eligible[gift]
		b = g["estimated_benefit"].(map[string]any)
		require.Equal(t, sortedCopy("amount", "gift_sku", "items"), sortedKeys(b))
		require.Equal(t, "BRINDE-1", b["gift_sku"])
		campRequireDec(t, "0", b["amount"], "amount of a gift")

		t.Run("free shipping at its channel", func(t *testing.T) {
			v := e.campValidate(t, cust, "ecommerce", campCart(), false)
			el := campEligible(t, v)
			require.Contains(t, el, shipping)
			require.NotContains(t, el, discount, "the discount is for pdv only")
			b := el[shipping]["estimated_benefit"].(map[string]any)
			require.Equal(t, true, b["free_shipping"])
			campRequireDec(t, "0", b["amount"], "amount")
		})

		t.Run("explain", func(t *testing.T) {
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.Equal(t, sortedCopy("customer_id", "eligible_campaigns", "ineligible_campaigns", "validation_token", "expires_at"), sortedKeys(v))
			require.Len(t, v["eligible_campaigns"], 4)
			reasons := map[string]string{}
			for _, x := range v["ineligible_campaigns"].([]any) {
				m := x.(map[string]any)
				id := m["campaign_id"].(string)
				reasons[id] = m["reason"].(string)
				if id == minimum {
					require.Equal(t, sortedCopy("campaign_id", "name", "reason", "missing_amount"), sortedKeys(m))
					campRequireDec(t, "60", m["missing_amount"], "R$ 100 − R$ 40")
					require.Equal(t, "Acima de 100", m["name"])
				} else {
					require.Equal(t, sortedCopy("campaign_id", "name", "reason"), sortedKeys(m))
				}
			}
			require.Equal(t, map[string]string{
				shipping: "channel_mismatch", segment: "segment_mismatch", minimum: "min_subtotal_not_met",
				later: "not_active", noItems: "no_applicable_items",
			}, reasons)
		})

		t.Run("limit reached", func(t *testing.T) {
			limited := e.campCreateID(t, "gift", "name", "Um por cliente", "segment_id", vip, "limits", map[string]any{"per_customer": 1})
			tok := e.campTokenFor(t, cust)
			r := e.campRedeem(t, limited, campRedeemBody(cust, "order-limit", tok, "40.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.NotContains(t, campEligible(t, v), limited)
			var reason string
			for _, x := range v["ineligible_campaigns"].([]any) {
				if m := x.(map[string]any); m["campaign_id"] == limited {
					reason = m["reason"].(string)
				}
			}
			require.Equal(t, "limit_reached", reason)
		})

		t.Run("nothing eligible is an empty list", func(t *testing.T) {
			stranger := e.campCustomer(t, "Davi Reis")
			v := e.campValidate(t, stranger, "totem", map[string]any{"items": []any{campItem("X", "livros", 1, "0.50")}}, true)
			require.Equal(t, []any{}, v["eligible_campaigns"])
			require.NotEmpty(t, v["validation_token"])
		})

		t.Run("the token is signed: validate writes nothing", func(t *testing.T) {
			rows := func() (n int) {
				require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM validation_tokens`).Scan(&n))
				return n
			}
			before := rows()
			v := e.campValidate(t, cust, "pdv", campCart(), false)
			require.Equal(t, before, rows())
			tok := v["validation_token"].(string)
			var eligible string
			for id := range campEligible(t, v) {
				eligible = id
			}
			altered := []byte(tok)
			if altered[len(altered)/2] = 'A'; tok[len(tok)/2] == 'A' {
				altered[len(altered)/2] = 'B'
			}
			for _, bad := range []string{string(altered), tok[:len(tok)-10], "vtk_" + strings.Repeat("A", 40)} {
				r := e.campRedeem(t, eligible, campRedeemBody(cust, "order-altered", bad, "40.00"))
				require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
				require.Equal(t, "validation_error", r.obj(t)["error"], "%s", r.body)
				require.Equal(t, "validation_token", r.obj(t)["field"], "%s", r.body)
			}
		})

		t.Run("eligibility follows the clock, not the lifecycle job", func(t *testing.T) {
			brief := e.campCreateID(t, "discount", "name", "Uma hora", "ends_at", e.campAt(time.Hour))
			require.Contains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), brief)
			e.clock.Advance(time.Hour)
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.NotContains(t, campEligible(t, v), brief)
			e.clock.Advance(23 * time.Hour)
			v = e.campValidate(t, cust, "pdv", campCart(), true)
			require.Contains(t, campEligible(t, v), later, "started at its starts_at")
			for _, x := range v["ineligible_campaigns"].([]any) {
				if m := x.(map[string]any); m["campaign_id"] == later {
					t.Fatalf("%s is still ineligible: %v", later, m)
				}
			}
		})

		t.Run("unknown customer", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, map[string]any{
				"customer_id": "cus_00000000000000000000000000", "channel": "pdv", "cart": campCart(),
			})
			requireV1Error(t, r, http.StatusNotFound, "not_found", "")
		})

		t.Run("bad carts", func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				body    any
				details []string
			}{
				{"no customer", map[string]any{"channel": "pdv", "cart": campCart()}, []string{"customer_id"}},
				{"no items", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{}}}, []string{"cart.items"}},
				{"no cart", map[string]any{"customer_id": cust}, []string{"cart.items"}},
				{"zero quantity", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("A", "x", 0, "1")}}}, []string{"cart.items[0].quantity"}},
				{"negative price", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("A", "x", 1, "1"), campItem("B", "x", 1, "-1")}}}, []string{"cart.items[1].unit_price"}},
				{"no price", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{map[string]any{"sku": "A", "quantity": 1}}}}, []string{"cart.items[0].unit_price"}},
				{"no sku", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("", "x", 1, "1")}}}, []string{"cart.items[0].sku"}},
				{"negative subtotal", map[string]any{"customer_id": cust, "cart": map[string]any{"subtotal": -1, "items": []any{campItem("A", "x", 1, "1")}}}, []string{"cart.subtotal"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, tc.body)
					requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
				})
			}
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, `{"customer_id": "`+cust+`", "cart": {"items": [{"sku": "A", "quantity": "1", "unit_price": 1}]}}`)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
			require.Equal(t, "validation_error", r.obj(t)["error"])
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, `{"customer_id": `)
			requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
		})
	})
}

// TestCampaignScopes: reads need campaigns:read (validate too); writes,
// deactivation and redeem need campaigns:write.
func TestCampaignScopes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Fábio Nunes")
		id := e.campCreateID(t, "discount")
		tok := e.campTokenFor(t, cust)
		read := e.tokenFor(t, campScopeRead)
		write := e.tokenFor(t, campScopeWrite)
		unrelated := e.tokenFor(t, "customers:read", "customers:write", "loyalty:read", "loyalty:write")
		calls := []struct {
			method, path string
			body         any
			scope        string
			ok           int
		}{
			{http.MethodGet, "/v1/campaigns", nil, campScopeRead, http.StatusOK},
			{http.MethodGet, "/v1/campaigns/" + id, nil, campScopeRead, http.StatusOK},
			{http.MethodPost, "/v1/campaigns/validate", map[string]any{"customer_id": cust, "channel": "pdv", "cart": campCart()}, campScopeRead, http.StatusOK},
			{http.MethodPost, "/v1/campaigns", e.campBody("gift"), campScopeWrite, http.StatusCreated},
			{http.MethodPost, "/v1/campaigns/" + id + "/redeem", campRedeemBody(cust, "order-s", tok, "10"), campScopeWrite, http.StatusCreated},
			{http.MethodDelete, "/v1/campaigns/" + id, nil, campScopeWrite, http.StatusOK},
		}
		for _, c := range calls {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				wrong := read
				if c.scope == campScopeRead {
					wrong = write
				}
				for _, token := range []string{wrong, unrelated} {
					r := e.campDo(t, c.method, c.path, token, c.body)
					m := requireV1Error(t, r, http.StatusForbidden, "insufficient_scope", "")
					require.Contains(t, m["error_description"], c.scope)
					require.Contains(t, r.header.Get("WWW-Authenticate"), `scope="`+c.scope+`"`)
				}
				r := e.campDo(t, c.method, c.path, "", c.body)
				require.Equal(t, http.StatusUnauthorized, r.status)
				r = e.campDo(t, c.method, c.path, e.tokenFor(t, c.scope), c.body)
				require.Equal(t, c.ok, r.status, "%s", r.body)
			})
		}
		require.Equal(t, 1, e.campRedemptions(t, id), "the refused redeems wrote nothing")
	})
}
