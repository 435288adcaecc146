package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// scopeServer is the test environment, whose OAuth client may hold every
// scope.
type scopeServer struct {
	*TestEnv
	// routes is the router itself: srv's handler checks the contract
	// around it.
	routes chi.Routes
}

func newScopeServer(t testing.TB, db *storage.DB, configure ...func(*ServerSetup)) *scopeServer {
	t.Helper()
	e := newTestEnv(t, db, configure...)
	return &scopeServer{TestEnv: e, routes: e.mux.(chi.Routes)}
}

// otherScope returns a scope that is not scope.
func otherScope(scope string) string {
	if scope == "loyalty:read" {
		return "loyalty:write"
	}
	return "loyalty:read"
}

// TestEveryRouteHasAScope walks the router: each route is public or in
// RouteScopes, and each RouteScopes entry is mounted.
func TestEveryRouteHasAScope(t *testing.T) {
	t.Parallel()
	s := newScopeServer(t, storagetest.Open(t, "sqlite3"))
	mounted := map[string]bool{}
	err := chi.Walk(s.routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := method + " " + route
		mounted[key] = true
		_, scoped := RouteScopes[key]
		require.Truef(t, scoped || PublicRoutes[key] || POSRoutes[key], "route %s is neither public, POS nor in RouteScopes", key)
		return nil
	})
	require.NoError(t, err)
	for key := range RouteScopes {
		require.Truef(t, mounted[key], "RouteScopes names %s, which is not mounted", key)
	}
	for key := range PublicRoutes {
		require.Truef(t, mounted[key], "PublicRoutes names %s, which is not mounted", key)
	}
	for key := range POSRoutes {
		require.Truef(t, mounted[key], "POSRoutes names %s, which is not mounted", key)
	}
}

// TestScopeMatrix calls every scoped route with a token lacking its scope
// (403 naming it) and with a token holding it (not 401/403).
func TestScopeMatrix(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		for key, scope := range RouteScopes {
			if scope == "" {
				continue // GraphQL: field scopes, see TestGraphQLScopeMatrix
			}
			method, route, _ := strings.Cut(key, " ")
			path := strings.ReplaceAll(route, "{id}", "cus_00000000000000000000000000")
			t.Run(key, func(t *testing.T) {
				call := func(token string) (int, map[string]any) {
					req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(`{}`))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					var body map[string]any
					raw, _ := io.ReadAll(resp.Body)
					_ = json.Unmarshal(raw, &body)
					return resp.StatusCode, body
				}
				status, body := call(s.tokenFor(t, otherScope(scope)))
				require.Equal(t, http.StatusForbidden, status, body)
				require.Equal(t, "insufficient_scope", body["error"])
				require.Contains(t, body["error_description"], scope)

				status, body = call(s.tokenFor(t, scope))
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status, body)
			})
		}
	})
}

// graphQLProbes is one query per root field; a field of RootFieldScopes
// without a probe fails TestGraphQLScopeMatrix.
var graphQLProbes = map[string]string{
	"Query.node":                  `{ node(id: "cus_00000000000000000000000000") { id } }`,
	"Query.nodes":                 `{ nodes(ids: ["cus_00000000000000000000000000"]) { id } }`,
	"Query.tenants":               `{ tenants { totalCount } }`,
	"Query.stores":                `{ stores { totalCount } }`,
	"Query.apiClients":            `{ apiClients { totalCount } }`,
	"Query.customers":             `{ customers { totalCount } }`,
	"Query.customerSearch":        `{ customerSearch(search: "ana") { totalCount } }`,
	"Query.customerByDocument":    `{ customerByDocument(document: "52998224725") { id } }`,
	"Query.segments":              `{ segments { totalCount } }`,
	"Query.previewAudience":       `{ previewAudience(rule: "points > 100") { count } }`,
	"Query.campaigns":             `{ campaigns { totalCount } }`,
	"Mutation.createCustomer":     `mutation { createCustomer(input: {name: "Ana", email: "ana@example.com", cpf: "52998224725"}) { id } }`,
	"Mutation.updateCustomer":     `mutation { updateCustomer(id: "cus_00000000000000000000000000", input: {name: "Ana"}) { id } }`,
	"Query.pointsLiability":       `{ pointsLiability { total } }`,
	"Query.predictiveSegments":    `{ predictiveSegments { key customers } }`,
	"Mutation.createCampaign":     `mutation { createCampaign(input: {name: "x", type: gift, giftSku: "G", startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id } }`,
	"Mutation.pauseCampaign":      `mutation { pauseCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.resumeCampaign":     `mutation { resumeCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.endCampaign":        `mutation { endCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.validateCart":       `mutation { validateCart(input: {customerID: "cus_00000000000000000000000000", items: [{sku: "A", quantity: "1", unitPrice: "10"}]}) { validationToken } }`,
	"Mutation.redeemCampaign":     `mutation { redeemCampaign(input: {campaignID: "cmp_00000000000000000000000000", customerID: "cus_00000000000000000000000000", orderID: "o", validationToken: "vtk_x", amountPaid: "10"}) { id } }`,
	"Query.sales":                 `{ sales { totalCount } }`,
	"Query.redemptions":           `{ redemptions { totalCount } }`,
	"Mutation.creditPoints":       `mutation { creditPoints(input: {customerID: "cus_00000000000000000000000000", orderID: "o-1", points: 10}) { replayed } }`,
	"Mutation.debitPoints":        `mutation { debitPoints(input: {customerID: "cus_00000000000000000000000000", points: 10}) { replayed } }`,
	"Mutation.adjustPoints":       `mutation { adjustPoints(input: {customerID: "cus_00000000000000000000000000", points: 10, reason: "gift"}) { replayed } }`,
	"Mutation.reversePoints":      `mutation { reversePoints(input: {customerID: "cus_00000000000000000000000000", orderID: "o-1", reversalID: "r-1", reason: "refund"}) { replayed } }`,
	"Mutation.rollbackRedemption": `mutation { rollbackRedemption(id: "red_00000000000000000000000000", reason: "cancelled") { id } }`,
	"Mutation.addCoupons":         `mutation { addCoupons(input: {campaignID: "cmp_00000000000000000000000000", codes: ["SONDA-1"]}) { created } }`,
	"Mutation.importProducts":     `mutation { importProducts(products: [{sku: "SONDA-1", name: "Sonda"}]) { created } }`,
	"Query.products":              `{ products { totalCount } }`,
	"Query.customerExport":        `{ customerExport(id: "cus_00000000000000000000000000") }`,
	"Query.auditEvents":           `{ auditEvents { totalCount } }`,
	"Mutation.eraseCustomer":      `mutation { eraseCustomer(id: "cus_00000000000000000000000000") }`,

	"Query.pointsEntries":  `{ pointsEntries { totalCount } }`,
	"Query.giftCards":      `{ giftCards { totalCount } }`,
	"Query.giftCardByCode": `{ giftCardByCode(code: "0000-0000-0000-0000-0000") { id } }`,

	"Mutation.issueGiftCards":    `mutation { issueGiftCards(input: {amount: "50.00"}) { cards { code } } }`,
	"Mutation.loadGiftCard":      `mutation { loadGiftCard(id: "gcd_00000000000000000000000000", input: {amount: "5.00", loadID: "l-1"}) { replayed } }`,
	"Mutation.bindGiftCard":      `mutation { bindGiftCard(id: "gcd_00000000000000000000000000", customerID: "cus_00000000000000000000000000") { id } }`,
	"Mutation.transferGiftCard":  `mutation { transferGiftCard(id: "gcd_00000000000000000000000000", input: {toGiftCardID: "gcd_00000000000000000000000001", transferID: "t-1"}) { replayed } }`,
	"Mutation.cancelGiftCard":    `mutation { cancelGiftCard(id: "gcd_00000000000000000000000000") { replayed } }`,
	"Query.events":               `{ events { totalCount } }`,
	"Query.customersByLevel":     `{ customersByLevel { level customers } }`,
	"Query.activeCustomers":      `{ activeCustomers(from: "2020-01-01T00:00:00Z", to: "2099-01-01T00:00:00Z") }`,
	"Query.topCustomers":         `{ topCustomers(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { sales } }`,
	"Query.salesByStoreDay":      `{ salesByStoreDay(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { day sales amount } }`,
	"Query.pointsLiabilityByDay": `{ pointsLiabilityByDay(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { day points } }`,
	"Query.customerImport":       `{ customerImport(id: "imp_00000000000000000000000000") { status } }`,

	"Query.pointsSpentByStoreDay": `{ pointsSpentByStoreDay(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z") { store { code } day sales points amount } }`,

	"Mutation.createStore":            `mutation { createStore(input: {code: "L-99", name: "Loja 99"}) { id } }`,
	"Mutation.updateStore":            `mutation { updateStore(id: "sto_00000000000000000000000000", input: {name: "Loja"}) { id } }`,
	"Mutation.createAPIClient":        `mutation { createAPIClient(input: {kind: oauth, name: "probe", scopes: ["customers:read"]}) { clientSecret client { id } } }`,
	"Mutation.rotateAPIClientSecret":  `mutation { rotateAPIClientSecret(id: "cli_00000000000000000000000000") { clientSecret client { id } } }`,
	"Mutation.revokeAPIClient":        `mutation { revokeAPIClient(id: "cli_00000000000000000000000000") { id revoked } }`,
	"Mutation.updateTenantSettings":   `mutation { updateTenantSettings(input: {name: "Loja Sonda"}) { id name } }`,
	"Mutation.createSegment":          `mutation { createSegment(input: {name: "Sonda"}) { id } }`,
	"Mutation.updateSegment":          `mutation { updateSegment(id: "seg_00000000000000000000000000", input: {name: "Sonda"}) { id } }`,
	"Mutation.addSegmentCustomers":    `mutation { addSegmentCustomers(segmentID: "seg_00000000000000000000000000", customerIDs: ["cus_00000000000000000000000000"]) { id } }`,
	"Mutation.removeSegmentCustomers": `mutation { removeSegmentCustomers(segmentID: "seg_00000000000000000000000000", customerIDs: ["cus_00000000000000000000000000"]) { id } }`,
	"Mutation.importSegmentCustomers": `mutation { importSegmentCustomers(segmentID: "seg_00000000000000000000000000", cpfs: ["11144477735"]) { added notFound invalid } }`,
	"Mutation.refreshChurnScores":     `mutation { refreshChurnScores { queued } }`,

	"Query.webhookEndpoints":         `{ webhookEndpoints { totalCount } }`,
	"Query.webhookDeliveries":        `{ webhookDeliveries { totalCount } }`,
	"Mutation.createWebhookEndpoint": `mutation { createWebhookEndpoint(input: {url: "https://hooks.example.com/sonda", events: ["sale.processed"]}) { secret endpoint { id } } }`,
	"Mutation.updateWebhookEndpoint": `mutation { updateWebhookEndpoint(id: "whk_00000000000000000000000000", input: {description: "Sonda"}) { id } }`,
	"Mutation.deleteWebhookEndpoint": `mutation { deleteWebhookEndpoint(id: "whk_00000000000000000000000000") }`,
	"Mutation.rotateWebhookSecret":   `mutation { rotateWebhookSecret(id: "whk_00000000000000000000000000") { secret endpoint { id } } }`,
	"Mutation.redeliverWebhook":      `mutation { redeliverWebhook(deliveryID: "dlv_00000000000000000000000000") { id status } }`,
}

// GraphQLProbes lends graphQLProbes to the rest_test package (the role
// tests), which cannot see this package's unexported test names.
var GraphQLProbes = graphQLProbes

func TestGraphQLScopeMatrix(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		for field, scope := range graph.RootFieldScopes {
			query, ok := graphQLProbes[field]
			require.Truef(t, ok, "no probe for %s", field)
			t.Run(field, func(t *testing.T) {
				call := func(token string) []map[string]any {
					body, _ := json.Marshal(map[string]string{"query": query})
					req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/graphql", strings.NewReader(string(body)))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					var out struct {
						Errors []map[string]any `json:"errors"`
					}
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
					return out.Errors
				}
				codes := func(errs []map[string]any) []any {
					var cs []any
					for _, e := range errs {
						ext, _ := e["extensions"].(map[string]any)
						cs = append(cs, ext["code"])
					}
					return cs
				}
				switch scope {
				case "":
					require.NotContains(t, codes(call(s.tokenFor(t, "loyalty:read"))), "insufficient_scope")
				case kernel.ScopeBackoffice, kernel.ScopeBackofficeWrite:
					// OAuth clients can never hold it: only back-office users.
					require.Contains(t, codes(call(s.tokenFor(t, strings.Join(auth.Scopes, " ")))), "insufficient_scope")
				default:
					errs := call(s.tokenFor(t, otherScope(scope)))
					require.Contains(t, codes(errs), "insufficient_scope")
					require.Contains(t, errs[0]["message"], scope)
					require.NotContains(t, codes(call(s.tokenFor(t, scope))), "insufficient_scope")
				}
			})
		}
	})
}

// TestGraphQLFieldScopes: an edge below the root needs the scope of the
// entity it leads to (graph.TypeScopes), even when the root field is allowed.
func TestGraphQLFieldScopes(t *testing.T) {
	t.Parallel()
	// Each edge is read from a root whose scope is root; the edge needs
	// graph.TypeScopes of its type. Data exists below every edge, so each
	// edge's resolver runs.
	edges := []struct {
		edge, target, root, query string
	}{
		{"Customer.pointsEntries", "PointsEntry", "customers:read", `{ customers { edges { node { name pointsEntries { totalCount } } } } }`},
		{"Customer.walletEntries", "WalletEntry", "customers:read", `{ customers { edges { node { name walletEntries { totalCount } } } } }`},
		{"Customer.giftCards", "GiftCard", "customers:read", `{ customers { edges { node { name giftCards { totalCount } } } } }`},
		{"Customer.segments", "Segment", "customers:read", `{ customers { edges { node { name segments { totalCount } } } } }`},
		{"Customer.redemptions", "Redemption", "customers:read", `{ customers { edges { node { name redemptions { totalCount } } } } }`},
		{"Customer.sales", "Sale", "customers:read", `{ customers { edges { node { name sales { totalCount } } } } }`},
		{"Segment.customers", "Customer", "customers:read", `{ segments { edges { node { name customers { totalCount } } } } }`},
		{"Segment.campaigns", "Campaign", "customers:read", `{ segments { edges { node { name campaigns { totalCount } } } } }`},
		{"Campaign.redemptions", "Redemption", "campaigns:read", `{ campaigns { edges { node { name redemptions { totalCount } } } } }`},
		{"Campaign.segment", "Segment", "campaigns:read", `{ campaigns { edges { node { name segment { id } } } } }`},
		{"Redemption.customer", "Customer", "campaigns:read", `{ redemptions { edges { node { orderID customer { id } } } } }`},
		{"Redemption.campaign", "Campaign", "campaigns:read", `{ redemptions { edges { node { orderID campaign { id } } } } }`},
		{"Redemption.sale", "Sale", "campaigns:read", `{ redemptions { edges { node { orderID sale { id } } } } }`},
		{"PointsEntry.customer", "Customer", "loyalty:read", `{ pointsEntries { edges { node { points customer { id } } } } }`},
		{"GiftCard.customer", "Customer", "loyalty:read", `{ giftCards { edges { node { codeLast4 customer { id } } } } }`},
		{"GiftCard.entries", "GiftCardEntry", "loyalty:read", `{ giftCards { edges { node { codeLast4 entries { totalCount } } } } }`},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		seedEdges(t, s.app, s.tenantID)
		call := func(t *testing.T, query, token string) string {
			body, _ := json.Marshal(map[string]string{"query": query})
			req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/graphql", strings.NewReader(string(body)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			raw, _ := io.ReadAll(resp.Body)
			return string(raw)
		}
		for _, e := range edges {
			t.Run(e.edge, func(t *testing.T) {
				scope, ok := graph.TypeScopes[e.target]
				require.Truef(t, ok, "no TypeScopes entry for %s", e.target)
				switch scope {
				case e.root:
					// The root's scope is the edge's: nothing more is needed.
					got := call(t, e.query, s.tokenFor(t, e.root))
					require.NotContains(t, got, "insufficient_scope")
					require.NotContains(t, got, `"errors"`)
				case kernel.ScopeBackoffice, kernel.ScopeBackofficeWrite:
					// No OAuth client reaches it, even with every scope.
					got := call(t, e.query, s.tokenFor(t, strings.Join(auth.Scopes, " ")))
					require.Contains(t, got, "insufficient_scope")
					require.Contains(t, got, scope)
				default:
					without := call(t, e.query, s.tokenFor(t, e.root))
					require.Contains(t, without, "insufficient_scope")
					require.Contains(t, without, scope)
					with := call(t, e.query, s.tokenFor(t, e.root+" "+scope))
					require.NotContains(t, with, "insufficient_scope")
					require.NotContains(t, with, `"errors"`)
				}
			})
		}
	})
}

// seedEdges gives the tenant one row below every edge of
// TestGraphQLFieldScopes: a customer in a segment that a campaign targets,
// with points, a sale and a redemption of that sale.
func seedEdges(t *testing.T, a *app.App, tenantID string) {
	t.Helper()
	ctx := viewer.TenantContext(context.Background(), tenantID)
	cust, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{
		Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725"),
	})
	require.NoError(t, err)
	seg, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: opt.Of("VIP").Ptr()})
	require.NoError(t, err)
	_, err = a.Customers.AddSegmentCustomers(ctx, seg.ID, []string{cust.ID})
	require.NoError(t, err)
	starts, ends := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	camp, err := a.Campaigns.CreateCampaign(ctx, campaigns.CampaignInput{
		Name: "Brinde", Type: "gift", StartsAt: &starts, EndsAt: &ends, SegmentID: &seg.ID,
		Discount: &campaigns.DiscountInput{GiftSKU: opt.Of("G").Ptr()},
	})
	require.NoError(t, err)
	_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: cust.ID, OrderID: "o-1", Points: opt.Of[int64](10).Ptr()})
	require.NoError(t, err)
	_, err = a.GiftCards.IssueGiftCards(ctx, giftcards.IssueInput{Amount: opt.Of(decimal.NewFromInt(50)).Ptr(), CustomerID: cust.ID})
	require.NoError(t, err)
	st, err := a.Backoffice.CreateStore(ctx, tenantID, "L1", "Loja 1")
	require.NoError(t, err)
	sl, err := a.DB.Ent.Sale.Create().SetStoreID(st.ID).SetExternalID("1").SetCustomerID(cust.ID).
		SetSoldAt(time.Now().UTC().Truncate(time.Second)).SetAmount(decimal.NewFromInt(100)).
		SetAmountPayable(decimal.NewFromInt(100)).SetDiscountAmount(decimal.Zero).Save(ctx)
	require.NoError(t, err)
	_, err = a.DB.Ent.Redemption.Create().SetCampaignID(camp.ID).SetCustomerID(cust.ID).SetOrderID("o-1").
		SetSaleID(sl.ID).SetAmountPaid(decimal.NewFromInt(100)).SetDiscountAmount(decimal.Zero).
		SetCashbackAmount(decimal.Zero).SetBenefit([]byte(`{"type":"gift"}`)).Save(ctx)
	require.NoError(t, err)
}
