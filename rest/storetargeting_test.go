package rest

import (
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestStoreTargetingV1: campaigns for some stores (by code) or store groups
// apply in validate only at those stores, explain says store_mismatch, a
// store's new groups count at once, and redeem honours what validate found.
func TestStoreTargetingV1(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		for _, s := range []struct{ code, name, group string }{{"LJ-SUL", "Loja Porto Alegre", "sul"}, {"LJ-NE", "Loja Recife", "nordeste"}} {
			_, err := e.app.Backoffice.CreateStore(campSys(), e.tenantID, s.code, s.name, s.group)
			require.NoError(t, err)
		}
		ne := e.campCreate(t, e.campBody("discount", "name", "Só em Recife", "store_codes", []string{"LJ-NE"}))
		require.Equal(t, []any{"LJ-NE"}, ne["store_codes"])
		require.Equal(t, []any{}, ne["store_groups"])
		south := e.campCreate(t, e.campBody("discount", "name", "Região Sul", "store_groups", []string{"sul"}))
		require.Equal(t, []any{"sul"}, south["store_groups"])
		everywhere := e.campCreate(t, e.campBody("discount", "name", "Todas as lojas"))
		require.Equal(t, []any{}, everywhere["store_codes"])
		customer := e.campCustomer(t, "Ana")

		validate := func(store string) (token string, eligible []string, reasons map[string]string) {
			t.Helper()
			body := map[string]any{"customer_id": customer, "channel": "pdv", "cart": campCart()}
			if store != "" {
				body["store_id"] = store
			}
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate?explain=true", e.token, body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			v := r.obj(t)
			for id := range campEligible(t, v) {
				eligible = append(eligible, id)
			}
			sort.Strings(eligible)
			reasons = map[string]string{}
			for _, x := range v["ineligible_campaigns"].([]any) {
				m := x.(map[string]any)
				reasons[m["campaign_id"].(string)] = m["reason"].(string)
			}
			return v["validation_token"].(string), eligible, reasons
		}
		ids := func(list ...map[string]any) []string {
			out := make([]string, len(list))
			for i, c := range list {
				out[i] = c["id"].(string)
			}
			sort.Strings(out)
			return out
		}
		neID, southID := ne["id"].(string), south["id"].(string)
		for _, tc := range []struct {
			store    string
			eligible []string
			mismatch []string
		}{
			{"LJ-SUL", ids(south, everywhere), []string{neID}},
			{"LJ-NE", ids(ne, everywhere), []string{southID}},
			{"", ids(everywhere), []string{neID, southID}},               // no store: only the campaigns of every store
			{"LJ-INEXISTENTE", ids(everywhere), []string{neID, southID}}, // an unknown store is in no group
		} {
			_, eligible, reasons := validate(tc.store)
			require.Equal(t, tc.eligible, eligible, "at %q", tc.store)
			for _, id := range tc.mismatch {
				require.Equal(t, "store_mismatch", reasons[id], "at %q", tc.store)
			}
		}

		// A token of Recife does not redeem the south's campaign; one of
		// Porto Alegre does.
		recife, _, _ := validate("LJ-NE")
		r := e.campRedeem(t, southID, campRedeemBody(customer, "order-ne", recife, "36.00"))
		requireV1Error(t, r, http.StatusUnprocessableEntity, "campaign_not_eligible", "campaign_id")
		portoAlegre, _, _ := validate("LJ-SUL")
		r = e.campRedeem(t, southID, campRedeemBody(customer, "order-sul", portoAlegre, "36.00"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)

		// Recife joins the south: its validations see the south's campaign at once.
		recifeStore, err := e.app.DB.Ent.Store.Query().All(e.ctx)
		require.NoError(t, err)
		for _, s := range recifeStore {
			if s.Code == "LJ-NE" {
				_, err = e.app.Backoffice.UpdateStore(e.ctx, s.ID, nil, nil, []string{"nordeste", "sul"})
				require.NoError(t, err)
			}
		}
		_, eligible, _ := validate("LJ-NE")
		require.Equal(t, ids(ne, south, everywhere), eligible)

		for _, bad := range []any{[]string{""}, []string{" LJ-1"}, "LJ-1"} {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "store_codes", bad))
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%v: %s", bad, r.body)
		}
	})
}

// TestStoreTargetingPOS: at the till, a store's discounts are those of its
// code and its groups, and a sale's bonus points those of its store.
func TestStoreTargetingPOS(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		stores, err := e.db.Ent.Store.Query().All(e.posTenantCtx())
		require.NoError(t, err)
		require.Len(t, stores, 1)
		_, err = e.app.Backoffice.UpdateStore(e.posTenantCtx(), stores[0].ID, nil, nil, []string{"sul"})
		require.NoError(t, err)
		_, err = e.app.Backoffice.CreateStore(posSys(), e.tenantID, "LJ002", "Loja Shopping", "sudeste")
		require.NoError(t, err)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		south := e.posCampaign(t, campaigns.CampaignInput{Name: "Dez no sul", Channels: []string{"pdv"}, StoreGroups: []string{"sul"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("10")}})
		shopping := e.posCampaign(t, campaigns.CampaignInput{Name: "Vinte no shopping", Channels: []string{"pdv"}, StoreCodes: []string{"LJ002"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("20")}})

		authorizeAt := func(store string) map[string]any {
			body := posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2"))
			body["sale"].(map[string]any)["store"] = map[string]any{"id": store}
			r := e.posPost(t, "/discounts/authorizations", body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			items := r.obj(t)["sale"].(map[string]any)["items"].([]any)
			discounts := items[0].(map[string]any)["discounts"].([]any)
			require.Len(t, discounts, 1, "%s", r.body)
			return discounts[0].(map[string]any)
		}
		require.Equal(t, south, authorizeAt(posStore)["promotionId"])
		require.Equal(t, shopping, authorizeAt("LJ002")["promotionId"])

		// Bonus points of the shopping's campaign: its sales earn them, the
		// south's do not.
		e.posCampaign(t, campaigns.CampaignInput{Name: "Pontos em dobro no shopping", Type: "bonus_points", Channels: []string{"pdv"},
			StoreCodes: []string{"LJ002"}, Discount: &campaigns.DiscountInput{Multiplier: posDecPtr("2")}})
		for _, s := range []struct {
			receipt, store string
			bonus          bool
		}{{"9001", posStore, false}, {"9002", "LJ002", true}} {
			body := posSaleBody(posN(s.receipt), map[string]any{"id": doc, "type": "CPF"})
			body["sale"].(map[string]any)["store"].(map[string]any)["id"] = s.store
			body["sale"].(map[string]any)["date"] = time.Now().Format(time.RFC3339) // while the campaign runs
			r := e.posPost(t, "/sales", body)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			posWork(t, e, e.posSaleID(t, s.receipt))
		}
		bonus, err := e.db.Ent.PointsEntry.Query().
			Where(pointsentry.CustomerID(cust.ID), pointsentry.KindEQ(pointsentry.KindBonus)).All(e.posTenantCtx())
		require.NoError(t, err)
		require.Len(t, bonus, 1, "one bonus, of the shopping's sale")
		sales, err := e.db.Ent.Sale.Query().All(e.posTenantCtx())
		require.NoError(t, err)
		for _, s := range sales {
			if s.ExternalID == "9002" {
				require.Equal(t, s.ID, *bonus[0].SourceID)
			}
		}
	})
}
