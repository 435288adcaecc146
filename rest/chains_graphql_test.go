package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestChainCampaignsGraphQL: the back office creates an exclusive campaign
// that requires a code, adds codes and lists them with their status,
// imports products and reads the catalogue, and validateCart takes a
// coupon code and explains what stacking excluded.
func TestChainCampaignsGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		admin := f.userToken(t, f.tenantID, viewer.RoleAdmin)
		camp := gqlData(t, f.gql(t, admin, `mutation { createCampaign(input: {name: "Cupom exclusivo", type: discount, discountMode: percentage,
			discountValue: "30", stacking: exclusive, priority: 5, requiresCode: true, eligibleBrands: ["Ypê"],
			startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id stacking priority requiresCode eligibleBrands } }`, nil))["createCampaign"].(map[string]any)
		require.Equal(t, "exclusive", camp["stacking"])
		require.Equal(t, 5.0, camp["priority"])
		require.Equal(t, true, camp["requiresCode"])
		require.Equal(t, []any{"Ypê"}, camp["eligibleBrands"])
		other := gqlData(t, f.gql(t, admin, `mutation { createCampaign(input: {name: "Cinco", type: discount, discountMode: percentage,
			discountValue: "5", startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id } }`, nil))["createCampaign"].(map[string]any)

		added := gqlData(t, f.gql(t, admin, `mutation($id: ID!) { addCoupons(input: {campaignID: $id, codes: ["YPE-10", "?"], maxUses: 2}) {
			created problems { field message } } }`, map[string]any{"id": camp["id"]}))["addCoupons"].(map[string]any)
		require.Equal(t, 1.0, added["created"])
		require.Equal(t, "codes[1]", added["problems"].([]any)[0].(map[string]any)["field"])
		generated := gqlData(t, f.gql(t, admin, `mutation($id: ID!) { addCoupons(input: {campaignID: $id, generate: 2, prefix: "G-"}) { created } }`,
			map[string]any{"id": camp["id"]}))["addCoupons"].(map[string]any)
		require.Equal(t, 2.0, generated["created"])
		codes := gqlData(t, f.gql(t, admin, `query($id: ID!) { node(id: $id) { ... on Campaign { coupons(first: 10) { totalCount edges { node { code maxUses uses } } } } } }`,
			map[string]any{"id": camp["id"]}))["node"].(map[string]any)["coupons"].(map[string]any)
		require.Equal(t, 3.0, codes["totalCount"])

		imported := gqlData(t, f.gql(t, admin, `mutation { importProducts(products: [{gtin: "7891000100110", name: "Detergente", category: "Limpeza", brand: "Ypê"},
			{name: "Sem código"}]) { created updated problems { field message } } }`, nil))["importProducts"].(map[string]any)
		require.Equal(t, 1.0, imported["created"])
		require.Equal(t, []any{map[string]any{"field": "products[1].gtin", "message": "or sku is required"}}, imported["problems"])
		products := gqlData(t, f.gql(t, admin, `{ products(first: 5) { edges { node { gtin name category brand } } } }`, nil))["products"].(map[string]any)
		require.Equal(t, map[string]any{"gtin": "7891000100110", "name": "Detergente", "category": "Limpeza", "brand": "Ypê"},
			products["edges"].([]any)[0].(map[string]any)["node"])

		customer := gqlData(t, f.gql(t, admin, `mutation { createCustomer(input: {name: "Ana", email: "ana@example.com", cpf: "52998224725"}) { id } }`, nil))["createCustomer"].(map[string]any)
		validation := gqlData(t, f.gql(t, admin, `mutation($c: ID!) { validateCart(input: {customerID: $c, couponCode: "ype-10",
			items: [{gtin: "7891000100110", quantity: "1", unitPrice: "10"}]}) { eligible { campaign { id } } ineligible { campaign { id } reason excludedBy } } }`,
			map[string]any{"c": customer["id"]}))["validateCart"].(map[string]any)
		require.Equal(t, camp["id"], validation["eligible"].([]any)[0].(map[string]any)["campaign"].(map[string]any)["id"])
		require.Equal(t, map[string]any{"campaign": map[string]any{"id": other["id"]}, "reason": "excluded_by_stacking", "excludedBy": camp["id"]},
			validation["ineligible"].([]any)[0])
	})
}

// TestPrivacyGraphQL: administrators read the audit trail with filters, a
// customer's consent history, its export, and erase it.
func TestPrivacyGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		admin := f.userToken(t, f.tenantID, viewer.RoleAdmin)
		customer := gqlData(t, f.gql(t, admin, `mutation { createCustomer(input: {name: "Ana", email: "ana@example.com", cpf: "52998224725",
			consent: {marketingEmail: true, dataSharing: true}}) { id consentMarketingEmail consentDataSharing } }`, nil))["createCustomer"].(map[string]any)
		require.Equal(t, true, customer["consentDataSharing"])
		id := customer["id"].(string)
		history := gqlData(t, f.gql(t, admin, `query($id: ID!) { node(id: $id) { ... on Customer { consentChanges(first: 10) {
			edges { node { purpose granted channel } } } } } }`, map[string]any{"id": id}))["node"].(map[string]any)["consentChanges"].(map[string]any)
		require.Len(t, history["edges"], 2)

		doc := gqlData(t, f.gql(t, admin, `query($id: ID!) { customerExport(id: $id) }`, map[string]any{"id": id}))["customerExport"].(string)
		require.Contains(t, doc, `"document":"52998224725"`)
		require.Equal(t, id, gqlData(t, f.gql(t, admin, `mutation($id: ID!) { eraseCustomer(id: $id) }`, map[string]any{"id": id}))["eraseCustomer"])
		gone := f.gql(t, admin, `query($id: ID!) { customerExport(id: $id) }`, map[string]any{"id": id})
		require.Equal(t, []string{"not_found"}, gone.codes(), "%s", gone.Raw)

		trail := gqlData(t, f.gql(t, admin, `{ auditEvents(where: {targetID: "`+id+`"}, orderBy: {field: CREATED_AT, direction: ASC}) {
			edges { node { action actorKind } } } }`, nil))["auditEvents"].(map[string]any)["edges"].([]any)
		var actions []any
		for _, e := range trail {
			actions = append(actions, e.(map[string]any)["node"].(map[string]any)["action"])
		}
		require.Equal(t, []any{"customer.exported", "customer.erased"}, actions)
	})
}
