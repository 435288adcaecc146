package rest_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/rest"
)

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
	"holds": {pid.PointsHold, pid.WalletHold}, "gift-cards": {pid.GiftCard}, "deliveries": {pid.Delivery}, "delivery_id": {pid.Delivery}, "attempts": {pid.Attempt},
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
	case "POST /v1/wallets/holds":
		return map[string]any{"customer_id": prod.customers[0].ID, "wallet": "cashback", "order_id": "sandbox-order", "amount": 1}
	case "POST /points/holds/{id}/capture", "POST /v1/points/holds/{id}/capture", "POST /v1/wallets/holds/{id}/capture":
		return map[string]any{"order_id": "sandbox-order", "order_amount": 100}
	case "POST /v1/gift-cards":
		return map[string]any{"amount": 10, "customer_id": prod.customers[0].ID}
	case "POST /v1/gift-cards/lookup":
		return map[string]any{"code": prodGiftCardCode}
	case "POST /v1/gift-cards/{id}/load":
		return map[string]any{"amount": 1, "load_id": "sandbox-load"}
	case "POST /v1/gift-cards/{id}/transfer":
		return map[string]any{"to_gift_card_id": sandboxIDsFor(prod.allIDs, "/v1/gift-cards/{id}", "id")[0], "transfer_id": "sandbox-transfer"}
	case "POST /v1/gift-cards/{id}/bind":
		return map[string]any{"customer_id": prod.customers[0].ID}
	case "POST /v1/products":
		return map[string]any{"products": []any{map[string]any{"sku": "SANDBOX-1", "name": "Sandbox"}}}
	case "POST /v1/segments":
		// A production customer as a member: unknown to the sandbox.
		return map[string]any{"name": "Sandbox Segmento", "members": []string{prod.customers[0].ID}}
	case "PATCH /v1/segments/{id}":
		return map[string]any{"name": "Sandbox Segmento", "add_members": []string{prod.customers[0].ID}}
	case "POST /v1/segments/preview":
		return map[string]any{"rule": "purchases >= 0"}
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
		"POST /points/holds": true, "POST /v1/points/holds": true, "POST /v1/wallets/holds": true,
		"POST /v1/gift-cards": true, "POST /v1/gift-cards/lookup": true,
		"POST /v1/segments": true,
	}
	sandboxCollections = map[string]bool{
		"GET /v1/customers": true, "POST /v1/customers": true, "GET /v1/campaigns": true,
		"GET /v1/webhooks": true, "POST /v1/webhooks": true, "POST /v1/products": true,
		"GET /v1/segments": true, "POST /v1/segments/preview": true, "GET /v1/gift-cards": true,
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
			path = strings.Replace(path, "{holdId}", "phd_00000000000000000000000000", 1)
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
