package rest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestCampaignBudgets: a campaign's budgets in all, per store and per day
// are shown with what was spent, refuse the redemption that would overdraw
// them, make the campaign ineligible where they are spent
// (budget_exhausted), and get back what a rollback undoes; a new day has a
// new daily budget.
func TestCampaignBudgets(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		// campCart: R$ 40; 25% off is R$ 10 a redemption.
		created := e.campCreate(t, e.campBody("discount", "name", "Orçamento",
			"discount", map[string]any{"mode": "percentage", "value": 25},
			"budget", map[string]any{"total": 45, "per_store": 20, "period": "day", "per_period": 30}))
		require.Equal(t, map[string]any{"total": json.Number("45"), "per_store": json.Number("20"), "period": "day",
			"per_period": json.Number("30"), "spent": json.Number("0")}, created["budget"])
		id := created["id"].(string)
		plain := e.campCreate(t, e.campBody("discount", "name", "Sem orçamento"))
		require.Nil(t, plain["budget"])

		customer := e.campCustomer(t, "Bia")
		order := 0
		validate := func(store string) (token, reason string) {
			t.Helper()
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate?explain=true", e.token,
				map[string]any{"customer_id": customer, "store_id": store, "channel": "pdv", "cart": campCart()})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			v := r.obj(t)
			for _, x := range v["ineligible_campaigns"].([]any) {
				if m := x.(map[string]any); m["campaign_id"] == id {
					reason = m["reason"].(string)
				}
			}
			return v["validation_token"].(string), reason
		}
		redeem := func(store string) apiResp {
			t.Helper()
			tok, reason := validate(store)
			require.Empty(t, reason, "eligible at %s", store)
			order++
			return e.campRedeem(t, id, campRedeemBody(customer, "order-budget-"+string(rune('a'+order)), tok, "30.00"))
		}
		first := redeem("LJ-1")
		require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
		require.Equal(t, http.StatusCreated, redeem("LJ-1").status)
		_, reason := validate("LJ-1")
		require.Equal(t, "budget_exhausted", reason, "LJ-1's R$ 20 are spent")
		require.Equal(t, http.StatusCreated, redeem("LJ-2").status) // the day's R$ 30 are now spent
		_, reason = validate("LJ-3")
		require.Equal(t, "budget_exhausted", reason, "the day's R$ 30 are spent")

		// A token validated before the day's budget was spent is refused at redeem.
		e.clock.Advance(24 * time.Hour)
		early, _ := validate("LJ-3")
		require.Equal(t, http.StatusCreated, redeem("LJ-4").status) // a new day: R$ 40 of the R$ 45 in all
		r := e.campRedeem(t, id, campRedeemBody(customer, "order-budget-late", early, "30.00"))
		requireV1Error(t, r, http.StatusConflict, "budget_exhausted", "budget")
		campaign := e.campDo(t, http.MethodGet, "/v1/campaigns/"+id, e.token, nil).obj(t)
		require.Equal(t, json.Number("40"), campaign["budget"].(map[string]any)["spent"])

		// A rollback gives R$ 10 back: in all and to its store (yesterday's
		// budget is over).
		red := first.obj(t)["redemption_id"].(string)
		rb := e.campDo(t, http.MethodPost, "/v1/redemptions/"+red+"/rollback", e.token, map[string]any{"reason": "cancelado"})
		require.Equal(t, http.StatusOK, rb.status, "%s", rb.body)
		campaign = e.campDo(t, http.MethodGet, "/v1/campaigns/"+id, e.token, nil).obj(t)
		require.Equal(t, json.Number("30"), campaign["budget"].(map[string]any)["spent"])
		require.Equal(t, http.StatusCreated, redeem("LJ-1").status, "LJ-1 has R$ 10 again")
		campaign = e.campDo(t, http.MethodGet, "/v1/campaigns/"+id, e.token, nil).obj(t)
		require.Equal(t, json.Number("40"), campaign["budget"].(map[string]any)["spent"])

		for _, bad := range []map[string]any{
			{"total": 0}, {"total": -5}, {"total": 1.005}, {"period": "year", "per_period": 10}, {"period": "day"},
		} {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "budget", bad))
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%v: %s", bad, r.body)
		}
		r = e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("bonus_points", "budget", map[string]any{"total": 10}))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	})
}

// TestCampaignBudgetsAtThePOS: the discounts a point of sale gave count
// against the budget once their sale is processed (past it, too: the
// customer already has them), and a spent budget gives no more discounts.
func TestCampaignBudgetsAtThePOS(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posCampaign(t, campaigns.CampaignInput{Name: "Dez com orçamento", Channels: []string{"pdv"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("10")}, Budget: &campaigns.BudgetInput{Total: posDecPtr("15")}})
		discounted := func() bool {
			r := e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2")))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			item := r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)
			return len(item["discounts"].([]any)) > 0
		}
		spent := func() string {
			c, err := e.db.Ent.Campaign.Get(e.posTenantCtx(), camp)
			require.NoError(t, err)
			if c.BudgetSpent == nil {
				return "0.00"
			}
			return c.BudgetSpent.StringFixed(2)
		}
		require.True(t, discounted())
		for i, want := range []string{"10.00", "20.00"} { // R$ 10 each; the second passes the R$ 15
			receipt := strconv.Itoa(700 + i)
			body := posDiscounted(posSaleBody(posN(receipt), map[string]any{"id": doc, "type": "CPF"}), camp)
			posSet(body, "sale.date", time.Now().Format(time.RFC3339))
			posRequireAccepted(t, e.posPost(t, "/sales", body), receipt, map[string]any{"id": doc, "type": "CPF"})
			posWorkIn(t, e, e.app, e.posSaleID(t, receipt)) // serve's worker: its cache sees the spending at once
			require.Equal(t, want, spent())
		}
		require.False(t, discounted(), "the budget is spent")
	})
}

// TestSpentDiscountGivesWayAtThePOS: authorize reads the counters of only
// the discounts it applies; when the best one has reached its total limit
// or spent its budget, the next best applies instead.
func TestSpentDiscountGivesWayAtThePOS(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		best  campaigns.CampaignInput
		spend func(u *ent.CampaignUpdateOne)
	}{
		{"total limit reached", campaigns.CampaignInput{Limits: &campaigns.LimitsInput{Total: new(2)}},
			func(u *ent.CampaignUpdateOne) { u.SetRedemptionsCount(2) }},
		{"budget spent", campaigns.CampaignInput{Budget: &campaigns.BudgetInput{Total: posDecPtr("15")}},
			func(u *ent.CampaignUpdateOne) { u.SetBudgetSpent(decimal.RequireFromString("15")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				e := posSetup(t, db)
				doc := posCPF()
				e.posCustomer(t, doc, posCust{name: "Ana Souza"})
				best := tc.best
				best.Name, best.Channels = "Vinte", []string{"pdv"}
				best.Discount = &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("20")}
				bestID := e.posCampaign(t, best)
				nextID := e.posCampaign(t, campaigns.CampaignInput{Name: "Cinco", Channels: []string{"pdv"},
					Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("5")}, Budget: &campaigns.BudgetInput{Total: posDecPtr("1000")}})
				applied := func() []string {
					r := e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
						posItem("1", posGTINA, "10.00", "2"), posItem("2", posGTINB, "4.00", "1")))
					require.Equal(t, http.StatusOK, r.status, "%s", r.body)
					var ids []string
					for _, it := range r.obj(t)["sale"].(map[string]any)["items"].([]any) {
						for _, d := range it.(map[string]any)["discounts"].([]any) {
							ids = append(ids, d.(map[string]any)["promotionId"].(string))
						}
					}
					return ids
				}
				require.Equal(t, []string{bestID, bestID}, applied())
				u := e.db.Ent.Campaign.UpdateOneID(bestID)
				tc.spend(u)
				require.NoError(t, u.Exec(e.posTenantCtx()))
				require.Equal(t, []string{nextID, nextID}, applied())
			})
		})
	}
}
