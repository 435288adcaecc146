package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestGraphQLFlow runs the e-commerce flow through GraphQL mutations, the
// same operations the REST paths call: a customer, a campaign, a validated
// cart, a redemption, the order's points, and the ledger on the customer.
func TestGraphQLFlow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		token := s.tokenFor(t, strings.Join(auth.Scopes, " "))
		gql := func(query string, vars map[string]any) map[string]any {
			t.Helper()
			body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
			req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var out struct {
				Data   map[string]any   `json:"data"`
				Errors []map[string]any `json:"errors"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
			require.Empty(t, out.Errors, query)
			return out.Data
		}
		field := func(m map[string]any, path ...string) any {
			var v any = m
			for _, p := range path {
				v = v.(map[string]any)[p]
			}
			return v
		}

		cust := gql(`mutation { createCustomer(input: {name: "Ana Souza", email: "ana@example.com", cpf: "529.982.247-25"}) { id documentMasked posStatus } }`, nil)
		customerID := field(cust, "createCustomer", "id").(string)
		require.Equal(t, "***.***.***-25", field(cust, "createCustomer", "documentMasked"))
		require.Equal(t, "INCOMPLETE", field(cust, "createCustomer", "posStatus"))

		camp := gql(`mutation { createCampaign(input: {name: "10% off", type: discount, discountMode: percentage, discountValue: "10",
			startsAt: "2020-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z", channels: ["ecommerce"]}) { id status } }`, nil)
		campaignID := field(camp, "createCampaign", "id").(string)
		require.Equal(t, "active", field(camp, "createCampaign", "status"))

		v := gql(`mutation($c: ID!) { validateCart(input: {customerID: $c, channel: "ecommerce",
			items: [{sku: "A1", quantity: "2", unitPrice: "50"}]}) {
			validationToken eligible { campaign { id } estimatedBenefit { amount discountAmount items { sku discountAmount } } } } }`,
			map[string]any{"c": customerID})
		eligible := field(v, "validateCart", "eligible").([]any)
		require.Len(t, eligible, 1)
		require.Equal(t, campaignID, field(eligible[0].(map[string]any), "campaign", "id"))
		require.Equal(t, "10.00", field(eligible[0].(map[string]any), "estimatedBenefit", "amount"))

		red := gql(`mutation($cmp: ID!, $c: ID!, $t: String!) { redeemCampaign(input: {campaignID: $cmp, customerID: $c,
			orderID: "o-1", validationToken: $t, amountPaid: "90"}) { id orderID discountAmount } }`,
			map[string]any{"cmp": campaignID, "c": customerID, "t": field(v, "validateCart", "validationToken")})
		require.Equal(t, "10.00", field(red, "redeemCampaign", "discountAmount"))

		credit := gql(`mutation($c: ID!) { creditPoints(input: {customerID: $c, orderID: "o-1"}) { replayed entry { points balanceAfter } } }`,
			map[string]any{"c": customerID})
		require.EqualValues(t, 90, field(credit, "creditPoints", "entry", "points"), "the redemption's amount paid earns the points")

		ledger := gql(`{ customers { edges { node { pointsBalance pointsEntries { totalCount edges { node { kind points } } } } } } }`, nil)
		edges := ledger["customers"].(map[string]any)["edges"].([]any)
		require.Len(t, edges, 1)
		n := edges[0].(map[string]any)["node"].(map[string]any)
		require.EqualValues(t, 90, n["pointsBalance"])
		require.EqualValues(t, 1, n["pointsEntries"].(map[string]any)["totalCount"])

		ended := gql(`mutation($cmp: ID!) { endCampaign(id: $cmp) { status } }`, map[string]any{"cmp": campaignID})
		require.Equal(t, "ended", field(ended, "endCampaign", "status"))
	})
}
