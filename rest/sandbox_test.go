package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
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

	adminCtx := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: s.prod.tenantID,
		Subject: "user:t", Scopes: auth.RoleScopes(viewer.RoleAdmin)})
	sb, err := b.app.CreateSandbox(adminCtx, "")
	require.NoError(t, err)
	require.NotEqual(t, s.prod.tenantID, sb.ID)
	s.sandbox = sb.ID
	oauth, err := b.app.CreateSandboxClient(adminCtx, sb.ID, apiclient.KindOauth, "sandbox oauth")
	require.NoError(t, err)
	require.Equal(t, sb.ID, oauth.Client.TenantID)
	require.ElementsMatch(t, auth.Scopes, oauth.Client.Scopes)
	s.token = b.token(t, oauth, "")
	pos, err := b.app.CreateSandboxClient(adminCtx, sb.ID, apiclient.KindPos, "sandbox pos")
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

// bearer sends a request with the sandbox OAuth token; body, when not nil,
// is sent as JSON.
func (s *sandboxCase) bearer(t *testing.T, method, path string, body any) response {
	t.Helper()
	req := s.request(t, method, path, body)
	req.Header.Set("Authorization", "Bearer "+s.token)
	return do(t, http.DefaultClient, req)
}

// pos sends a request with the sandbox POS client's HTTP Basic credentials.
func (s *sandboxCase) pos(t *testing.T, method, path string, body any) response {
	t.Helper()
	req := s.request(t, method, path, body)
	req.SetBasicAuth(s.posID, s.posToken)
	return do(t, http.DefaultClient, req)
}

func (s *sandboxCase) request(t *testing.T, method, path string, body any) *http.Request {
	t.Helper()
	var r *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	} else {
		r = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, s.b.srv.URL+path, r)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// sandboxRouteParam matches a path parameter of a route pattern.
var sandboxRouteParam = regexp.MustCompile(`\{([^}]+)\}`)

// sandboxIDKinds maps a collection of a path, or a parameter's name, to the id
// prefixes of its rows.
var sandboxIDKinds = map[string][]string{
	"customers": {pid.Customer}, "points": {pid.Customer}, "customer_id": {pid.Customer}, "customerId": {pid.Customer},
	"campaigns": {pid.Campaign}, "campaign_id": {pid.Campaign},
	"stores": {pid.Store}, "store_id": {pid.Store}, "segments": {pid.Segment}, "segment_id": {pid.Segment},
	"sales": {pid.Sale}, "sale_id": {pid.Sale}, "saleId": {pid.Sale}, "clients": {pid.Client},
	"redemptions": {pid.Redemption}, "events": {pid.Event}, "event_id": {pid.Event},
	"webhooks": {pid.Webhook}, "endpoints": {pid.Webhook}, "endpoint_id": {pid.Webhook},
	"deliveries": {pid.Delivery}, "delivery_id": {pid.Delivery}, "attempts": {pid.Attempt},
}

// sandboxIDsFor returns the ids among ids to put in a route's parameter: those of
// the kind the parameter names, else those of the kind of the collection
// before it, else all of them.
func sandboxIDsFor(ids []string, pattern, param string) []string {
	byPrefix := func(prefixes []string) []string {
		var out []string
		for _, id := range ids {
			if slices.Contains(prefixes, pid.Prefix(id)) {
				out = append(out, id)
			}
		}
		return out
	}
	if prefixes, ok := sandboxIDKinds[param]; ok {
		return byPrefix(prefixes)
	}
	before, _, _ := strings.Cut(pattern, "{"+param+"}")
	segments := strings.Split(strings.Trim(before, "/"), "/")
	for i := len(segments) - 1; i >= 0; i-- {
		if prefixes, ok := sandboxIDKinds[segments[i]]; ok {
			return byPrefix(prefixes)
		}
	}
	return ids
}

// sandboxCall is one request of a route with production ids in it.
type sandboxCall struct {
	method, path string
	body         map[string]any
	prodIDs      []string // the production ids it names
}

// expandRoute returns the requests of a route pattern with production ids
// in its parameters: every id of the first parameter's kind with the first
// of the others'; and, for a route with several parameters, each
// parameter's production id with the sandbox's own ids in the others.
func (s *sandboxCase) expandRoute(t *testing.T, method, pattern string, body map[string]any) []sandboxCall {
	t.Helper()
	params := sandboxRouteParam.FindAllStringSubmatch(pattern, -1)
	if len(params) == 0 {
		return []sandboxCall{{method: method, path: pattern, body: body}}
	}
	// prodOnly fills parameter i with id, a production one, and the others
	// with the sandbox's own ids of their kind.
	prodOnly := func(i int, id string) sandboxCall {
		c := sandboxCall{method: method, path: pattern, body: body, prodIDs: []string{id}}
		for j, m := range params {
			v := id
			if j != i {
				own := sandboxIDsFor(s.sandboxIDs, pattern, m[1])
				require.NotEmpty(t, own, "the sandbox has no row for {%s} of %s", m[1], pattern)
				v = own[0]
			}
			c.path = strings.Replace(c.path, m[0], v, 1)
		}
		return c
	}
	var calls []sandboxCall
	first := sandboxIDsFor(s.prod.allIDs, pattern, params[0][1])
	require.NotEmpty(t, first, "no production row for {%s} of %s", params[0][1], pattern)
	for _, id := range first {
		c := sandboxCall{method: method, path: strings.Replace(pattern, params[0][0], id, 1), body: body, prodIDs: []string{id}}
		for _, m := range params[1:] {
			other := sandboxIDsFor(s.prod.allIDs, pattern, m[1])
			require.NotEmpty(t, other, "no production row for {%s} of %s", m[1], pattern)
			c.path = strings.Replace(c.path, m[0], other[0], 1)
			c.prodIDs = append(c.prodIDs, other[0])
		}
		calls = append(calls, c)
	}
	if len(params) > 1 {
		for i, m := range params {
			calls = append(calls, prodOnly(i, sandboxIDsFor(s.prod.allIDs, pattern, m[1])[0]))
		}
	}
	return calls
}

// restBody is the body a REST route is called with: the ids it takes are
// production ones, but for a redemption, whose production campaign is in
// the path.
func (s *sandboxCase) restBody(t *testing.T, key string) map[string]any {
	prod := s.prod
	cart := map[string]any{"subtotal": 100, "items": []any{map[string]any{"sku": "A", "quantity": 1, "unit_price": 100}}}
	// A customer that does not exist anywhere, to change a customer with.
	customer := map[string]any{"name": "Sandbox Cliente", "email": "novo@sandbox.example", "cpf": "11122233396"}
	switch key {
	case "POST /v1/customers":
		// A production CPF: a customer of the sandbox may have it, and a
		// conflict would tell the production customer exists.
		return map[string]any{"name": "Sandbox Cliente", "email": "novo@sandbox.example", "cpf": prodCPFs[2]}
	case "PUT /v1/customers/{id}", "PATCH /v1/customers/{id}":
		return customer
	case "POST /v1/campaigns":
		return map[string]any{"name": "Sandbox Campanha", "type": "discount", "starts_at": "2026-01-01T00:00:00Z",
			"ends_at": "2099-01-01T00:00:00Z", "segment_id": prod.segment.ID,
			"discount": map[string]any{"mode": "percentage", "value": 10}}
	case "POST /points/credit", "POST /v1/points/credit":
		return map[string]any{"customer_id": prod.customers[0].ID, "order_id": "sandbox-order", "points": 10}
	case "POST /points/debit", "POST /v1/points/debit":
		return map[string]any{"customer_id": prod.customers[0].ID, "points": 1, "reason": "sandbox"}
	case "POST /v1/campaigns/validate":
		return map[string]any{"customer_id": prod.customers[0].ID, "channel": "pdv", "cart": cart}
	case "POST /v1/campaigns/{id}/redeem":
		// A real validation of the sandbox's customer: only the campaign
		// is production's.
		own := s.sandboxCustomers(t)[0]
		res := s.bearer(t, http.MethodPost, "/v1/campaigns/validate", map[string]any{"customer_id": own, "channel": "pdv", "cart": cart})
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		token, _ := res.json(t)["validation_token"].(string)
		require.NotEmpty(t, token, "%s", res.body)
		return map[string]any{"customer_id": own, "order_id": "sandbox-order", "validation_token": token, "amount_paid": 90}
	case "POST /v1/campaigns/{id}/coupons":
		return map[string]any{"codes": []string{"SANDBOX-1"}}
	case "POST /v1/products":
		return map[string]any{"products": []any{map[string]any{"sku": "SANDBOX-1", "name": "Sandbox"}}}
	case "POST /v1/webhooks", "PATCH /v1/webhooks/{id}":
		return map[string]any{"url": "https://hooks.example.com/sandbox", "events": []string{"sale.processed"}, "description": "sandbox"}
	}
	// A route the test does not know: every id field a body may take.
	return map[string]any{
		"customer_id": prod.customers[0].ID, "campaign_id": prod.campaigns[0].ID, "store_id": prod.stores[0].ID,
		"segment_id": prod.segment.ID, "sale_id": prod.sale.ID, "endpoint_id": s.webhooks[0], "delivery_id": s.webhooks[1],
		"order_id": "sandbox-order", "points": 10, "reason": "sandbox", "name": "Sandbox",
	}
}

// Routes without a production resource in their path: sandboxBodyRefs name
// production rows in their body, and are refused; sandboxCollections act on
// the sandbox and answer 2xx. GraphQL is checked on its own (testGraphQL); here
// it only answers production nodes as null.
var (
	sandboxBodyRefs = map[string]bool{
		"POST /v1/campaigns": true, "POST /points/credit": true, "POST /v1/points/credit": true,
		"POST /points/debit": true, "POST /v1/points/debit": true, "POST /v1/campaigns/validate": true,
	}
	sandboxCollections = map[string]bool{
		"GET /v1/customers": true, "POST /v1/customers": true, "GET /v1/campaigns": true,
		"GET /v1/webhooks": true, "POST /v1/webhooks": true, "POST /v1/products": true,
	}
)

// sandboxNotEligible routes check a campaign against the validation before
// reading it: any campaign the sandbox's validation did not find, missing or
// production's, is answered 422 campaign_not_eligible (as in
// TestGraphQLTenantIsolation), which requireAsGhost checks tells nothing.
var sandboxNotEligible = map[string]bool{"POST /v1/campaigns/{id}/redeem": true}

// sandboxRefused are the statuses of a production resource asked for with
// sandbox credentials.
var sandboxRefused = []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}

// testREST calls every bearer route with the sandbox token on production
// resources.
func (s *sandboxCase) testREST(t *testing.T) {
	for _, key := range slices.Sorted(maps.Keys(rest.RouteScopes)) {
		method, pattern, _ := strings.Cut(key, " ")
		t.Run(key, func(t *testing.T) {
			if pattern == "/graphql" {
				s.restGraphQL(t, method)
				return
			}
			var body map[string]any
			if method != http.MethodGet && method != http.MethodDelete {
				body = s.restBody(t, key)
			}
			hasParams := sandboxRouteParam.MatchString(pattern)
			for _, c := range s.expandRoute(t, method, pattern, body) {
				for _, id := range s.prod.allIDs {
					if raw, _ := json.Marshal(c.body); strings.Contains(string(raw), id) {
						c.prodIDs = append(c.prodIDs, id)
					}
				}
				queries := []string{""}
				if method == http.MethodGet && !hasParams { // a list: filtered on production values too
					queries = append(queries, "?search="+prodCPFs[0], "?search="+url.QueryEscape(prodMark),
						"?segment_id="+s.prod.segment.ID, "?customer_id="+s.prod.customers[0].ID,
						"?after="+s.prod.customers[0].ID)
				}
				for _, q := range queries {
					c := c
					c.path += q
					for _, id := range s.prod.allIDs {
						if strings.Contains(q, id) {
							c.prodIDs = append(c.prodIDs, id)
						}
					}
					res := s.bearer(t, c.method, c.path, c.body)
					t.Logf("%s %s: %d", c.method, c.path, res.status)
					require.Less(t, res.status, 500, "%s", res.body)
					sent := slices.Clone(c.prodIDs)
					if key == "POST /v1/customers" {
						sent = append(sent, prodCPFs[2]) // the CPF it sends
					}
					s.noLeak(t, res.body, sent...)
					switch {
					case hasParams && sandboxNotEligible[key] && res.status == http.StatusUnprocessableEntity:
						require.Equal(t, "campaign_not_eligible", res.json(t)["error"], "%s", res.body)
					case hasParams:
						require.Containsf(t, sandboxRefused, res.status, "%s %s answered %d: %s", c.method, c.path, res.status, res.body)
					case sandboxBodyRefs[key]:
						// A production row named in a body is a field error.
						require.Containsf(t, append(slices.Clone(sandboxRefused), http.StatusUnprocessableEntity), res.status,
							"%s %s answered %d: %s", c.method, c.path, res.status, res.body)
					case sandboxCollections[key] && q == "":
						require.Truef(t, res.status >= 200 && res.status < 300, "%s %s answered %d: %s", c.method, c.path, res.status, res.body)
					}
					if res.status >= 200 && res.status < 300 {
						s.requireSandboxRows(t, res.body)
						if key == "POST /v1/customers" {
							// The sandbox's customer with a production CPF
							// would look like a leak to later checks.
							id, _ := res.json(t)["id"].(string)
							require.NoError(t, s.db.Ent.Customer.DeleteOneID(id).Exec(sys()))
						}
						continue
					}
					// Refused as a row that exists nowhere is: the answer
					// does not tell that the production row exists.
					s.requireAsGhost(t, c, res)
				}
			}
		})
	}
}

// requireAsGhost checks that c is answered as the same request with every
// production id replaced by an id of the same kind that exists nowhere.
func (s *sandboxCase) requireAsGhost(t *testing.T, c sandboxCall, res response) {
	t.Helper()
	if len(c.prodIDs) == 0 {
		return
	}
	raw, err := json.Marshal(c.body)
	require.NoError(t, err)
	path, body, answer := c.path, string(raw), string(res.body)
	for _, id := range c.prodIDs {
		ghost := pid.New(pid.Prefix(id))
		if pid.Prefix(id) == "" {
			ghost = "0badc0de-0000-4000-8000-000000000000"
		}
		path, body = strings.ReplaceAll(path, id, ghost), strings.ReplaceAll(body, id, ghost)
		answer = strings.ReplaceAll(answer, id, ghost)
	}
	var b any
	if c.body != nil {
		require.NoError(t, json.Unmarshal([]byte(body), &b))
	}
	g := s.bearer(t, c.method, path, b)
	require.Equalf(t, g.status, res.status, "a production row is answered %d, a missing one %d: %s / %s", res.status, g.status, res.body, g.body)
	require.JSONEqf(t, string(g.body), answer, "a production row is answered unlike a missing one")
}

// restGraphQL asks for every production node through GET or POST /graphql.
func (s *sandboxCase) restGraphQL(t *testing.T, method string) {
	const q = `query($id: ID!) { node(id: $id) { id } }`
	for _, id := range s.prod.nodeIDs {
		path := "/graphql"
		var body any = map[string]any{"query": q, "variables": map[string]any{"id": id}}
		if method == http.MethodGet {
			vars, _ := json.Marshal(map[string]any{"id": id})
			path += "?query=" + url.QueryEscape(q) + "&variables=" + url.QueryEscape(string(vars))
			body = nil
		}
		res := s.bearer(t, method, path, body)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		var a gqlAnswer
		require.NoError(t, json.Unmarshal(res.body, &a))
		require.Nil(t, dataOf(t, a)["node"], "production %s: %s", id, res.body)
		s.noLeak(t, res.body, id)
	}
}

// requireSandboxRows checks that every id of a REST answer is the
// sandbox's.
func (s *sandboxCase) requireSandboxRows(t *testing.T, raw []byte) {
	t.Helper()
	for _, m := range regexp.MustCompile(`"([a-z]{3}_[0-9a-z]{26})"`).FindAllStringSubmatch(string(raw), -1) {
		if pid.Prefix(m[1]) == pid.Validation || pid.Prefix(m[1]) == pid.PointsLot {
			continue // not nodes
		}
		n, err := s.db.Ent.Noder(sys(), m[1], sandboxNodeType)
		require.NoError(t, err, m[1])
		require.Equal(t, s.sandbox, sandboxTenantOf(t, n), "%s is not the sandbox's: %s", m[1], raw)
	}
}

// testPOS calls every point-of-sale route of the production tenant with the
// sandbox POS client's credentials.
func (s *sandboxCase) testPOS(t *testing.T) {
	body := map[string]any{
		"sessionId": "sandbox-session", "protocol": "PARTNER",
		"customer": map[string]any{"id": prodCPFs[0], "type": "CPF"},
		"store":    map[string]any{"id": s.prod.stores[0].Code, "posId": "PDV-01"},
	}
	for _, key := range slices.Sorted(maps.Keys(rest.POSRoutes)) {
		method, pattern, _ := strings.Cut(key, " ")
		t.Run(key, func(t *testing.T) {
			path := strings.Replace(pattern, "{tenantId}", s.prod.tenantID, 1)
			path = strings.Replace(path, "{saleId}", s.prod.sale.ID, 1)
			sent := []string{s.prod.tenantID, s.prod.sale.ID, prodCPFs[0], s.prod.stores[0].Code}
			require.NotContains(t, path, "{", "a POS route parameter the test does not fill")
			var b any
			if method != http.MethodGet {
				b = body
			}
			for name, send := range map[string]func() response{
				"sandbox POS client": func() response { return s.pos(t, method, path, b) },
				"sandbox OAuth token": func() response {
					req := s.request(t, method, path, b)
					req.Header.Set("Authorization", "Bearer "+s.token)
					return do(t, http.DefaultClient, req)
				},
			} {
				res := send()
				require.Contains(t, []int{http.StatusUnauthorized, http.StatusNotFound}, res.status, "%s: %s", name, res.body)
				s.noLeak(t, res.body, sent...)
			}
		})
	}
}

// testGraphQL reads production ids and every root connection with the
// sandbox's tokens.
func (s *sandboxCase) testGraphQL(t *testing.T) {
	for name, token := range map[string]string{"client": s.token, "user": s.user} {
		t.Run(name, func(t *testing.T) {
			t.Run("node", func(t *testing.T) {
				const q = `query($id: ID!) { node(id: $id) { id __typename } }`
				for _, id := range s.prod.nodeIDs {
					a := s.b.gql(t, token, q, map[string]any{"id": id})
					require.Nil(t, dataOf(t, a)["node"], "production %s: %s", id, a.Raw)
					for _, code := range a.codes() {
						// Found and then refused for its scope would tell
						// the row exists.
						require.Equal(t, "not_found", strings.ToLower(code), "production %s: %s", id, a.Raw)
					}
					s.noLeak(t, a.Raw, id)
				}
			})
			t.Run("nodes", func(t *testing.T) {
				a := s.b.gql(t, token, `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename } }`,
					map[string]any{"ids": s.prod.nodeIDs})
				for _, code := range a.codes() {
					require.Equal(t, "not_found", strings.ToLower(code), "%s", a.Raw)
				}
				nodes, ok := dataOf(t, a)["nodes"].([]any)
				require.True(t, ok, "%s", a.Raw)
				require.Len(t, nodes, len(s.prod.nodeIDs))
				for i, n := range nodes {
					require.Nil(t, n, "production %s: %s", s.prod.nodeIDs[i], a.Raw)
				}
				s.noLeak(t, a.Raw, s.prod.nodeIDs...)
			})
			t.Run("connections", func(t *testing.T) {
				conns := rootConnections(t, s.b, token)
				require.Contains(t, slices.Collect(maps.Keys(conns)), "customers")
				for _, root := range slices.Sorted(maps.Keys(conns)) {
					t.Run(root, func(t *testing.T) {
						a := s.b.gql(t, token, conns[root], nil)
						if root == "tenants" {
							// The sandbox's own row names its production
							// tenant (see "the sandbox tenant").
							s.noLeak(t, a.Raw, s.prod.tenantID)
						} else {
							s.noLeak(t, a.Raw)
						}
						if name == "client" && len(a.Errors) > 0 {
							// A back-office root field: refused to clients
							// whatever the data.
							requireScopeRefusal(t, a)
							return
						}
						require.Empty(t, a.Errors, "%s", a.Raw)
						s.requireSandboxNodes(t, a.Raw)
					})
				}
			})
			t.Run("the sandbox tenant", func(t *testing.T) {
				// The sandbox's own row names its production tenant's id (the
				// documented link, Tenant.sandboxOfID); the production row
				// itself is out of reach.
				a := s.b.gql(t, token, `{ tenants(first: 10) { totalCount edges { node { id name sandboxOfID sandboxOf { id name } sandboxes { id } } } } }`, nil)
				require.Empty(t, a.Errors, "%s", a.Raw)
				conn := dataOf(t, a)["tenants"].(map[string]any)
				require.EqualValues(t, 1, conn["totalCount"], "%s", a.Raw)
				node := conn["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)
				require.Equal(t, s.sandbox, node["id"])
				require.Equal(t, s.prod.tenantID, node["sandboxOfID"])
				require.Nil(t, node["sandboxOf"], "the production tenant reached from its sandbox: %s", a.Raw)
				s.noLeak(t, a.Raw, s.prod.tenantID)
			})
			t.Run("aggregates", func(t *testing.T) {
				for _, q := range []string{
					`{ customersByLevel { level customers } }`,
					`{ activeCustomers(from: "2000-01-01T00:00:00Z", to: "2100-01-01T00:00:00Z") }`,
					`{ pointsLiability { total byLevel { level customers points } byExpiryMonth { month points } } }`,
					`{ salesByStoreDay(from: "2026-01-01T00:00:00Z", to: "2026-12-31T00:00:00Z") { store { id code name } day sales amount } }`,
				} {
					a := s.b.gql(t, token, q, nil)
					s.noLeak(t, a.Raw)
					if name == "client" && len(a.Errors) > 0 {
						requireScopeRefusal(t, a)
						continue
					}
					require.Empty(t, a.Errors, "%s", a.Raw)
					// The sandbox's own figures, read as the system with the
					// sandbox named explicitly: production's are larger.
					data := dataOf(t, a)
					if l, ok := data["pointsLiability"].(map[string]any); ok {
						require.EqualValues(t, s.sandboxPoints(t), l["total"], "%s", a.Raw)
					}
					if n, ok := data["activeCustomers"]; ok {
						require.EqualValues(t, s.sandboxActive(t), n, "%s", a.Raw)
					}
					if days, ok := data["salesByStoreDay"].([]any); ok {
						stores := s.sandboxStores(t)
						for _, d := range days {
							require.Contains(t, stores, d.(map[string]any)["store"].(map[string]any)["id"], "%s", a.Raw)
						}
					}
				}
			})
		})
	}
}

// requireScopeRefusal checks that a GraphQL answer refuses for a missing
// scope only.
func requireScopeRefusal(t *testing.T, a gqlAnswer) {
	t.Helper()
	for _, code := range a.codes() {
		require.Contains(t, []string{"forbidden", "insufficient_scope"}, code, "%s", a.Raw)
	}
}

// requireSandboxNodes checks that every entity id of a GraphQL answer is the
// sandbox's (or the sandbox itself).
func (s *sandboxCase) requireSandboxNodes(t *testing.T, raw []byte) {
	t.Helper()
	for _, m := range regexp.MustCompile(`"id":"([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		id := m[1]
		if id == s.sandbox {
			continue
		}
		n, err := s.db.Ent.Noder(sys(), id, sandboxNodeType)
		require.NoError(t, err, id)
		require.Equal(t, s.sandbox, sandboxTenantOf(t, n), "%s is not the sandbox's: %s", id, raw)
	}
}

// rootConnections builds, from the schema, a query of every root connection
// of Query with every scalar field of its nodes: new connections are read
// without changing this test.
func rootConnections(t *testing.T, b *backOffice, token string) map[string]string {
	t.Helper()
	const typeRef = `kind name ofType { kind name ofType { kind name ofType { kind name } } }`
	a := b.gql(t, token, `{ __schema { queryType { name } types { name kind fields {
		name args { name defaultValue type { `+typeRef+` } } type { `+typeRef+` } } } } }`, nil)
	require.Empty(t, a.Errors, "%s", a.Raw)
	type typeRefT struct {
		Kind, Name string
		OfType     *typeRefT
	}
	type field struct {
		Name string
		Args []struct {
			Name         string
			DefaultValue *string
			Type         typeRefT
		}
		Type typeRefT
	}
	var schema struct {
		Schema struct {
			QueryType struct{ Name string }
			Types     []struct {
				Name, Kind string
				Fields     []field
			}
		} `json:"__schema"`
	}
	require.NoError(t, json.Unmarshal(a.Data, &schema), "%s", a.Raw)
	named := func(r typeRefT) typeRefT {
		for r.OfType != nil && (r.Kind == "NON_NULL" || r.Kind == "LIST") {
			r = *r.OfType
		}
		return r
	}
	types := map[string][]field{}
	for _, ty := range schema.Schema.Types {
		types[ty.Name] = ty.Fields
	}
	scalars := func(typeName string) string {
		var sel []string
		for _, f := range types[typeName] {
			required := slices.ContainsFunc(f.Args, func(a struct {
				Name         string
				DefaultValue *string
				Type         typeRefT
			}) bool {
				return a.Type.Kind == "NON_NULL" && a.DefaultValue == nil
			})
			if k := named(f.Type).Kind; !required && (k == "SCALAR" || k == "ENUM") {
				sel = append(sel, f.Name)
			}
		}
		return strings.Join(sel, " ")
	}
	out := map[string]string{}
	for _, f := range types[schema.Schema.QueryType.Name] {
		conn := named(f.Type).Name
		if !strings.HasSuffix(conn, "Connection") {
			continue
		}
		var args []string
		for _, arg := range f.Args {
			switch {
			case arg.Name == "first":
				args = append(args, "first: 100")
			case arg.Type.Kind == "NON_NULL" && arg.DefaultValue == nil:
				require.Failf(t, "root connection with a required argument", "Query.%s needs %s: teach the test", f.Name, arg.Name)
			}
		}
		node := strings.TrimSuffix(conn, "Connection")
		require.NotEmpty(t, types[node], "no type %s for %s", node, conn)
		q := fmt.Sprintf(`{ %s%s { totalCount edges { node { %s } } } }`, f.Name, sandboxArgs(args), scalars(node))
		out[f.Name] = q
	}
	return out
}

func sandboxArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ", ") + ")"
}

// sandboxNodeType resolves ids by their prefix, as the GraphQL node resolver.
var sandboxNodeType = ent.WithNodeType(pid.NodeType)

// sandboxTenantOf returns the tenant of an entity, or its id for a tenant.
func sandboxTenantOf(t *testing.T, n any) string {
	t.Helper()
	if tn, ok := n.(interface{ GetTenantID() string }); ok {
		return tn.GetTenantID()
	}
	raw, err := json.Marshal(n)
	require.NoError(t, err)
	var v struct {
		ID       string `json:"id"`
		TenantID string `json:"tenant_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	if v.TenantID == "" && pid.Prefix(v.ID) == "" {
		return v.ID // a tenant
	}
	require.NotEmpty(t, v.TenantID, "%T has no tenant_id", n)
	return v.TenantID
}
