package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// prodMark is in every string of the production tenant's rows but its own
// name (which a sandbox's default name repeats); "-" keeps it out of ids.
const prodMark = "PROD-"

// prodCPFs are the production customers' CPFs: valid, and none of the demo
// data's, so finding one in a sandbox's answer is a leak.
var prodCPFs = []string{"12345678909", "98765432100", "24681357928"}

// sandboxCase is a production tenant with data in every resource, one of its
// sandboxes with the demo data, and the sandbox's credentials.
type sandboxCase struct {
	b        *backOffice
	db       *storage.DB
	prod     *isolated
	webhooks []string // the production webhook endpoint, delivery and attempt
	sandbox  string
	// sandboxIDs are rows of the sandbox: its demo data, and a webhook
	// endpoint with a delivery.
	sandboxIDs []string
	// token is a sandbox OAuth client's, with every scope; user is a
	// sandbox admin's back-office token, for the back-office root fields.
	token, user     string
	posID, posToken string // the sandbox POS client's HTTP Basic credentials
}

// TestSandboxCredentialsNeverReachProduction: a sandbox's OAuth token, POS
// credentials and users are answered 401, 403 or 404 on every production
// resource, REST and GraphQL, with no production id, name or CPF in any
// answer; and they do reach the sandbox's own demo data.
func TestSandboxCredentialsNeverReachProduction(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newSandboxCase(t, db)
		prodBefore := tenantState(t, db, s.prod.tenantID)
		webhooksBefore := s.webhookState(t)

		t.Run("the sandbox reaches its own data", s.testSandboxOwnData)
		t.Run("GraphQL", s.testGraphQL)
		t.Run("POS", s.testPOS)
		t.Run("REST", s.testREST) // last: it creates rows in the sandbox

		require.Equal(t, prodBefore, tenantState(t, db, s.prod.tenantID), "the production tenant changed")
		require.Equal(t, webhooksBefore, s.webhookState(t), "the production webhooks changed")
	})
}

func newSandboxCase(t *testing.T, db *storage.DB) *sandboxCase {
	t.Helper()
	// Every route is called with credentials that fail, more times than
	// the quota of failed authentications (tested on its own) allows.
	b := newBackOffice(t, db, func(s *rest.ServerSetup) { s.RateLimits = ratelimit.Unlimited() })
	s := &sandboxCase{b: b, db: db}
	s.prod = seedIsolated(t, b.app, b.tenantID, prodMark, prodCPFs, 1, 2)
	s.seedWebhooks(t)
	s.seedHold(t)

	adminCtx := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: s.prod.tenantID,
		Subject: "user:t", Scopes: auth.RoleScopes(viewer.RoleAdmin)})
	sb, err := b.app.Backoffice.CreateSandbox(adminCtx, "")
	require.NoError(t, err)
	require.NotEqual(t, s.prod.tenantID, sb.ID)
	s.sandbox = sb.ID
	oauth, err := b.app.Backoffice.CreateSandboxClient(adminCtx, sb.ID, apiclient.KindOauth, "sandbox oauth")
	require.NoError(t, err)
	require.Equal(t, sb.ID, oauth.Client.TenantID)
	require.ElementsMatch(t, auth.Scopes, oauth.Client.Scopes)
	s.token = b.token(t, oauth, "")
	pos, err := b.app.Backoffice.CreateSandboxClient(adminCtx, sb.ID, apiclient.KindPos, "sandbox pos")
	require.NoError(t, err)
	require.Equal(t, sb.ID, pos.Client.TenantID)
	s.posID, s.posToken = pos.Client.ID, pos.Secret
	s.user = b.userToken(t, sb.ID, viewer.RoleAdmin)
	s.seedSandbox(t)
	return s
}

// seedSandbox gives the sandbox a webhook endpoint and a delivery of an
// event, and collects the sandbox's ids.
func (s *sandboxCase) seedSandbox(t *testing.T) {
	t.Helper()
	ctx, c := viewer.TenantContext(sys(), s.sandbox), s.db.Ent
	ev, err := c.Event.Create().SetType("sale.processed").SetData(map[string]any{"sandbox": true}).Save(ctx)
	require.NoError(t, err)
	ep, err := c.WebhookEndpoint.Create().SetURL("https://hooks.example.com/sandbox").
		SetEventTypes([]string{ev.Type}).SetSecret("whsec_sandbox").Save(ctx)
	require.NoError(t, err)
	dl, err := c.WebhookDelivery.Create().SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type).Save(ctx)
	require.NoError(t, err)
	s.sandboxIDs = append(s.sandboxCustomers(t), ev.ID, ep.ID, dl.ID)
	for _, q := range []func() ([]string, error){
		func() ([]string, error) { return c.Campaign.Query().IDs(ctx) },
		func() ([]string, error) { return c.Store.Query().IDs(ctx) },
		func() ([]string, error) { return c.Segment.Query().IDs(ctx) },
	} {
		ids, err := q()
		require.NoError(t, err)
		require.NotEmpty(t, ids)
		s.sandboxIDs = append(s.sandboxIDs, ids...)
	}
}

// seedWebhooks gives the production tenant a webhook endpoint, a delivery of
// one of its events and an attempt of it.
func (s *sandboxCase) seedWebhooks(t *testing.T) {
	t.Helper()
	ctx, c := viewer.TenantContext(sys(), s.prod.tenantID), s.db.Ent
	ev, err := c.Event.Query().Where(event.TenantID(s.prod.tenantID)).First(ctx)
	require.NoError(t, err)
	ep, err := c.WebhookEndpoint.Create().SetURL("https://hooks.example.com/" + prodMark + "hook").
		SetEventTypes([]string{ev.Type}).SetSecret("whsec_" + prodMark + "secret").
		SetDescription(prodMark + "webhook").Save(ctx)
	require.NoError(t, err)
	dl, err := c.WebhookDelivery.Create().SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type).
		SetLastError(prodMark + "erro").Save(ctx)
	require.NoError(t, err)
	at, err := c.WebhookAttempt.Create().SetDeliveryID(dl.ID).SetStatusCode(500).
		SetResponseExcerpt(prodMark + "resposta").SetError(prodMark + "falha").Save(ctx)
	require.NoError(t, err)
	s.webhooks = []string{ep.ID, dl.ID, at.ID}
	for _, id := range s.webhooks {
		if !slices.Contains(s.prod.allIDs, id) { // seedIsolated may collect them one day
			s.prod.allIDs = append(s.prod.allIDs, id)
			s.prod.nodeIDs = append(s.prod.nodeIDs, id)
		}
	}
}

// seedHold gives the production tenant an online order's open points hold
// and cashback hold, and a gift card.
func (s *sandboxCase) seedHold(t *testing.T) {
	t.Helper()
	ctx := viewer.TenantContext(sys(), s.prod.tenantID)
	h, err := s.db.Ent.PointsHold.Create().SetCustomerID(s.prod.customers[0].ID).SetChannel(pointshold.ChannelEcommerce).
		SetSession("ecommerce:" + prodMark + "pedido").SetPoints(100).SetAmount(decimal.NewFromInt(1)).
		SetExpiresAt(time.Now().Add(time.Hour)).Save(ctx)
	require.NoError(t, err)
	w, err := s.db.Ent.WalletHold.Create().SetCustomerID(s.prod.customers[0].ID).SetWallet(wallethold.WalletCashback).
		SetChannel(wallethold.ChannelEcommerce).SetSession("ecommerce:cashback:" + prodMark + "pedido").SetCents(100).
		SetExpiresAt(time.Now().Add(time.Hour)).Save(ctx)
	require.NoError(t, err)
	s.prod.allIDs = append(s.prod.allIDs, h.ID, w.ID)
	g, err := s.db.Ent.GiftCard.Create().SetCodeHash(giftcard.HashCode(prodGiftCardCode)).SetCodeLast4(giftcard.Last4(prodGiftCardCode)).
		SetStatus(entgiftcard.StatusActive).SetInitialCents(5000).SetBalanceCents(5000).SetExpiresAt(time.Now().AddDate(1, 0, 0)).
		SetNote(prodMark).Save(ctx)
	require.NoError(t, err)
	s.prod.allIDs = append(s.prod.allIDs, g.ID)
	s.prod.nodeIDs = append(s.prod.nodeIDs, g.ID)
}

// prodGiftCardCode is the code of the production tenant's gift card.
const prodGiftCardCode = "7K3MQ0A1B2C3D4E5F6G9"

// webhookState reads the production tenant's webhook rows, as the system.
func (s *sandboxCase) webhookState(t *testing.T) string {
	t.Helper()
	ctx, c, tid := sys(), s.db.Ent, s.prod.tenantID
	eps, err := c.WebhookEndpoint.Query().Where(webhookendpoint.TenantID(tid)).All(ctx)
	require.NoError(t, err)
	dls, err := c.WebhookDelivery.Query().Where(webhookdelivery.TenantID(tid)).All(ctx)
	require.NoError(t, err)
	ats, err := c.WebhookAttempt.Query().Where(webhookattempt.TenantID(tid)).All(ctx)
	require.NoError(t, err)
	secrets := make([]string, len(eps)) // not marshaled
	for i, ep := range eps {
		secrets[i] = ep.Secret
		if ep.PreviousSecret != nil {
			secrets[i] += " " + *ep.PreviousSecret
		}
	}
	raw, err := json.Marshal([]any{eps, secrets, dls, ats})
	require.NoError(t, err)
	return string(raw)
}

// noLeak fails when raw carries a production string, id or CPF; sent are
// values the request itself named, which an answer may echo.
func (s *sandboxCase) noLeak(t *testing.T, raw []byte, sent ...string) {
	t.Helper()
	body := string(raw)
	require.NotContains(t, body, prodMark, "the answer carries production data")
	for _, id := range s.prod.allIDs {
		if !slices.Contains(sent, id) {
			require.NotContainsf(t, body, id, "the answer carries the production id %s", id)
		}
	}
	for _, cpf := range prodCPFs {
		if !slices.Contains(sent, cpf) {
			require.NotContainsf(t, body, cpf, "the answer carries a production CPF")
			require.NotContainsf(t, body, cpf[:3]+"."+cpf[3:6]+"."+cpf[6:9]+"-"+cpf[9:], "the answer carries a production CPF")
		}
	}
}

// sandboxCustomers lists the sandbox's customers, as the system.
func (s *sandboxCase) sandboxCustomers(t *testing.T) []string {
	t.Helper()
	ids, err := s.db.Ent.Customer.Query().Where(customer.TenantID(s.sandbox)).IDs(sys())
	require.NoError(t, err)
	require.NotEmpty(t, ids, "the sandbox has no demo customers")
	return ids
}

// sandboxPoints sums the points balances of the sandbox's customers, as
// the system.
func (s *sandboxCase) sandboxPoints(t *testing.T) int64 {
	t.Helper()
	cs, err := s.db.Ent.Customer.Query().Where(customer.TenantID(s.sandbox)).All(sys())
	require.NoError(t, err)
	var total int64
	for _, c := range cs {
		total += c.PointsBalance
	}
	return total
}

// sandboxActive counts the sandbox's customers with a sale, a redemption or
// points earned or spent, ever, as the system.
func (s *sandboxCase) sandboxActive(t *testing.T) int {
	t.Helper()
	n, err := s.db.Ent.Customer.Query().Where(customer.TenantID(s.sandbox), customer.Or(
		customer.HasSales(), customer.HasRedemptions(),
		customer.HasPointsEntriesWith(pointsentry.KindIn(pointsentry.KindCredit, pointsentry.KindBonus, pointsentry.KindDebit)),
	)).Count(sys())
	require.NoError(t, err)
	return n
}

// sandboxStores lists the sandbox's stores, as the system.
func (s *sandboxCase) sandboxStores(t *testing.T) []any {
	t.Helper()
	ids, err := s.db.Ent.Store.Query().Where(store.TenantID(s.sandbox)).IDs(sys())
	require.NoError(t, err)
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// testSandboxOwnData is the control: the credentials work on the sandbox.
func (s *sandboxCase) testSandboxOwnData(t *testing.T) {
	own := s.sandboxCustomers(t)
	t.Run("REST", func(t *testing.T) {
		res := s.bearer(t, http.MethodGet, "/v1/customers", nil)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		var list struct{ Data []struct{ ID string } }
		require.NoError(t, json.Unmarshal(res.body, &list), "%s", res.body)
		require.NotEmpty(t, list.Data, "the sandbox token sees no demo customer: %s", res.body)
		for _, c := range list.Data {
			require.Contains(t, own, c.ID)
		}
		res = s.bearer(t, http.MethodGet, "/v1/customers/"+own[0], nil)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		s.noLeak(t, res.body)
	})
	t.Run("POS", func(t *testing.T) {
		res := s.pos(t, http.MethodPost, "/api/v1/tenants/"+s.sandbox+"/customers/identify", map[string]any{
			"sessionId": "sandbox-session", "protocol": "PARTNER",
			"customer": map[string]any{"id": "52998224725", "type": "CPF"}, // a demo customer
			"store":    map[string]any{"id": "LOJA-01", "posId": "PDV-01"},
		})
		require.Equal(t, http.StatusOK, res.status, "the sandbox POS client cannot identify in its sandbox: %s", res.body)
		s.noLeak(t, res.body)
	})
	t.Run("GraphQL", func(t *testing.T) {
		for name, token := range map[string]string{"client": s.token, "user": s.user} {
			a := s.b.gql(t, token, `{ customers(first: 100) { totalCount edges { node { id name } } } }`, nil)
			require.Empty(t, a.Errors, "%s: %s", name, a.Raw)
			conn := dataOf(t, a)["customers"].(map[string]any)
			require.EqualValues(t, len(own), conn["totalCount"], "%s: %s", name, a.Raw)
			edges := conn["edges"].([]any)
			require.Len(t, edges, min(len(own), 100), "%s: %s", name, a.Raw)
			for _, e := range edges {
				require.Contains(t, own, e.(map[string]any)["node"].(map[string]any)["id"])
			}
			a = s.b.gql(t, token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": own[0]})
			require.Empty(t, a.Errors, "%s: %s", name, a.Raw)
			require.Equal(t, own[0], dataOf(t, a)["node"].(map[string]any)["id"], "%s: %s", name, a.Raw)
		}
	})
}
