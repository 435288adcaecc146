package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// spenders are the customers of the tests of the orders by spend, with the
// amounts of their sales and how many days ago each was made.
var spenders = []struct {
	name  string
	sales []struct {
		amount string
		ago    int
	}
}{
	{"Ana", []struct {
		amount string
		ago    int
	}{{"100.00", 40}, {"50.25", 3}}}, // R$ 150.25, R$ 50.25 in the last week
	{"Bruno", []struct {
		amount string
		ago    int
	}{{"300.00", 60}}}, // R$ 300.00, none in the last week
	{"Carla", []struct {
		amount string
		ago    int
	}{{"0.50", 2}, {"20.00", 1}, {"9.99", 5}}}, // R$ 30.49, all three in the last week
	{"Davi", nil}, // nothing
}

// spendersEnv is an environment whose tenant has the spenders, their sales
// registered at store LJ01 and processed; it answers each one's id by name.
func spendersEnv(t *testing.T, db *storage.DB) (*TestEnv, map[string]string) {
	t.Helper()
	e := newTestEnv(t, db)
	ctx := viewer.TenantContext(custSys(), e.tenantID)
	_, err := e.app.Backoffice.CreateStore(ctx, e.tenantID, "LJ01", "Loja Centro")
	require.NoError(t, err)
	ids := map[string]string{}
	var sales []string
	one := decimal.NewFromInt(1)
	for i, c := range spenders {
		cpf := []string{"52998224725", "11144477735", "39053344705", "15350946056"}[i]
		cust, err := e.app.Customers.CreateCustomer(ctx, customersctx.CustomerInput{Name: opt.Of(c.name), Email: opt.Of(strings.ToLower(c.name) + "@example.com"), CPF: opt.Of(cpf)})
		require.NoError(t, err)
		ids[c.name] = cust.ID
		for j, s := range c.sales {
			amount := decimal.RequireFromString(s.amount)
			at := time.Now().UTC().Add(-time.Duration(s.ago) * 24 * time.Hour)
			sale, err := e.app.POS.RegisterSale(ctx, pos.SaleInput{
				Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: cpf, Type: "CPF"},
				SaleID: fmt.Sprint(100*i + j + 1), StoreID: "LJ01", PosID: "PDV1", Channel: "pdv", Date: &at,
				Amount: &amount, AmountPayable: &amount,
				Items:    []pos.SaleItemInput{{ID: "1", GTIN: "0000000000000", Description: "Item", UnitPrice: &amount, Quantity: &one}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &amount, Method: "CARD"}},
			})
			require.NoError(t, err)
			sales = append(sales, sale.ID)
		}
	}
	require.NoError(t, e.app.POS.ProcessSales(ctx, sales...))
	return e, ids
}

// gqlNames are the customers' names of a customers connection query.
func gqlNames(t *testing.T, e *TestEnv, token, query string, vars map[string]any) (names []string, end string) {
	t.Helper()
	status, body := postGraphQL(t, e, token, query, vars)
	require.Equal(t, 200, status, body)
	var out struct {
		Data struct {
			Customers struct {
				Edges []struct {
					Node struct{ Name string }
				}
				PageInfo struct{ EndCursor string }
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	require.Empty(t, out.Errors, body)
	for _, e := range out.Data.Customers.Edges {
		names = append(names, e.Node.Name)
	}
	return names, out.Data.Customers.PageInfo.EndCursor
}

// TestCustomersOrderedByLifetimeValueGraphQL (issue 52): customers ordered
// and filtered by the lifetime value their sales gave them, in pages.
func TestCustomersOrderedByLifetimeValueGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, _ := spendersEnv(t, db)
		token := e.tokenFor(t, "customers:read")
		const q = `query($dir: OrderDirection!, $where: CustomerWhereInput, $first: Int, $after: Cursor) {
			customers(orderBy: {field: LIFETIME_VALUE, direction: $dir}, where: $where, first: $first, after: $after) {
				edges { node { name } } pageInfo { endCursor } } }`
		for _, c := range []struct {
			name  string
			dir   string
			where map[string]any
			want  []string
		}{
			{"most spent first", "DESC", nil, []string{"Bruno", "Ana", "Carla", "Davi"}},
			{"least spent first", "ASC", nil, []string{"Davi", "Carla", "Ana", "Bruno"}},
			// As text, "30.49" > "150.25": the order and bounds are numbers.
			{"at least R$ 30.49", "DESC", map[string]any{"lifetimeValueCentsGTE": 3049}, []string{"Bruno", "Ana", "Carla"}},
			{"more than R$ 30.49", "DESC", map[string]any{"lifetimeValueCentsGT": 3049}, []string{"Bruno", "Ana"}},
			{"between R$ 1 and R$ 200", "ASC", map[string]any{"lifetimeValueCentsGTE": 100, "lifetimeValueCentsLTE": 20000}, []string{"Carla", "Ana"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, _ := gqlNames(t, e, token, q, map[string]any{"dir": c.dir, "where": c.where})
				require.Equal(t, c.want, got)
			})
		}
		t.Run("pages of one", func(t *testing.T) {
			var all []string
			var after any
			for range 5 {
				names, end := gqlNames(t, e, token, q, map[string]any{"dir": "DESC", "first": 1, "after": after})
				if len(names) == 0 {
					break
				}
				all, after = append(all, names...), end
			}
			require.Equal(t, []string{"Bruno", "Ana", "Carla", "Davi"}, all)
		})
	})
}

// TestCustomersOrderedByLifetimeValueREST (issue 52): GET /v1/customers by
// lifetime value, both ways, bounded, in pages whose cursors keep the
// order.
func TestCustomersOrderedByLifetimeValueREST(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, named := spendersREST(t, db)
		for _, c := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{"order_by": {"lifetime_value"}}, []string{"Bruno", "Ana", "Carla", "Davi"}},
			{url.Values{"order_by": {"lifetime_value"}, "direction": {"asc"}}, []string{"Davi", "Carla", "Ana", "Bruno"}},
			{url.Values{"order_by": {"lifetime_value"}, "min_lifetime_value": {"30.49"}}, []string{"Bruno", "Ana", "Carla"}},
			{url.Values{"order_by": {"lifetime_value"}, "min_lifetime_value": {"30.5"}, "max_lifetime_value": {"300"}}, []string{"Bruno", "Ana"}},
			{url.Values{"max_lifetime_value": {"150.25"}}, []string{"Davi", "Carla", "Ana"}}, // newest first
		} {
			t.Run(c.query.Encode(), func(t *testing.T) {
				p := e.custList(t, e.token, c.query)
				require.Equal(t, c.want, named(p))
				require.Equal(t, len(c.want), p.total)
			})
		}
		t.Run("pages of one", func(t *testing.T) {
			for dir, want := range map[string][]string{"desc": {"Bruno", "Ana", "Carla", "Davi"}, "asc": {"Davi", "Carla", "Ana", "Bruno"}} {
				q := url.Values{"order_by": {"lifetime_value"}, "direction": {dir}, "limit": {"1"}}
				require.Equal(t, want, pagedNames(t, e, named, q), dir)
			}
		})
		t.Run("refused", func(t *testing.T) {
			byID := e.custList(t, e.token, url.Values{"limit": {"1"}}).nextCursor.(string)
			byValue := e.custList(t, e.token, url.Values{"limit": {"1"}, "order_by": {"lifetime_value"}}).nextCursor.(string)
			for q, field := range map[string]string{
				"order_by=points":                      "order_by",
				"order_by=lifetime_value&direction=up": "direction",
				"min_lifetime_value=ten":               "min_lifetime_value",
				"min_lifetime_value=10.005":            "min_lifetime_value",
				"max_lifetime_value=1e30":              "max_lifetime_value",
				// A cursor of the list by id is no cursor of the list by value.
				"order_by=lifetime_value&cursor=" + url.QueryEscape(byID): "cursor",
				"cursor=" + url.QueryEscape(byValue):                      "cursor",
			} {
				r := e.custDo(t, http.MethodGet, "/v1/customers?"+q, e.token, nil)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", field, field)
			}
		})
	})
}

// TestTopCustomers (issue 52): the customers who paid most, or bought most
// often, in a period, with what they paid and how many sales.
func TestTopCustomers(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, _ := spendersEnv(t, db)
		token := e.tokenFor(t, "customers:read")
		now := time.Now().UTC()
		const q = `query($from: Time!, $to: Time!, $first: Int, $by: TopCustomersBy) {
			topCustomers(from: $from, to: $to, first: $first, by: $by) { customer { name } spend sales } }`
		type top struct {
			name, spend string
			sales       int
		}
		for _, c := range []struct {
			name string
			days int
			vars map[string]any
			want []top
		}{
			{"last week by spend", 7, nil, []top{{"Ana", "50.25", 1}, {"Carla", "30.49", 3}}},
			{"last week by sales", 7, map[string]any{"by": "SALES"}, []top{{"Carla", "30.49", 3}, {"Ana", "50.25", 1}}},
			{"last quarter by spend", 90, nil, []top{{"Bruno", "300", 1}, {"Ana", "150.25", 2}, {"Carla", "30.49", 3}}},
			{"last quarter, first 2 by sales", 90, map[string]any{"by": "SALES", "first": 2}, []top{{"Carla", "30.49", 3}, {"Ana", "150.25", 2}}},
			{"a day without sales", 0, nil, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				vars := map[string]any{"from": now.Add(-time.Duration(c.days)*24*time.Hour - time.Hour).Format(time.RFC3339),
					"to": now.Add(time.Hour).Format(time.RFC3339)}
				if c.days == 0 {
					vars["from"], vars["to"] = now.Add(-30*time.Hour).Format(time.RFC3339), now.Add(-25*time.Hour).Format(time.RFC3339)
				}
				for k, v := range c.vars {
					vars[k] = v
				}
				status, body := postGraphQL(t, e, token, q, vars)
				require.Equal(t, http.StatusOK, status, body)
				var out struct {
					Data struct {
						TopCustomers []struct {
							Customer struct{ Name string }
							Spend    string
							Sales    int
						}
					}
					Errors []any
				}
				require.NoError(t, json.Unmarshal([]byte(body), &out), body)
				require.Empty(t, out.Errors, body)
				var got []top
				for _, r := range out.Data.TopCustomers {
					require.True(t, decimal.RequireFromString(r.Spend).IsPositive(), body)
					got = append(got, top{r.Customer.Name, decimal.RequireFromString(r.Spend).String(), r.Sales})
				}
				require.Equal(t, c.want, got)
			})
		}
		t.Run("refused", func(t *testing.T) {
			from, to := now.Add(-time.Hour).Format(time.RFC3339), now.Format(time.RFC3339)
			for _, vars := range []map[string]any{
				{"from": to, "to": from},
				{"from": from, "to": to, "first": 101},
				{"from": now.Add(-400 * 24 * time.Hour).Format(time.RFC3339), "to": to},
			} {
				_, body := postGraphQL(t, e, token, q, vars)
				require.Contains(t, body, `"errors"`, body)
			}
			_, body := postGraphQL(t, e, e.tokenFor(t, "campaigns:read"), q, map[string]any{"from": from, "to": to})
			require.Contains(t, body, "customers:read", body)
		})
	})
}

// spendersREST is spendersEnv's tenant with a customers:read client, and
// what names the spenders of a page.
func spendersREST(t *testing.T, db *storage.DB) (*custEnv, func(custPage) []string) {
	env, ids := spendersEnv(t, db)
	names := map[string]string{}
	for n, id := range ids {
		names[id] = n
	}
	return &custEnv{TestEnv: env, token: env.tokenFor(t, custScopeRead)}, func(p custPage) []string {
		var out []string
		for _, id := range p.ids {
			out = append(out, names[id])
		}
		return out
	}
}

// pagedNames follows the list's cursors from q (at most five pages) and
// names the customers of every page in order.
func pagedNames(t *testing.T, e *custEnv, named func(custPage) []string, q url.Values) []string {
	t.Helper()
	var all []string
	for range 5 {
		p := e.custList(t, e.token, q)
		all = append(all, named(p)...)
		if !p.hasMore {
			break
		}
		q.Set("cursor", p.nextCursor.(string))
	}
	return all
}
