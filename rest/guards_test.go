package rest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestInputGuards: text and numbers no database stores are refused by the
// one guard of the domain, through /v1 and GraphQL alike, with a 422 (400
// for a body that is not JSON), fast, never a 500, and nothing is stored.
func TestInputGuards(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("9", 900_000)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		all := e.tenantToken(t, e.tenantID, custScopeRead, custScopeWrite, "campaigns:read", "campaigns:write", "loyalty:write")
		customer := e.custCreate(t, e.token, custBasic("Ana Souza", "ana@example.com", e.custNewCPF()))
		good := func() map[string]any {
			return map[string]any{"name": "Bia Lima", "email": "bia@example.com", "cpf": e.custNewCPF(), "phone": "+5511987654321",
				"external_id": "ext-1", "address": map[string]any{"city": "Recife", "state": "PE"}}
		}
		campaign := func(discount map[string]any, minSubtotal string) string {
			rules := `{}`
			if minSubtotal != "" {
				rules = `{"min_subtotal":` + minSubtotal + `}`
			}
			d, err := json.Marshal(discount)
			require.NoError(t, err)
			now := time.Now().UTC()
			return `{"name":"Guarded","type":"discount","starts_at":"` + now.Add(time.Hour).Format(time.RFC3339) +
				`","ends_at":"` + now.Add(48*time.Hour).Format(time.RFC3339) + `","discount":` + string(d) + `,"eligibility":` + rules + `}`
		}
		type call struct {
			name, method, path, body string
			want                     int
		}
		calls := []call{
			{"GET a NUL id", "GET", "/v1/customers/%00", "", 422},
			{"GET invalid UTF-8 id", "GET", "/v1/customers/cus_%FF%FE", "", 422},
			{"search invalid UTF-8", "GET", "/v1/customers?search=%FF%FE", "", 422},
			{"search NUL", "GET", "/v1/customers?search=a%00b", "", 422},
			{"invalid UTF-8 body", "POST", "/v1/customers", "{\"name\":\"\xff\xfe\",\"email\":\"x@example.com\"}", 400},
			{"campaign discount 1e308", "POST", "/v1/campaigns", campaign(map[string]any{"mode": "percentage", "value": json.Number("1e308")}, ""), 422},
			{"campaign min_subtotal 1e308", "POST", "/v1/campaigns", campaign(map[string]any{"mode": "fixed_amount", "value": 5}, "1e308"), 422},
			{"campaign 900 KB literal", "POST", "/v1/campaigns", campaign(map[string]any{"mode": "fixed_amount", "value": json.Number(huge)}, ""), 422},
			{"redeem amount_paid 1e308", "POST", "/v1/campaigns/cmp_x/redeem",
				`{"customer_id":"` + customer + `","order_id":"o-1","validation_token":"vt","amount_paid":1e308}`, 422},
			{"credit 900 KB literal", "POST", "/v1/points/credit",
				`{"customer_id":"` + customer + `","order_id":"o-2","amount":` + huge + `}`, 422},
		}
		for _, field := range []string{"name", "email", "phone", "external_id", "cpf"} {
			for _, bad := range []string{"a\u0000b"} {
				body := good()
				body[field] = bad
				raw, err := json.Marshal(body)
				require.NoError(t, err)
				calls = append(calls, call{"NUL in " + field, "POST", "/v1/customers", string(raw), 422})
			}
		}
		addr := good()
		addr["address"] = map[string]any{"city": "Re\u0000cife"}
		raw, err := json.Marshal(addr)
		require.NoError(t, err)
		calls = append(calls, call{"NUL in address.city", "POST", "/v1/customers", string(raw), 422})
		for _, c := range calls {
			t.Run(c.name, func(t *testing.T) {
				ct := ""
				if c.body != "" {
					ct = "application/json"
				}
				started := time.Now()
				r := e.custRaw(t, c.method, c.path, all, ct, c.body)
				t.Logf("%s answered %d in %s", c.name, r.status, time.Since(started))
				require.Equal(t, c.want, r.status, "%.300s", r.body)
				require.NotEmpty(t, r.obj(t)["error"])
			})
		}
		// A literal in the document is refused when the document is
		// validated (invalid_query, a request error: 200 with
		// application/json); a variable when the argument is coerced, as a
		// field error (GraphQL over HTTP).
		for _, q := range []struct {
			name, query, code string
			status            int
		}{
			{"GraphQL Money variable 900 KB", `{"query":"mutation($a: Money){ creditPoints(input:{customerID:\"` + customer + `\", orderID:\"g-1\", amount:$a}){ replayed } }","variables":{"a":"` + huge + `"}}`, "validation_error", 200},
			{"GraphQL Money inline 900 KB", `{"query":"mutation{ creditPoints(input:{customerID:\"` + customer + `\", orderID:\"g-2\", amount:` + huge + `}){ replayed } }"}`, "invalid_query", 200},
			{"GraphQL Money 1e308", `{"query":"mutation{ creditPoints(input:{customerID:\"` + customer + `\", orderID:\"g-3\", amount:\"1e308\"}){ replayed } }"}`, "validation_error", 200},
			{"GraphQL NUL text", `{"query":"mutation($n: String!){ createCustomer(input:{name:$n, email:\"n@example.com\", cpf:\"` + e.custNewCPF() + `\"}){ id } }","variables":{"n":"a\u0000b"}}`, "validation_error", 200},
		} {
			t.Run(q.name, func(t *testing.T) {
				started := time.Now()
				r := e.custRaw(t, "POST", "/graphql", all, "application/json", q.query)
				t.Logf("%s answered %d in %s: %.200s", q.name, r.status, time.Since(started), r.body)
				require.Equal(t, q.status, r.status, "%.300s", r.body)
				var body struct {
					Data   map[string]any `json:"data"`
					Errors []struct {
						Extensions map[string]any `json:"extensions"`
					} `json:"errors"`
				}
				require.NoError(t, json.Unmarshal(r.body, &body))
				require.NotEmpty(t, body.Errors, "%.300s", r.body)
				require.Equal(t, q.code, body.Errors[0].Extensions["code"], "%.300s", r.body)
				require.Empty(t, body.Data["creditPoints"])
				require.Empty(t, body.Data["createCustomer"])
			})
		}
		require.NotContains(t, e.logs.String(), `"status":500`, "no 500")
		ctx := custSys()
		n, err := db.Ent.Customer.Query().Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the valid customer is stored")
		campaigns, err := db.Ent.Campaign.Query().Count(ctx)
		require.NoError(t, err)
		require.Zero(t, campaigns)
		entries, err := db.Ent.PointsEntry.Query().Count(ctx)
		require.NoError(t, err)
		require.Zero(t, entries)
	})
}
