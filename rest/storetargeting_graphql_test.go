package rest_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestStoreTargetingGraphQL: the back office gives stores their groups and
// campaigns their stores and budgets, and reads them back.
func TestStoreTargetingGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		admin := f.userToken(t, f.tenantID, viewer.RoleAdmin)
		store := gqlData(t, f.gql(t, admin, `mutation { createStore(input: {code: "LJ-BH", name: "Loja BH", groups: ["MG", "sudeste"]}) { id code groups } }`, nil))["createStore"].(map[string]any)
		require.Equal(t, []any{"MG", "sudeste"}, store["groups"])
		moved := gqlData(t, f.gql(t, admin, `mutation($id: ID!) { updateStore(id: $id, input: {groups: ["sudeste"]}) { groups } }`,
			map[string]any{"id": store["id"]}))["updateStore"].(map[string]any)
		require.Equal(t, []any{"sudeste"}, moved["groups"])
		kept := gqlData(t, f.gql(t, admin, `mutation($id: ID!) { updateStore(id: $id, input: {name: "Loja Savassi"}) { name groups } }`,
			map[string]any{"id": store["id"]}))["updateStore"].(map[string]any)
		require.Equal(t, []any{"sudeste"}, kept["groups"], "groups absent: kept")
		cleared := gqlData(t, f.gql(t, admin, `mutation($id: ID!) { updateStore(id: $id, input: {groups: []}) { groups } }`,
			map[string]any{"id": store["id"]}))["updateStore"].(map[string]any)
		require.Nil(t, cleared["groups"])

		camp := gqlData(t, f.gql(t, admin, `mutation { createCampaign(input: {name: "Sudeste", type: discount, discountMode: percentage, discountValue: "5",
			storeCodes: ["LJ-BH"], storeGroups: ["sudeste"], startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id storeCodes storeGroups } }`, nil))["createCampaign"].(map[string]any)
		require.Equal(t, []any{"LJ-BH"}, camp["storeCodes"])
		require.Equal(t, []any{"sudeste"}, camp["storeGroups"])

		budgeted := gqlData(t, f.gql(t, admin, `mutation { createCampaign(input: {name: "Orçamento", type: cashback, discountMode: percentage, discountValue: "5",
			budgetTotal: "1000", budgetPerStore: "100", budgetPeriod: week, budgetPerPeriod: "250.50", startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) {
			budgetTotal budgetPerStore budgetPeriod budgetPerPeriod budgetSpent } }`, nil))["createCampaign"].(map[string]any)
		require.Equal(t, map[string]any{"budgetTotal": "1000.00", "budgetPerStore": "100.00", "budgetPeriod": "week",
			"budgetPerPeriod": "250.50", "budgetSpent": nil}, budgeted)
		refused := f.gql(t, admin, `mutation { createCampaign(input: {name: "Pontos", type: bonus_points, multiplier: "2", budgetTotal: "10",
			startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id } }`, nil)
		require.Equal(t, []string{"validation_error"}, refused.codes(), "%s", refused.Raw)

		bad := f.gql(t, admin, `mutation { createStore(input: {code: "LJ-X", name: "X", groups: [" sul"]}) { id } }`, nil)
		require.Equal(t, []string{"validation_error"}, bad.codes(), "%s", bad.Raw)
	})
}

// gqlData is the data of an answer without errors.
func gqlData(t *testing.T, a gqlAnswer) map[string]any {
	t.Helper()
	require.Empty(t, a.Errors, "%s", a.Raw)
	var d map[string]any
	require.NoError(t, json.Unmarshal(a.Data, &d))
	return d
}
