package rest

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent/coupon"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The HTTP side of a chain's campaigns: stacking rules, the product
// catalogue and coupon codes, on /v1 and at the point of sale.

// ineligibleOf indexes the ineligible campaigns of a validate body by id.
func ineligibleOf(v map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, x := range v["ineligible_campaigns"].([]any) {
		m := x.(map[string]any)
		out[m["campaign_id"].(string)] = m
	}
	return out
}

// eligibleIDs are the ids of the eligible campaigns of a validate body.
func eligibleIDs(t *testing.T, v map[string]any) []string {
	ids := []string{}
	for id := range campEligible(t, v) {
		ids = append(ids, id)
	}
	return ids
}

// TestStackingV1: validate keeps the best combination (an exclusive
// campaign alone, or the combinable ones together), explains the others as
// excluded_by_stacking, and redeem refuses an excluded campaign, of this
// validation or beside an exclusive one of the same order (422
// campaign_excluded).
func TestStackingV1(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		// campCart: R$ 25 of coffee, R$ 15 of juice.
		a := e.campCreateID(t, "discount", "name", "Dez", "stacking", "combinable")
		b := e.campCreateID(t, "discount", "name", "Cinco reais", "discount", map[string]any{"mode": "fixed_amount", "value": 5})
		x := e.campCreate(t, e.campBody("discount", "name", "Exclusiva no café", "stacking", "exclusive", "priority", 7,
			"discount", map[string]any{"mode": "percentage", "value": 40}, "eligibility", map[string]any{"skus": []string{"SKU-CAFE"}}))
		require.Equal(t, "exclusive", x["stacking"])
		require.Equal(t, json.Number("7"), x["priority"])
		customer := e.campCustomer(t, "Ana")

		// 40% of R$ 25 = R$ 10 beats R$ 4 + R$ 5.
		v := e.campValidate(t, customer, "pdv", campCart(), true)
		require.Equal(t, []string{x["id"].(string)}, eligibleIDs(t, v))
		excluded := ineligibleOf(v)
		for _, id := range []string{a, b} {
			require.Equal(t, "excluded_by_stacking", excluded[id]["reason"])
			require.Equal(t, x["id"], excluded[id]["excluded_by"])
		}
		r := e.campRedeem(t, a, campRedeemBody(customer, "order-1", v["validation_token"].(string), "30.00"))
		requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_excluded", "campaign_id")
		r = e.campRedeem(t, x["id"].(string), campRedeemBody(customer, "order-1", v["validation_token"].(string), "30.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)

		// Juice alone: the exclusive campaign does not apply, the combinable
		// ones do; redeeming one for order-1 beside the exclusive one is refused.
		juice := map[string]any{"items": []any{campItem("SKU-SUCO", "bebidas", 3, "5.00")}}
		v = e.campValidate(t, customer, "pdv", juice, true)
		require.ElementsMatch(t, []string{a, b}, eligibleIDs(t, v))
		r = e.campRedeem(t, a, campRedeemBody(customer, "order-1", v["validation_token"].(string), "10.00"))
		requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_excluded", "campaign_id")
		r = e.campRedeem(t, a, campRedeemBody(customer, "order-2", v["validation_token"].(string), "10.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)

		r = e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "stacking", "alone"))
		requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "stacking", "stacking")
		r = e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "priority", 1001))
		requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "priority", "priority")
	})
}

// TestCatalogue: products imported by /v1 give cart items without a
// category or brand theirs, by SKU online and by GTIN at the point of sale,
// so category (by path) and brand campaigns apply; a second import updates.
func TestCatalogue(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, campScopeRead, campScopeWrite)
		import1 := e.bearer(t, http.MethodPost, "/v1/products", token, map[string]any{"products": []any{
			map[string]any{"gtin": posGTINA, "sku": "CERVEJA-LATA", "name": "Cerveja lata", "category": "Bebidas>Cervejas"},
			map[string]any{"gtin": posGTINB, "name": "Detergente", "category": "Limpeza", "brand": "Ypê"},
			map[string]any{"gtin": "12", "name": "Curto"},
		}})
		require.Equal(t, http.StatusOK, import1.status, "%s", import1.body)
		require.Equal(t, map[string]any{"created": json.Number("2"), "updated": json.Number("0"), "problems": []any{
			map[string]any{"field": "products[2].gtin", "message": "must be 8 to 14 digits"}}}, import1.obj(t))

		bebidas := e.posCampaign(t, campaigns.CampaignInput{Name: "Bebidas 10%", Channels: []string{"pdv", "ecommerce"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("10")}, Eligibility: &campaigns.EligibilityInput{Categories: []string{"Bebidas"}}})
		ype := e.posCampaign(t, campaigns.CampaignInput{Name: "Ypê 20%", Channels: []string{"pdv", "ecommerce"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("20")}, Eligibility: &campaigns.EligibilityInput{Brands: []string{"Ypê"}}})
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})

		// Online, by SKU (and GTIN).
		v := e.bearer(t, http.MethodPost, "/v1/campaigns/validate", token, map[string]any{"customer_id": cust.ID, "channel": "ecommerce",
			"cart": map[string]any{"items": []any{
				map[string]any{"sku": "CERVEJA-LATA", "quantity": 2, "unit_price": 5},
				map[string]any{"gtin": posGTINB, "quantity": 1, "unit_price": 10},
			}}})
		require.Equal(t, http.StatusOK, v.status, "%s", v.body)
		eligible := map[string]string{}
		for _, x := range v.obj(t)["eligible_campaigns"].([]any) {
			m := x.(map[string]any)
			eligible[m["campaign_id"].(string)] = string(m["estimated_benefit"].(map[string]any)["amount"].(json.Number))
		}
		require.Equal(t, map[string]string{bebidas: "1", ype: "2"}, eligible)

		// At the till, by GTIN.
		r := e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
			posItem("1", posGTINA, "5.00", "2"), posItem("2", posGTINB, "10.00", "1"), posItem("3", posGTINC, "10.00", "1")))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var got []string
		for _, it := range r.obj(t)["sale"].(map[string]any)["items"].([]any) {
			for _, d := range it.(map[string]any)["discounts"].([]any) {
				got = append(got, it.(map[string]any)["id"].(string)+":"+d.(map[string]any)["promotionId"].(string))
			}
		}
		require.Equal(t, []string{"1:" + bebidas, "2:" + ype}, got)

		// A second import updates by GTIN: the detergent changes brand.
		import2 := e.bearer(t, http.MethodPost, "/v1/products", token, map[string]any{"products": []any{
			map[string]any{"gtin": posGTINB, "name": "Detergente", "category": "Limpeza", "brand": "Limpol"}}})
		require.Equal(t, http.StatusOK, import2.status, "%s", import2.body)
		require.Equal(t, json.Number("1"), import2.obj(t)["updated"])
		r = e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("2", posGTINB, "10.00", "1")))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Empty(t, r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"])

		bad := e.bearer(t, http.MethodPost, "/v1/products", token, map[string]any{"products": []any{}})
		require.Equal(t, http.StatusUnprocessableEntity, bad.status, "%s", bad.body)
	})
}

// TestCouponCodesHTTP: codes generated and imported on /v1, listed with
// their status (JSON and CSV), unlocking their campaign at validate and at
// the till, used by the redemption; unknown codes are refused, and too many
// of them rate-limited.
func TestCouponCodesHTTP(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, campScopeRead, campScopeWrite)
		camp := e.posCampaign(t, campaigns.CampaignInput{Name: "Cupom 15%", Channels: []string{"pdv", "ecommerce"}, RequiresCode: true,
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("15")}})
		gen := e.bearer(t, http.MethodPost, "/v1/campaigns/"+camp+"/coupons", token,
			map[string]any{"generate": map[string]any{"count": 3, "prefix": "NATAL-"}, "note": "newsletter"})
		require.Equal(t, http.StatusCreated, gen.status, "%s", gen.body)
		require.Equal(t, json.Number("3"), gen.obj(t)["created"])
		imp := e.bearer(t, http.MethodPost, "/v1/campaigns/"+camp+"/coupons", token, map[string]any{"codes": []string{"vip-ana", "?"}, "max_uses": 2})
		require.Equal(t, http.StatusCreated, imp.status, "%s", imp.body)
		require.Len(t, imp.obj(t)["problems"], 1)

		list := e.bearer(t, http.MethodGet, "/v1/campaigns/"+camp+"/coupons?limit=10", token, nil)
		require.Equal(t, http.StatusOK, list.status, "%s", list.body)
		page := list.obj(t)["data"].([]any)
		require.Len(t, page, 4)
		first := page[0].(map[string]any)
		require.Regexp(t, `^NATAL-[2-9A-HJKMNP-Z]{8}$`, first["code"])
		require.Equal(t, "available", first["status"])
		require.Equal(t, "newsletter", first["note"])

		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		validate := func(code string) apiResp {
			return e.bearer(t, http.MethodPost, "/v1/campaigns/validate", token, map[string]any{"customer_id": cust.ID, "channel": "ecommerce",
				"coupon_code": code, "cart": map[string]any{"items": []any{map[string]any{"sku": "A", "quantity": 1, "unit_price": 100}}}})
		}
		v := validate(strings.ToLower(first["code"].(string)))
		require.Equal(t, http.StatusOK, v.status, "%s", v.body)
		vb := v.obj(t)
		require.Len(t, vb["eligible_campaigns"], 1)
		redeem := e.bearer(t, http.MethodPost, "/v1/campaigns/"+camp+"/redeem", token,
			campRedeemBody(cust.ID, "pedido-1", vb["validation_token"].(string), "85.00"))
		require.Equal(t, http.StatusCreated, redeem.status, "%s", redeem.body)
		v = validate(first["code"].(string))
		require.Equal(t, http.StatusUnprocessableEntity, v.status, "%s", v.body)
		require.Equal(t, "coupon_code_used", v.obj(t)["error"])

		csvBody := e.bearer(t, http.MethodGet, "/v1/campaigns/"+camp+"/coupons?format=csv", token, nil)
		require.Equal(t, http.StatusOK, csvBody.status)
		require.Equal(t, "text/csv; charset=utf-8", csvBody.header.Get("Content-Type"))
		rows, err := csv.NewReader(strings.NewReader(string(csvBody.body))).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 5)
		require.Equal(t, []string{"code", "status", "uses", "max_uses", "last_used_at", "note", "created_at"}, rows[0])
		require.Equal(t, []string{first["code"].(string), "used", "1", "1"}, rows[1][:4])

		// At the till: the code unlocks the discount.
		authorize := func(code string) posResp {
			body := posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2"))
			posSet(body, "sale.couponCode", code)
			return e.posPost(t, "/discounts/authorizations", body)
		}
		r := authorize("VIP-ANA")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Len(t, r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"], 1)
		r = authorize("")
		require.Empty(t, r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"])
		// The sale carries the code: its processing records the use.
		sale := posSet(posDiscounted(posSaleBody(posN("730"), map[string]any{"id": doc, "type": "CPF"}), camp), "sale.couponCode", "vip-ana")
		posRequireAccepted(t, e.posPost(t, "/sales", sale), "730", map[string]any{"id": doc, "type": "CPF"})
		posWork(t, e, e.posSaleID(t, "730"))
		vip, err := e.db.Ent.Coupon.Query().Where(coupon.Code("VIP-ANA")).Only(posSys())
		require.NoError(t, err)
		require.Equal(t, 1, vip.Uses)
		red, err := e.db.Ent.Redemption.Query().Where(redemption.OrderID("730")).Only(posSys())
		require.NoError(t, err)
		require.Equal(t, vip.ID, *red.CouponID)

		// Guessing: ten unknown codes of the customer, then 429 for any.
		for range campaigns.CouponGuessesPerCustomer.Limit {
			v = validate("CHUTE-123")
			require.Equal(t, http.StatusUnprocessableEntity, v.status, "%s", v.body)
			require.Equal(t, "coupon_code_invalid", v.obj(t)["error"])
		}
		v = validate("VIP-ANA")
		require.Equal(t, http.StatusTooManyRequests, v.status, "%s", v.body)
		require.Equal(t, "coupon_attempts_exceeded", v.obj(t)["error"])
		r = authorize("VIP-ANA")
		require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	})
}

// TestPOSCombinable: campaigns marked combinable each give their discount
// on an item when together they give more than the best one; campaigns
// that say nothing keep the one best discount per item.
func TestPOSCombinable(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		percent := func(name, pct, stacking string) string {
			return e.posCampaign(t, campaigns.CampaignInput{Name: name, Channels: []string{"pdv"}, Stacking: stacking,
				Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr(pct)}})
		}
		discounts := func() []any {
			r := e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2")))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			return r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"].([]any)
		}
		plain := percent("Quinze", "15", "")
		percent("Cinco", "5", "")
		require.Len(t, discounts(), 1, "campaigns that say nothing: one discount")
		ten := percent("Dez combinável", "10", "combinable")
		eight := percent("Oito combinável", "8", "combinable")
		got := discounts()
		require.Len(t, got, 2, "10%% + 8%% beat 15%%: %v", got)
		require.Equal(t, ten, got[0].(map[string]any)["promotionId"])
		require.Equal(t, posN("1"), got[0].(map[string]any)["unitDiscount"])
		require.Equal(t, posN("9"), got[0].(map[string]any)["unitPriceWithDiscount"])
		require.Equal(t, eight, got[1].(map[string]any)["promotionId"])
		require.Equal(t, posN("8.2"), got[1].(map[string]any)["unitPriceWithDiscount"], "each on the price after the one before")
		percent("Vinte exclusiva", "20", "exclusive")
		got = discounts()
		require.Len(t, got, 1, "20%% alone beats 18%% together")
		require.NotEqual(t, plain, got[0].(map[string]any)["promotionId"])
	})
}

// bearer sends a /v1 request with token (see campDo).
func (e *TestEnv) bearer(t *testing.T, method, path, token string, body any) apiResp {
	t.Helper()
	return (&campEnv{TestEnv: e}).campDo(t, method, path, token, body)
}
