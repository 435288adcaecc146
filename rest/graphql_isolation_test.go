package rest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	campaignsctx "github.com/fideliza/fideliza/app/campaigns"
	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
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
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// betaMark is in every string of tenant B's rows; "-" keeps it out of ids
// (lower-case ULIDs and UUIDs), so finding it in an answer is a leak.
const betaMark = "BETA-"

// soldAt is when both tenants' sales happened: the same day, so a per-day
// aggregate that forgot the tenant would add them up.
var soldAt = time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC)

// isolated is the data of one tenant of TestGraphQLTenantIsolation.
type isolated struct {
	tenantID   string
	stores     []*ent.Store
	customers  []*ent.Customer
	segment    *ent.Segment
	campaigns  []*ent.Campaign
	redemption *ent.Redemption
	sale       *ent.Sale
	client     *ent.APIClient
	cpfs       []string
	amount     decimal.Decimal // of the sale; the redemption paid amount-discount
	discount   decimal.Decimal
	nodeIDs    []string // every row the node resolver can fetch
	allIDs     []string // every row of the tenant
}

// seedIsolated gives tenantID two stores, three customers (the first in a
// segment that the first campaign targets), two campaigns, points, a sale
// with an item and a payment, a redemption of it, an event and an API
// client. Every string starts with tag; amounts are scaled by scale; the
// first earners customers earn points.
func seedIsolated(t *testing.T, a *app.App, tenantID, tag string, cpfs []string, scale int64, earners int) *isolated {
	t.Helper()
	ctx := viewer.TenantContext(sys(), tenantID)
	d := &isolated{tenantID: tenantID, cpfs: cpfs,
		amount: decimal.NewFromInt(100 * scale), discount: decimal.NewFromInt(10 * scale)}
	for i := 1; i <= 2; i++ {
		s, err := a.Backoffice.CreateStore(ctx, tenantID, fmt.Sprintf("%s%d", tag, i), fmt.Sprintf("%sLoja %d", tag, i))
		require.NoError(t, err)
		d.stores = append(d.stores, s)
	}
	for i, cpf := range cpfs {
		c, err := a.Customers.CreateCustomer(ctx, customersctx.CustomerInput{
			Name: opt.Of(fmt.Sprintf("%sCliente %d", tag, i+1)), Email: opt.Of(fmt.Sprintf("%s%d@example.com", tag, i+1)),
			CPF: opt.Of(cpf), ExternalID: opt.Of(fmt.Sprintf("%sext-%d", tag, i+1)),
		})
		require.NoError(t, err)
		d.customers = append(d.customers, c)
	}
	var err error
	d.segment, err = a.Customers.CreateSegment(ctx, customersctx.SegmentInput{Name: opt.Of(tag + "Segmento").Ptr(), Description: opt.Of(tag + "descrição").Ptr()})
	require.NoError(t, err)
	_, err = a.Customers.AddSegmentCustomers(ctx, d.segment.ID, []string{d.customers[0].ID})
	require.NoError(t, err)
	starts, ends := time.Now().Add(-time.Hour), time.Now().Add(30*24*time.Hour)
	ten := decimal.NewFromInt(10)
	for i, in := range []campaignsctx.CampaignInput{
		{Type: "discount", SegmentID: &d.segment.ID, Discount: &campaignsctx.DiscountInput{Mode: "percentage", Value: &ten}},
		{Type: "gift", Discount: &campaignsctx.DiscountInput{GiftSKU: opt.Of(tag + "brinde").Ptr()}},
	} {
		in.Name, in.Description = fmt.Sprintf("%sCampanha %d", tag, i+1), tag+"descrição"
		in.StartsAt, in.EndsAt = &starts, &ends
		c, err := a.Campaigns.CreateCampaign(ctx, in)
		require.NoError(t, err)
		d.campaigns = append(d.campaigns, c)
	}
	for i, c := range d.customers[:earners] {
		_, err := a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: fmt.Sprintf("%spedido-%d", tag, i+1),
			Points: opt.Of(int64(50 * scale * int64(i+1))).Ptr()})
		require.NoError(t, err)
	}
	c := a.DB.Ent
	d.sale, err = c.Sale.Create().SetStoreID(d.stores[0].ID).SetExternalID(tag + "1").SetPosID(tag + "pdv").
		SetChannel("pdv").SetCustomerDocument(cpfs[0]).SetCustomerID(d.customers[0].ID).SetSoldAt(soldAt).
		SetAmount(d.amount).SetAmountPayable(d.amount.Sub(d.discount)).SetDiscountAmount(d.discount).Save(ctx)
	require.NoError(t, err)
	_, err = c.SaleItem.Create().SetSaleID(d.sale.ID).SetLineID("1").SetGtin("7891000100103").
		SetDescription(tag + "item").SetUnitPrice(d.amount).SetQuantity(decimal.NewFromInt(1)).
		SetDiscountAmount(d.discount).Save(ctx)
	require.NoError(t, err)
	_, err = c.SalePayment.Create().SetSaleID(d.sale.ID).SetPaymentID(tag + "pagamento").
		SetAmount(d.amount.Sub(d.discount)).SetMethod("credit_card").SetNsu(tag + "nsu").Save(ctx)
	require.NoError(t, err)
	d.redemption, err = c.Redemption.Create().SetCampaignID(d.campaigns[0].ID).SetCustomerID(d.customers[0].ID).
		SetOrderID(tag + "pedido-1").SetSaleID(d.sale.ID).SetAmountPaid(d.amount.Sub(d.discount)).
		SetDiscountAmount(d.discount).SetCashbackAmount(decimal.Zero).
		SetBenefit([]byte(`{"type":"discount"}`)).Save(ctx)
	require.NoError(t, err)
	_, err = c.Event.Create().SetType("test.isolation").SetSubjectID(d.customers[0].ID).
		SetData(map[string]any{"label": tag + "evento", "customer_name": tag + "Cliente 1"}).Save(ctx)
	require.NoError(t, err)
	cl, err := a.Backoffice.CreateClient(ctx, tenantID, apiclient.KindOauth, tag+"Integração", nil)
	require.NoError(t, err)
	d.client = cl.Client
	d.collectIDs(t, a.DB)
	return d
}

// collectIDs reads back, as the system, the id of every row of the tenant,
// those the operations made on their own (events, lots) included.
func (d *isolated) collectIDs(t *testing.T, db *storage.DB) {
	t.Helper()
	ctx, c, tid := sys(), db.Ent, d.tenantID
	d.nodeIDs, d.allIDs = []string{tid}, []string{tid}
	add := func(node bool) func([]string, error) {
		return func(ids []string, err error) {
			t.Helper()
			require.NoError(t, err)
			d.allIDs = append(d.allIDs, ids...)
			if node {
				d.nodeIDs = append(d.nodeIDs, ids...)
			}
		}
	}
	add(true)(c.Store.Query().Where(store.TenantID(tid)).IDs(ctx))
	add(true)(c.APIClient.Query().Where(apiclient.TenantID(tid)).IDs(ctx))
	add(true)(c.Customer.Query().Where(customer.TenantID(tid)).IDs(ctx))
	add(true)(c.Segment.Query().Where(segment.TenantID(tid)).IDs(ctx))
	add(true)(c.Campaign.Query().Where(campaign.TenantID(tid)).IDs(ctx))
	add(true)(c.PointsEntry.Query().Where(pointsentry.TenantID(tid)).IDs(ctx))
	add(true)(c.Redemption.Query().Where(redemption.TenantID(tid)).IDs(ctx))
	add(true)(c.Sale.Query().Where(sale.TenantID(tid)).IDs(ctx))
	add(true)(c.SaleItem.Query().Where(saleitem.TenantID(tid)).IDs(ctx))
	add(true)(c.SalePayment.Query().Where(salepayment.TenantID(tid)).IDs(ctx))
	add(true)(c.Event.Query().Where(event.TenantID(tid)).IDs(ctx))
	add(false)(c.PointsLot.Query().Where(pointslot.TenantID(tid)).IDs(ctx))
	add(false)(c.ValidationToken.Query().Where(validationtoken.TenantID(tid)).IDs(ctx))
	add(false)(c.IdempotencyKey.Query().Where(idempotencykey.TenantID(tid)).IDs(ctx))
}

// TestGraphQLTenantIsolation gives two tenants the same shape of data and
// reads and writes as tenant A's back-office users: no answer may carry a
// row, an id or a figure of tenant B, and no write aimed at B's rows may
// change them.
func TestGraphQLTenantIsolation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		other, err := b.app.Backoffice.CreateTenant(sys(), betaMark+"Loja", nil)
		require.NoError(t, err)
		alfa := seedIsolated(t, b.app, b.tenantID, "ALFA-", []string{"52998224725", "11144477735", "39053344705"}, 1, 2)
		beta := seedIsolated(t, b.app, other.ID, betaMark, []string{"15350946056", "71428793860", "86288366757"}, 7, 3)
		betaBefore := tenantState(t, db, beta.tenantID)

		// noLeak fails when raw carries a string or an id of B; sent are
		// ids the request itself named, which an error may echo.
		noLeak := func(t *testing.T, raw []byte, sent ...string) {
			t.Helper()
			s := string(raw)
			require.NotContains(t, s, betaMark, "the answer carries tenant B's data")
			for _, id := range beta.allIDs {
				if !slices.Contains(sent, id) {
					require.NotContainsf(t, s, id, "the answer carries tenant B's id %s", id)
				}
			}
		}

		for _, role := range []viewer.Role{viewer.RoleAdmin, viewer.RoleAnalyst} {
			token := b.userToken(t, alfa.tenantID, role)
			t.Run(string(role), func(t *testing.T) {
				t.Run("connections", func(t *testing.T) {
					for _, c := range isolationConnections(alfa, beta) {
						t.Run(c.name, func(t *testing.T) {
							a := b.gql(t, token, c.query, nil)
							require.Empty(t, a.Errors, "%s", a.Raw)
							noLeak(t, a.Raw)
							conn := dataOf(t, a)[c.root].(map[string]any)
							require.EqualValues(t, c.want, conn["totalCount"], "%s", a.Raw)
							if edges, ok := conn["edges"].([]any); ok {
								require.Len(t, edges, c.want, "%s", a.Raw)
							}
						})
					}
				})

				var codes []string // of the refused lookups
				t.Run("node lookups", func(t *testing.T) {
					const q = `query($id: ID!) { node(id: $id) { id __typename } }`
					for _, id := range alfa.nodeIDs { // the control: A's own rows are found
						a := b.gql(t, token, q, map[string]any{"id": id})
						require.Empty(t, a.Errors, "%s: %s", id, a.Raw)
						require.Equal(t, id, dataOf(t, a)["node"].(map[string]any)["id"], "%s", a.Raw)
					}
					for _, id := range beta.nodeIDs {
						a := b.gql(t, token, q, map[string]any{"id": id})
						require.Nil(t, dataOf(t, a)["node"], "B's %s: %s", id, a.Raw)
						for _, code := range a.codes() {
							require.Equal(t, "not_found", strings.ToLower(code), "B's %s: %s", id, a.Raw)
						}
						codes = append(codes, a.codes()...)
						noLeak(t, a.Raw, id)
					}
					a := b.gql(t, token, `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`,
						map[string]any{"ids": beta.nodeIDs})
					for _, code := range a.codes() {
						require.Equal(t, "not_found", strings.ToLower(code), "%s", a.Raw)
					}
					codes = append(codes, a.codes()...)
					nodes, ok := dataOf(t, a)["nodes"].([]any)
					require.True(t, ok, "%s", a.Raw)
					require.Len(t, nodes, len(beta.nodeIDs))
					for i, n := range nodes {
						require.Nil(t, n, "B's %s: %s", beta.nodeIDs[i], a.Raw)
					}
					noLeak(t, a.Raw, beta.nodeIDs...)
				})
				t.Run("a node not found has the code not_found", func(t *testing.T) {
					// Not a leak, a convention: every other error's code is
					// lower-case (graph.presentError), so clients switch on
					// "not_found"; entgql's node resolvers answer NOT_FOUND.
					for _, code := range codes {
						require.Equal(t, "not_found", code,
							"node/nodes answer entgql's code NOT_FOUND, which presentError (graph/scopes.go) passes through unchanged")
					}
				})

				t.Run("aggregates", func(t *testing.T) {
					isolationAggregates(t, b, db, token, alfa, noLeak)
				})
			})
		}

		t.Run("writes aimed at B", func(t *testing.T) {
			admin := b.userToken(t, alfa.tenantID, viewer.RoleAdmin)
			// A real validation of A's customer, to redeem B's campaign with.
			v := b.gql(t, admin, `mutation($c: ID!) { validateCart(input: {customerID: $c, items: [{sku: "A", quantity: "1", unitPrice: "100"}]}) { validationToken } }`,
				map[string]any{"c": alfa.customers[0].ID})
			require.Empty(t, v.Errors, "%s", v.Raw)
			validation := dataOf(t, v)["validateCart"].(map[string]any)["validationToken"].(string)
			alfaBefore := tenantState(t, db, alfa.tenantID)
			notFound := []string{"not_found", "forbidden"}
			refused := []string{"not_found", "forbidden", "validation_error"}
			// B's campaign was never in A's validation, which says so.
			notRedeemable := append(slices.Clone(refused), "campaign_not_eligible")
			for _, w := range []struct {
				name, query string
				vars        map[string]any
				codes       []string
			}{
				{"updateStore", `mutation($id: ID!) { updateStore(id: $id, input: {name: "ALFA-invadida"}) { id name } }`,
					map[string]any{"id": beta.stores[0].ID}, notFound},
				{"updateSegment", `mutation($id: ID!) { updateSegment(id: $id, input: {name: "ALFA-invadido"}) { id name } }`,
					map[string]any{"id": beta.segment.ID}, notFound},
				{"addSegmentCustomers of B's customer to A's segment", `mutation($s: ID!, $c: ID!) { addSegmentCustomers(segmentID: $s, customerIDs: [$c]) { id customers { totalCount } } }`,
					map[string]any{"s": alfa.segment.ID, "c": beta.customers[1].ID}, notFound},
				{"addSegmentCustomers of A's customer to B's segment", `mutation($s: ID!, $c: ID!) { addSegmentCustomers(segmentID: $s, customerIDs: [$c]) { id customers { totalCount } } }`,
					map[string]any{"s": beta.segment.ID, "c": alfa.customers[1].ID}, notFound},
				{"removeSegmentCustomers of B's segment", `mutation($s: ID!, $c: ID!) { removeSegmentCustomers(segmentID: $s, customerIDs: [$c]) { id } }`,
					map[string]any{"s": beta.segment.ID, "c": beta.customers[0].ID}, notFound},
				{"importSegmentCustomers into B's segment", `mutation($s: ID!, $cpf: String!) { importSegmentCustomers(segmentID: $s, cpfs: [$cpf]) { added } }`,
					map[string]any{"s": beta.segment.ID, "cpf": beta.cpfs[1]}, notFound},
				{"rotateAPIClientSecret", `mutation($id: ID!) { rotateAPIClientSecret(id: $id) { clientSecret client { id name } } }`,
					map[string]any{"id": beta.client.ID}, notFound},
				{"revokeAPIClient", `mutation($id: ID!) { revokeAPIClient(id: $id) { id revoked } }`,
					map[string]any{"id": beta.client.ID}, notFound},
				{"pauseCampaign", `mutation($id: ID!) { pauseCampaign(id: $id) { id status } }`,
					map[string]any{"id": beta.campaigns[0].ID}, notFound},
				{"resumeCampaign", `mutation($id: ID!) { resumeCampaign(id: $id) { id status } }`,
					map[string]any{"id": beta.campaigns[0].ID}, notFound},
				{"endCampaign", `mutation($id: ID!) { endCampaign(id: $id) { id status } }`,
					map[string]any{"id": beta.campaigns[1].ID}, notFound},
				{"updateCustomer", `mutation($id: ID!) { updateCustomer(id: $id, input: {name: "ALFA-invadido"}) { id name } }`,
					map[string]any{"id": beta.customers[0].ID}, notFound},
				{"creditPoints", `mutation($c: ID!) { creditPoints(input: {customerID: $c, orderID: "ALFA-invasao", points: 5}) { replayed } }`,
					map[string]any{"c": beta.customers[0].ID}, notFound},
				{"debitPoints", `mutation($c: ID!) { debitPoints(input: {customerID: $c, points: 5}) { replayed } }`,
					map[string]any{"c": beta.customers[0].ID}, notFound},
				{"adjustPoints", `mutation($c: ID!) { adjustPoints(input: {customerID: $c, points: -5, reason: "invasão"}) { replayed } }`,
					map[string]any{"c": beta.customers[0].ID}, notFound},
				{"validateCart", `mutation($c: ID!) { validateCart(input: {customerID: $c, items: [{sku: "A", quantity: "1", unitPrice: "10"}]}) { validationToken } }`,
					map[string]any{"c": beta.customers[0].ID}, notFound},
				{"createCampaign on B's segment", `mutation($s: ID!) { createCampaign(input: {name: "ALFA-alvo", type: gift, giftSku: "G", segmentID: $s, startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id segment { id name } } }`,
					map[string]any{"s": beta.segment.ID}, refused},
				{"redeemCampaign of B's campaign", `mutation($cmp: ID!, $c: ID!, $v: String!) { redeemCampaign(input: {campaignID: $cmp, customerID: $c, orderID: "ALFA-invasao", validationToken: $v, amountPaid: "100"}) { id } }`,
					map[string]any{"cmp": beta.campaigns[1].ID, "c": alfa.customers[0].ID, "v": validation}, notRedeemable},
				{"redeemCampaign for B's customer", `mutation($cmp: ID!, $c: ID!, $v: String!) { redeemCampaign(input: {campaignID: $cmp, customerID: $c, orderID: "ALFA-invasao", validationToken: $v, amountPaid: "100"}) { id } }`,
					map[string]any{"cmp": alfa.campaigns[1].ID, "c": beta.customers[0].ID, "v": validation}, notRedeemable},
			} {
				t.Run(w.name, func(t *testing.T) {
					a := b.gql(t, admin, w.query, w.vars)
					require.NotEmpty(t, a.Errors, "%s", a.Raw)
					t.Logf("answered %v", a.codes())
					for _, code := range a.codes() {
						require.Contains(t, w.codes, code, "%s", a.Raw)
					}
					var sent []string
					for _, v := range w.vars {
						sent = append(sent, fmt.Sprint(v))
					}
					noLeak(t, a.Raw, sent...)
					require.Equal(t, betaBefore, tenantState(t, db, beta.tenantID), "tenant B changed")
					require.Equal(t, alfaBefore, tenantState(t, db, alfa.tenantID), "tenant A changed")
				})
			}

			t.Run("importSegmentCustomers of B's CPFs into A's segment", func(t *testing.T) {
				// The segment's customers are read apart: the answer's segment
				// cannot reach its edges (TestGraphQLMutationAnswerEdges).
				a := b.gql(t, admin, `mutation($s: ID!, $cpfs: [String!]!) { importSegmentCustomers(segmentID: $s, cpfs: $cpfs) {
					added alreadyMembers notFound invalid segment { id name } } }`,
					map[string]any{"s": alfa.segment.ID, "cpfs": beta.cpfs})
				require.Empty(t, a.Errors, "%s", a.Raw)
				noLeak(t, a.Raw)
				imp := dataOf(t, a)["importSegmentCustomers"].(map[string]any)
				require.EqualValues(t, 0, imp["added"], "%s", a.Raw)
				require.ElementsMatch(t, beta.cpfs, imp["notFound"], "B's customers are not found from A")
				a = b.gql(t, admin, `query($s: ID!) { node(id: $s) { ... on Segment { customers { totalCount edges { node { id name } } } } } }`,
					map[string]any{"s": alfa.segment.ID})
				require.Empty(t, a.Errors, "%s", a.Raw)
				noLeak(t, a.Raw)
				members := dataOf(t, a)["node"].(map[string]any)["customers"].(map[string]any)
				require.EqualValues(t, 1, members["totalCount"], "%s", a.Raw)
				require.Equal(t, alfa.customers[0].ID, members["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["id"])
				require.Equal(t, betaBefore, tenantState(t, db, beta.tenantID), "tenant B changed")
			})
		})
	})
}

// connectionCase is a root connection read by tenant A, which must list
// want rows, all A's.
type connectionCase struct {
	name, root, query string
	want              int
}

// isolationConnections reads every root connection with its edges.
func isolationConnections(alfa, beta *isolated) []connectionCase {
	prefixed := func(prefix string) (n int) {
		for _, id := range alfa.nodeIDs {
			if strings.HasPrefix(id, prefix) {
				n++
			}
		}
		return n
	}
	const customer = `id name email externalID pointsBalance`
	return []connectionCase{
		{"tenants", "tenants", `{ tenants(first: 100) { totalCount edges { node { id name sandboxOf { id name } sandboxes { id name } } } } }`, 1},
		{"stores", "stores", `{ stores(first: 100) { totalCount edges { node { id tenantID code name } } } }`, 2},
		{"apiClients", "apiClients", `{ apiClients(first: 100) { totalCount edges { node { id tenantID name kind scopes revoked } } } }`, 1},
		{"customers → pointsEntries", "customers", `{ customers(first: 100) { totalCount edges { node { ` + customer + `
			pointsEntries(first: 2) { totalCount edges { node { id sourceID reason points customer { id name } } } } } } } }`, 3},
		{"customers → redemptions", "customers", `{ customers(first: 100) { totalCount edges { node { ` + customer + `
			redemptions(first: 2) { totalCount edges { node { id orderID campaign { id name } sale { id externalID } } } } } } } }`, 3},
		{"customers → sales", "customers", `{ customers(first: 100) { totalCount edges { node { ` + customer + `
			sales(first: 2) { totalCount edges { node { id externalID posID store { id code name } } } } } } } }`, 3},
		{"customers → segments", "customers", `{ customers(first: 100) { totalCount edges { node { ` + customer + `
			segments(first: 2) { totalCount edges { node { id name description } } } } } } }`, 3},
		{"customers where tenantID is B's", "customers", `{ customers(first: 100, where: {tenantID: "` + beta.tenantID + `"}) { totalCount edges { node { id } } } }`, 0},
		{"customerSearch", "customerSearch", `{ customerSearch(first: 100) { totalCount edges { node { ` + customer + `
			segments(first: 2) { edges { node { id name } } } } } } }`, 3},
		{"customerSearch for BETA", "customerSearch", `{ customerSearch(search: "BETA", first: 100) { totalCount edges { node { id name } } } }`, 0},
		{"customerSearch for B's CPF", "customerSearch", `{ customerSearch(search: "` + beta.cpfs[0] + `", first: 100) { totalCount edges { node { id name } } } }`, 0},
		{"customerSearch for A's external id", "customerSearch", `{ customerSearch(search: "ALFA-ext-1", first: 100) { totalCount edges { node { id name externalID } } } }`, 1},
		{"customerSearch for B's external id", "customerSearch", `{ customerSearch(search: "BETA-ext-1", first: 100) { totalCount edges { node { id name externalID } } } }`, 0},
		{"segments", "segments", `{ segments(first: 100) { totalCount edges { node { id name description
			customers(first: 2) { totalCount edges { node { id name } } } campaigns(first: 2) { totalCount edges { node { id name } } } } } } }`, 1},
		{"campaigns", "campaigns", `{ campaigns(first: 100) { totalCount edges { node { id name description giftSku segmentID segment { id name }
			redemptions(first: 2) { totalCount edges { node { id orderID customer { id name } sale { id externalID } } } } } } } }`, 2},
		{"campaigns where segment is B's", "campaigns", `{ campaigns(first: 100, where: {hasSegmentWith: {id: "` + beta.segment.ID + `"}}) { totalCount edges { node { id } } } }`, 0},
		{"redemptions", "redemptions", `{ redemptions(first: 100) { totalCount edges { node { id orderID saleID campaignID customerID
			campaign { id name } customer { id name } sale { id externalID } } } } }`, 1},
		{"pointsEntries", "pointsEntries", `{ pointsEntries(first: 100) { totalCount edges { node { id sourceID reason customerID customer { id name } } } } }`, prefixed("ptx_")},
		{"sales", "sales", `{ sales(first: 100) { totalCount edges { node { id externalID posID customerDocumentMasked storeID customerID
			store { id code name } customer { id name } items(first: 2) { totalCount edges { node { id description sale { id } } } }
			payments { id paymentID nsu sale { id } } } } } }`, 1},
		{"events", "events", `{ events(first: 100) { totalCount edges { node { id type subjectID data } } } }`, prefixed("evt_")},
	}
}

// isolationAggregates checks that every aggregate A reads sums A's rows.
func isolationAggregates(t *testing.T, b *backOffice, db *storage.DB, token string, alfa *isolated, noLeak func(*testing.T, []byte, ...string)) {
	custs, err := db.Ent.Customer.Query().Where(customer.TenantID(alfa.tenantID)).All(sys())
	require.NoError(t, err)
	byLevel, balance := map[string]int{}, int64(0)
	for _, c := range custs {
		byLevel[string(c.Level)]++
		balance += c.PointsBalance
	}
	query := func(t *testing.T, q string) map[string]any {
		t.Helper()
		a := b.gql(t, token, q, nil)
		require.Empty(t, a.Errors, "%s", a.Raw)
		noLeak(t, a.Raw)
		return dataOf(t, a)
	}

	t.Run("customersByLevel", func(t *testing.T) {
		levels := query(t, `{ customersByLevel { level customers } }`)["customersByLevel"].([]any)
		sum := 0
		for _, l := range levels {
			l := l.(map[string]any)
			require.EqualValues(t, byLevel[l["level"].(string)], l["customers"], "level %s", l["level"])
			sum += int(l["customers"].(float64))
		}
		require.Equal(t, 3, sum)
	})
	t.Run("activeCustomers", func(t *testing.T) {
		got := query(t, `{ activeCustomers(from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z") }`)
		require.EqualValues(t, 2, got["activeCustomers"], "A's two earners; B's three are not A's")
	})
	t.Run("pointsLiability", func(t *testing.T) {
		l := query(t, `{ pointsLiability { total byLevel { level customers points } byExpiryMonth { month points } } }`)["pointsLiability"].(map[string]any)
		require.EqualValues(t, 150, balance)
		require.EqualValues(t, balance, l["total"])
		var customers, byLevelPoints, byMonth float64
		for _, x := range l["byLevel"].([]any) {
			customers += x.(map[string]any)["customers"].(float64)
			byLevelPoints += x.(map[string]any)["points"].(float64)
		}
		for _, x := range l["byExpiryMonth"].([]any) {
			byMonth += x.(map[string]any)["points"].(float64)
		}
		require.LessOrEqual(t, customers, 3.0)
		require.EqualValues(t, balance, byLevelPoints)
		require.EqualValues(t, balance, byMonth)
	})
	t.Run("salesByStoreDay", func(t *testing.T) {
		days := query(t, `{ salesByStoreDay(from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z") {
			store { id code name } day sales amount discountAmount amountPayable } }`)["salesByStoreDay"].([]any)
		require.Len(t, days, 1, "only A's store's day")
		d := days[0].(map[string]any)
		require.Equal(t, alfa.stores[0].ID, d["store"].(map[string]any)["id"])
		require.Equal(t, "2026-03-10", d["day"])
		require.EqualValues(t, 1, d["sales"])
		requireDecimal(t, alfa.amount, d["amount"])
		requireDecimal(t, alfa.discount, d["discountAmount"])
		requireDecimal(t, alfa.amount.Sub(alfa.discount), d["amountPayable"])
	})
	t.Run("campaign performance", func(t *testing.T) {
		conn := query(t, `{ campaigns(first: 100) { edges { node { id performance { redemptions discountGiven cashbackPromised revenue } } } } }`)["campaigns"].(map[string]any)
		perf := map[string]map[string]any{}
		for _, e := range conn["edges"].([]any) {
			n := e.(map[string]any)["node"].(map[string]any)
			perf[n["id"].(string)] = n["performance"].(map[string]any)
		}
		require.Len(t, perf, 2)
		p := perf[alfa.campaigns[0].ID]
		require.EqualValues(t, 1, p["redemptions"])
		requireDecimal(t, alfa.discount, p["discountGiven"])
		requireDecimal(t, alfa.amount.Sub(alfa.discount), p["revenue"])
		require.EqualValues(t, 0, perf[alfa.campaigns[1].ID]["redemptions"])
	})
}

// dataOf decodes the data of an answer.
func dataOf(t *testing.T, a gqlAnswer) map[string]any {
	t.Helper()
	var m map[string]any
	if len(a.Data) > 0 {
		require.NoError(t, json.Unmarshal(a.Data, &m), "%s", a.Raw)
	}
	return m
}

// requireDecimal compares a Decimal scalar's value, whatever its scale.
func requireDecimal(t *testing.T, want decimal.Decimal, got any) {
	t.Helper()
	s, ok := got.(string)
	require.Truef(t, ok, "decimal %v is not a string", got)
	d, err := decimal.NewFromString(s)
	require.NoError(t, err)
	require.Truef(t, want.Equal(d), "want %s, got %s", want, s)
}
