package rest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestHoldoutSameSideEverywhere: a campaign created over /v1 with a holdout
// holds out the same customers on /v1 validate (explain: holdout), at the
// point of sale (no discount), on GraphQL's validateCart and in
// Campaign.holdoutContains, all as experiment.HeldOut draws them; a holdout
// beyond half the customers is refused.
func TestHoldoutSameSideEverywhere(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, campScopeRead, campScopeWrite, "customers:read")
		now := time.Now()
		body := map[string]any{"name": "Dez com grupo de controle", "type": "discount",
			"starts_at": campStamp(now.Add(-time.Hour)), "ends_at": campStamp(now.AddDate(0, 1, 0)),
			"discount": map[string]any{"mode": "percentage", "value": 10}, "holdout_basis_points": 5001}
		r := e.bearer(t, http.MethodPost, "/v1/campaigns", token, body)
		requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "holdout_basis_points", "holdout_basis_points")
		body["holdout_basis_points"] = 5000
		r = e.bearer(t, http.MethodPost, "/v1/campaigns", token, body)
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		created := r.obj(t)
		require.Equal(t, json.Number("5000"), created["holdout_basis_points"])
		campaignID := created["id"].(string)

		// Customers until three are on each side.
		type member struct{ id, doc string }
		sides := map[bool][]member{}
		for len(sides[true]) < 3 || len(sides[false]) < 3 {
			require.Less(t, len(sides[true])+len(sides[false]), 60, "a 50%% holdout draws both sides")
			doc := posCPF()
			c := e.posCustomer(t, doc, posCust{name: "Cliente"})
			held := experiment.HeldOut(c.ID, campaignID, 5000)
			sides[held] = append(sides[held], member{c.ID, doc})
		}
		for held, members := range sides {
			for _, m := range members {
				// /v1 validate, explained.
				r := e.bearer(t, http.MethodPost, "/v1/campaigns/validate?explain=true", token,
					map[string]any{"customer_id": m.id, "channel": "pdv", "cart": campCart()})
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				v := r.obj(t)
				_, eligible := campEligible(t, v)[campaignID]
				require.Equal(t, !held, eligible, "validate, held out %v", held)
				if held {
					require.Equal(t, "holdout", ineligibleOf(v)[campaignID]["reason"])
				}

				// The point of sale's authorization.
				r2 := e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": m.doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2")))
				require.Equal(t, http.StatusOK, r2.status, "%s", r2.body)
				discounts := r2.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"].([]any)
				if held {
					require.Empty(t, discounts, "authorize, held out")
				} else {
					require.Len(t, discounts, 1, "authorize, treated")
					require.Equal(t, campaignID, discounts[0].(map[string]any)["promotionId"])
				}

				// GraphQL: the campaign's side, and validateCart's reason.
				a := callGraphQL(t, e.TestEnv, token, false, map[string]any{
					"query":     `query($id: ID!, $c: ID!) { node(id: $id) { ... on Campaign { holdoutBasisPoints holdoutContains(customerID: $c) } } }`,
					"variables": map[string]any{"id": campaignID, "c": m.id}})
				require.Empty(t, a.Errors)
				node := a.Data["node"].(map[string]any)
				require.Equal(t, held, node["holdoutContains"])
				require.EqualValues(t, 5000, node["holdoutBasisPoints"])
				a = callGraphQL(t, e.TestEnv, token, false, map[string]any{
					"query": `mutation($c: ID!) { validateCart(input: {customerID: $c, channel: "pdv", items: [{sku: "SKU-CAFE", quantity: "1", unitPrice: "10"}]}) {
						eligible { campaign { id } } ineligible { campaign { id } reason } } }`,
					"variables": map[string]any{"c": m.id}})
				require.Empty(t, a.Errors)
				got := map[string]string{}
				vc := a.Data["validateCart"].(map[string]any)
				for _, x := range vc["eligible"].([]any) {
					got[x.(map[string]any)["campaign"].(map[string]any)["id"].(string)] = "eligible"
				}
				for _, x := range vc["ineligible"].([]any) {
					got[x.(map[string]any)["campaign"].(map[string]any)["id"].(string)] = x.(map[string]any)["reason"].(string)
				}
				want := "eligible"
				if held {
					want = "holdout"
				}
				require.Equal(t, want, got[campaignID])
			}
		}
	})
}
