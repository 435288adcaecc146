package rest_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	campaignsctx "github.com/fideliza/fideliza/app/campaigns"
	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// Refusal codes: a missing scope, or the data layer refusing the viewer.
const (
	codeScope     = "insufficient_scope"
	codeForbidden = "forbidden"
	codeInternal  = "internal_error"
)

// TestGraphQLRolesOnEveryMutation calls every root field of
// graph.RootFieldScopes, through its probe of rest.GraphQLProbes, as the
// back-office roles and as an OAuth client. The probes' made-up ids are
// replaced with real rows of the tenant, so a call that passes the scope
// check reaches the data layer.
//
//   - an analyst's mutation is refused (insufficient_scope or forbidden) and
//     changes nothing in the tenant;
//   - an OAuth client lacking the field's scope is refused with
//     insufficient_scope (a back-office field even with every OAuth scope);
//   - an admin is never refused, whatever else the probe's data causes;
//   - every query is allowed to both roles.
func TestGraphQLRolesOnEveryMutation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db, manyTokenRequests)
		admin := b.userToken(t, b.tenantID, viewer.RoleAdmin)
		analyst := b.userToken(t, b.tenantID, viewer.RoleAnalyst)
		integration := b.client(t, apiclient.KindOauth) // may be granted every OAuth scope
		targets := seedProbeTargets(t, b.app, b.tenantID)

		var mutations, queries []string
		for field := range graph.RootFieldScopes {
			if strings.HasPrefix(field, "Mutation.") {
				mutations = append(mutations, field)
			} else {
				queries = append(queries, field)
			}
		}
		// The admin's calls run in this order and really change the
		// tenant: the calls that end a row for good go last, so the
		// others find it usable.
		last := map[string]bool{"Mutation.endCampaign": true, "Mutation.revokeAPIClient": true, "Mutation.deleteWebhookEndpoint": true}
		sort.Slice(mutations, func(i, j int) bool {
			if last[mutations[i]] != last[mutations[j]] {
				return last[mutations[j]]
			}
			return mutations[i] < mutations[j]
		})
		sort.Strings(queries)

		for _, field := range mutations {
			t.Run(field, func(t *testing.T) {
				query := probeOf(t, field, targets)
				scope := graph.RootFieldScopes[field]
				name := strings.TrimPrefix(field, "Mutation.")

				before := tenantState(t, db, b.tenantID)
				a := b.gql(t, analyst, query, nil)
				if field != "Mutation.validateCart" { // it writes nothing: below
					require.Truef(t, hasAnyCode(a, codeScope, codeForbidden), "analyst: %s", a.Raw)
					requireNullField(t, a, name)
				}
				require.NotContains(t, a.codes(), codeInternal, "analyst: %s", a.Raw)
				require.Equal(t, before, tenantState(t, db, b.tenantID), "the analyst's %s changed the tenant", field)

				// An OAuth client without the field's scope.
				var granted []string
				switch scope {
				case kernel.ScopeBackoffice, kernel.ScopeBackofficeWrite:
					granted = auth.Scopes // an integration never holds it
				default:
					require.NotEmpty(t, scope, "a mutation with no scope")
					for _, s := range auth.Scopes {
						if s != scope {
							granted = append(granted, s)
						}
					}
				}
				a = b.gql(t, b.token(t, integration, strings.Join(granted, " ")), query, nil)
				require.Contains(t, a.codes(), codeScope, "client with %v: %s", granted, a.Raw)
				require.Contains(t, string(a.Raw), scope)
				requireNullField(t, a, name)
				require.Equal(t, before, tenantState(t, db, b.tenantID), "the client's %s changed the tenant", field)

				// The admin: not_found or validation errors of the probe's
				// data are fine, a refusal or a crash is not.
				a = b.gql(t, admin, query, nil)
				require.Falsef(t, hasAnyCode(a, codeScope, codeForbidden, codeInternal), "admin: %s", a.Raw)
				if len(a.Errors) > 0 {
					t.Logf("admin's probe answered %v (allowed)", a.codes())
				}
			})
		}

		t.Run("an analyst's createSegment leaves the segments as they were", func(t *testing.T) {
			const count = `{ segments { totalCount } }`
			before := b.gql(t, analyst, count, nil)
			require.Empty(t, before.Errors, "%s", before.Raw)
			a := b.gql(t, analyst, `mutation { createSegment(input: {name: "Do analista"}) { id } }`, nil)
			require.Contains(t, a.codes(), codeScope, "%s", a.Raw)
			after := b.gql(t, analyst, count, nil)
			require.JSONEq(t, string(before.Data), string(after.Data))
			n, err := db.Ent.Segment.Query().Where(segment.TenantID(b.tenantID), segment.Name("Do analista")).Count(sys())
			require.NoError(t, err)
			require.Zero(t, n)
		})

		t.Run("an analyst's validateCart writes nothing", func(t *testing.T) {
			// validateCart needs only campaigns:read, which analysts hold. It
			// stored its token, which refused them; the token is now signed
			// and nothing is stored: an analyst sees what a cart qualifies
			// for, and redeeming (campaigns:write) stays refused.
			q := probeOf(t, "Mutation.validateCart", targets)
			for _, token := range []string{analyst, admin} {
				a := b.gql(t, token, q, nil)
				require.Empty(t, a.Errors, "%s", a.Raw)
			}
			n, err := db.Ent.ValidationToken.Query().Where(validationtoken.TenantID(b.tenantID)).Count(sys())
			require.NoError(t, err)
			require.Zero(t, n, "a validation is not stored")
		})

		for _, field := range queries {
			t.Run(field, func(t *testing.T) {
				query := probeOf(t, field, targets)
				for role, token := range map[string]string{"analyst": analyst, "admin": admin} {
					a := b.gql(t, token, query, nil)
					if scope := graph.RootFieldScopes[field]; role == "analyst" && (scope == privacy.ScopePrivacyRead || scope == kernel.ScopeBackofficeWrite) {
						// The data subject's unmasked copy and the audit trail are not an analyst's.
						require.Truef(t, hasAnyCode(a, codeScope), "%s: %s", role, a.Raw)
						continue
					}
					require.Falsef(t, hasAnyCode(a, codeScope, codeForbidden, codeInternal), "%s: %s", role, a.Raw)
				}
			})
		}
	})
}

// probeOf returns the probe of field with its made-up ids replaced by targets' rows.
func probeOf(t *testing.T, field string, targets map[string]string) string {
	t.Helper()
	query, ok := rest.GraphQLProbes[field]
	require.Truef(t, ok, "no probe for %s in graphQLProbes", field)
	for fake, id := range targets {
		query = strings.ReplaceAll(query, fake, id)
	}
	return query
}

// seedProbeTargets creates one row for each made-up id of the probes and
// maps the made-up id to the row's.
func seedProbeTargets(t *testing.T, a *app.App, tenantID string) map[string]string {
	t.Helper()
	ctx := viewer.TenantContext(sys(), tenantID)
	// Not the CPF and e-mail of the createCustomer probe, which must
	// create a customer; the CPF the importSegmentCustomers probe imports.
	cust, err := a.Customers.CreateCustomer(ctx, customersctx.CustomerInput{
		Name: opt.Of("Bia Lima"), Email: opt.Of("bia@example.com"), CPF: opt.Of("11144477735"),
	})
	require.NoError(t, err)
	starts, ends := time.Now().Add(-time.Hour), time.Now().Add(30*24*time.Hour)
	camp, err := a.Campaigns.CreateCampaign(ctx, campaignsctx.CampaignInput{
		Name: "Brinde", Type: "gift", StartsAt: &starts, EndsAt: &ends,
		Discount: &campaignsctx.DiscountInput{GiftSKU: opt.Of("G").Ptr()},
	})
	require.NoError(t, err)
	seg, err := a.Customers.CreateSegment(ctx, customersctx.SegmentInput{Name: opt.Of("VIP").Ptr()})
	require.NoError(t, err)
	st, err := a.Backoffice.CreateStore(ctx, tenantID, "L-1", "Loja 1")
	require.NoError(t, err)
	cl, err := a.Backoffice.CreateClient(ctx, tenantID, apiclient.KindOauth, "Integração", nil)
	require.NoError(t, err)
	// A webhook endpoint with one delivery of one event, attempted once.
	whk, err := a.Webhooks.CreateWebhookEndpoint(ctx, webhooks.WebhookInput{
		URL: opt.Of("https://hooks.example.com/fideliza").Ptr(), EventTypes: []string{"sale.processed"},
	})
	require.NoError(t, err)
	evt, err := a.DB.Ent.Event.Create().SetType("sale.processed").SetData(map[string]any{"sale_id": "sal_x"}).Save(ctx)
	require.NoError(t, err)
	dlv, err := a.DB.Ent.WebhookDelivery.Create().SetEndpointID(whk.Endpoint.ID).SetEventID(evt.ID).
		SetEventType(evt.Type).SetStatus(webhookdelivery.StatusFailed).SetAttempts(1).SetLastStatusCode(500).
		SetCompletedAt(time.Now().UTC()).Save(ctx)
	require.NoError(t, err)
	_, err = a.DB.Ent.WebhookAttempt.Create().SetDeliveryID(dlv.ID).SetStatusCode(500).SetLatencyMs(12).Save(ctx)
	require.NoError(t, err)
	return map[string]string{
		"whk_00000000000000000000000000": whk.Endpoint.ID,
		"dlv_00000000000000000000000000": dlv.ID,
		"cus_00000000000000000000000000": cust.ID,
		"cmp_00000000000000000000000000": camp.ID,
		"seg_00000000000000000000000000": seg.ID,
		"sto_00000000000000000000000000": st.ID,
		"cli_00000000000000000000000000": cl.Client.ID,
	}
}

// hasAnyCode says whether an error of a carries one of codes.
func hasAnyCode(a gqlAnswer, codes ...string) bool {
	for _, c := range a.codes() {
		if slices.Contains(codes, c) {
			return true
		}
	}
	return false
}

// requireNullField requires the root field name to be absent or null (a
// refused non-null root field nulls the whole data).
func requireNullField(t *testing.T, a gqlAnswer, name string) {
	t.Helper()
	var data map[string]json.RawMessage
	if len(a.Data) > 0 {
		require.NoError(t, json.Unmarshal(a.Data, &data), "%s", a.Raw)
	}
	if v, ok := data[name]; ok {
		require.Equal(t, "null", string(v), "%s", a.Raw)
	}
}

// tenantState renders every row of the tenant, read as the system: two
// equal states mean nothing of the tenant changed in between.
func tenantState(t testing.TB, db *storage.DB, tenantID string) string {
	t.Helper()
	ctx, c := sys(), db.Ent
	var state []any
	add := func(name string, rows any, err error) {
		t.Helper()
		require.NoError(t, err, name)
		state = append(state, name, rows)
	}
	tn, err := c.Tenant.Get(ctx, tenantID)
	add("tenant", tn, err)
	stores, err := c.Store.Query().Where(store.TenantID(tenantID)).Order(ent.Asc(store.FieldID)).All(ctx)
	add("stores", stores, err)
	clients, err := c.APIClient.Query().Where(apiclient.TenantID(tenantID)).Order(ent.Asc(apiclient.FieldID)).All(ctx)
	add("clients", clients, err)
	secrets := make([]string, len(clients)) // SecretHash is not marshaled
	for i, cl := range clients {
		secrets[i] = cl.SecretHash
	}
	add("secrets", secrets, nil)
	customers, err := c.Customer.Query().Where(customer.TenantID(tenantID)).Order(ent.Asc(customer.FieldID)).
		WithSegments(func(q *ent.SegmentQuery) { q.Order(ent.Asc(segment.FieldID)) }).All(ctx)
	add("customers", customers, err)
	segments, err := c.Segment.Query().Where(segment.TenantID(tenantID)).Order(ent.Asc(segment.FieldID)).All(ctx)
	add("segments", segments, err)
	campaigns, err := c.Campaign.Query().Where(campaign.TenantID(tenantID)).Order(ent.Asc(campaign.FieldID)).All(ctx)
	add("campaigns", campaigns, err)
	entries, err := c.PointsEntry.Query().Where(pointsentry.TenantID(tenantID)).Order(ent.Asc(pointsentry.FieldID)).All(ctx)
	add("points entries", entries, err)
	lots, err := c.PointsLot.Query().Where(pointslot.TenantID(tenantID)).Order(ent.Asc(pointslot.FieldID)).All(ctx)
	add("points lots", lots, err)
	redemptions, err := c.Redemption.Query().Where(redemption.TenantID(tenantID)).Order(ent.Asc(redemption.FieldID)).All(ctx)
	add("redemptions", redemptions, err)
	sales, err := c.Sale.Query().Where(sale.TenantID(tenantID)).Order(ent.Asc(sale.FieldID)).All(ctx)
	add("sales", sales, err)
	items, err := c.SaleItem.Query().Where(saleitem.TenantID(tenantID)).Order(ent.Asc(saleitem.FieldID)).All(ctx)
	add("sale items", items, err)
	payments, err := c.SalePayment.Query().Where(salepayment.TenantID(tenantID)).Order(ent.Asc(salepayment.FieldID)).All(ctx)
	add("sale payments", payments, err)
	events, err := c.Event.Query().Where(event.TenantID(tenantID)).Order(ent.Asc(event.FieldID)).All(ctx)
	add("events", events, err)
	tokens, err := c.ValidationToken.Query().Where(validationtoken.TenantID(tenantID)).Order(ent.Asc(validationtoken.FieldID)).All(ctx)
	add("validation tokens", tokens, err)
	endpoints, err := c.WebhookEndpoint.Query().Where(webhookendpoint.TenantID(tenantID)).Order(ent.Asc(webhookendpoint.FieldID)).All(ctx)
	add("webhook endpoints", endpoints, err)
	endpointSecrets := make([]string, len(endpoints)) // Secret is not marshaled
	for i, ep := range endpoints {
		endpointSecrets[i] = ep.Secret
	}
	add("webhook secrets", endpointSecrets, nil)
	deliveries, err := c.WebhookDelivery.Query().Where(webhookdelivery.TenantID(tenantID)).Order(ent.Asc(webhookdelivery.FieldID)).All(ctx)
	add("webhook deliveries", deliveries, err)
	attempts, err := c.WebhookAttempt.Query().Where(webhookattempt.TenantID(tenantID)).Order(ent.Asc(webhookattempt.FieldID)).All(ctx)
	add("webhook attempts", attempts, err)
	keys, err := c.IdempotencyKey.Query().Where(idempotencykey.TenantID(tenantID)).Order(ent.Asc(idempotencykey.FieldID)).All(ctx)
	add("idempotency keys", keys, err)
	out, err := json.MarshalIndent(state, "", " ")
	require.NoError(t, err)
	return string(out)
}

// TestGraphQLMutationAnswerEdges follows the edges of what each mutation
// answers, as a client refreshing its cache would: an answer's entity must
// be as readable as one fetched by a query, so every call here, valid as
// the admin's, answers without errors.
func TestGraphQLMutationAnswerEdges(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		admin := b.userToken(t, b.tenantID, viewer.RoleAdmin)
		targets := seedProbeTargets(t, b.app, b.tenantID)
		cus, seg := targets["cus_00000000000000000000000000"], targets["seg_00000000000000000000000000"]
		var cmp, token string // set by the calls that create them
		const (
			customerEdges = `id segments { totalCount } pointsEntries { totalCount } redemptions { totalCount } sales { totalCount }`
			campaignEdges = `id segment { id name } redemptions { totalCount } performance { redemptions }`
			segmentEdges  = `id customers { totalCount edges { node { id } } } campaigns { totalCount }`
		)
		calls := []struct {
			name, query string
			vars        func() map[string]any
			then        func(data map[string]any)
		}{
			{"createCustomer", `mutation { createCustomer(input: {name: "Caio", email: "caio@example.com", cpf: "39053344705"}) { ` + customerEdges + ` } }`, nil, nil},
			{"updateCustomer", `mutation($c: ID!) { updateCustomer(id: $c, input: {name: "Bia Souza"}) { ` + customerEdges + ` } }`,
				func() map[string]any { return map[string]any{"c": cus} }, nil},
			{"createSegment", `mutation { createSegment(input: {name: "Novo"}) { ` + segmentEdges + ` } }`, nil, nil},
			{"updateSegment", `mutation($s: ID!) { updateSegment(id: $s, input: {name: "VIP 2"}) { ` + segmentEdges + ` } }`,
				func() map[string]any { return map[string]any{"s": seg} }, nil},
			{"addSegmentCustomers", `mutation($s: ID!, $c: ID!) { addSegmentCustomers(segmentID: $s, customerIDs: [$c]) { ` + segmentEdges + ` } }`,
				func() map[string]any { return map[string]any{"s": seg, "c": cus} }, nil},
			{"removeSegmentCustomers", `mutation($s: ID!, $c: ID!) { removeSegmentCustomers(segmentID: $s, customerIDs: [$c]) { ` + segmentEdges + ` } }`,
				func() map[string]any { return map[string]any{"s": seg, "c": cus} }, nil},
			{"importSegmentCustomers", `mutation($s: ID!) { importSegmentCustomers(segmentID: $s, cpfs: ["11144477735"]) { added segment { ` + segmentEdges + ` } } }`,
				func() map[string]any { return map[string]any{"s": seg} }, nil},
			{"createCampaign", `mutation($s: ID!) { createCampaign(input: {name: "Brinde VIP", type: gift, giftSku: "G", segmentID: $s,
				startsAt: "2020-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { ` + campaignEdges + ` } }`,
				func() map[string]any { return map[string]any{"s": seg} },
				func(data map[string]any) { cmp = data["createCampaign"].(map[string]any)["id"].(string) }},
			{"pauseCampaign", `mutation($id: ID!) { pauseCampaign(id: $id) { ` + campaignEdges + ` } }`,
				func() map[string]any { return map[string]any{"id": cmp} }, nil},
			{"resumeCampaign", `mutation($id: ID!) { resumeCampaign(id: $id) { ` + campaignEdges + ` } }`,
				func() map[string]any { return map[string]any{"id": cmp} }, nil},
			{"validateCart", `mutation($c: ID!) { validateCart(input: {customerID: $c, items: [{sku: "A", quantity: "1", unitPrice: "100"}]}) {
				validationToken eligible { campaign { ` + campaignEdges + ` } } ineligible { campaign { id segment { id } } } } }`,
				func() map[string]any { return map[string]any{"c": cus} },
				func(data map[string]any) { token = data["validateCart"].(map[string]any)["validationToken"].(string) }},
			{"redeemCampaign", `mutation($cmp: ID!, $c: ID!, $t: String!) { redeemCampaign(input: {campaignID: $cmp, customerID: $c,
				orderID: "o-edges", validationToken: $t, amountPaid: "100"}) { id campaign { id } customer { id } sale { id } } }`,
				func() map[string]any { return map[string]any{"cmp": cmp, "c": cus, "t": token} }, nil},
			{"creditPoints", `mutation($c: ID!) { creditPoints(input: {customerID: $c, orderID: "o-edges", points: 20}) { entry { id customer { ` + customerEdges + ` } } } }`,
				func() map[string]any { return map[string]any{"c": cus} }, nil},
			{"debitPoints", `mutation($c: ID!) { debitPoints(input: {customerID: $c, points: 5}) { entry { id customer { ` + customerEdges + ` } } } }`,
				func() map[string]any { return map[string]any{"c": cus} }, nil},
			{"adjustPoints", `mutation($c: ID!) { adjustPoints(input: {customerID: $c, points: 5, reason: "cortesia"}) { entry { id customer { ` + customerEdges + ` } } } }`,
				func() map[string]any { return map[string]any{"c": cus} }, nil},
			{"updateTenantSettings", `mutation { updateTenantSettings(input: {name: "Loja Renomeada"}) { id name sandboxOf { id } sandboxes { id } } }`, nil, nil},
			{"endCampaign", `mutation($id: ID!) { endCampaign(id: $id) { ` + campaignEdges + ` } }`,
				func() map[string]any { return map[string]any{"id": cmp} }, nil},
		}
		for _, c := range calls {
			t.Run(c.name, func(t *testing.T) {
				var vars map[string]any
				if c.vars != nil {
					vars = c.vars()
				}
				a := b.gql(t, admin, c.query, vars)
				require.Emptyf(t, a.Errors, "the answer of %s cannot be read through its edges: %s", c.name, a.Raw)
				if c.then != nil {
					c.then(dataOf(t, a))
				}
			})
		}
	})
}
