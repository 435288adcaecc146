package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The spenders' purchases: Carla 3 (the latest a day ago), Ana 2 (3 days
// ago), Bruno 1 (60 days ago), Davi none.

// TestCustomersOrderedByPurchasesGraphQL (issue 52): customers ordered and
// filtered by their purchases and their last purchase, which the sales
// processed counted on their rows, in pages.
func TestCustomersOrderedByPurchasesGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, _ := spendersEnv(t, db)
		token := e.tokenFor(t, "customers:read")
		now := time.Now().UTC()
		t.Run("counted", func(t *testing.T) {
			status, body := postGraphQL(t, e, token, `{ customers(orderBy: {field: SALES_COUNT, direction: DESC}) {
				edges { node { name salesCount lastPurchaseAt } } } }`, nil)
			require.Equal(t, http.StatusOK, status, body)
			var out struct {
				Data struct {
					Customers struct {
						Edges []struct {
							Node struct {
								Name           string
								SalesCount     int
								LastPurchaseAt *time.Time
							}
						}
					}
				}
			}
			require.NoError(t, json.Unmarshal([]byte(body), &out), body)
			days := map[string]int{"Carla": 1, "Ana": 3, "Bruno": 60}
			counts := map[string]int{"Carla": 3, "Ana": 2, "Bruno": 1, "Davi": 0}
			require.Len(t, out.Data.Customers.Edges, 4, body)
			for _, edge := range out.Data.Customers.Edges {
				n := edge.Node
				require.Equal(t, counts[n.Name], n.SalesCount, n.Name)
				if n.Name == "Davi" {
					require.Nil(t, n.LastPurchaseAt, body)
					continue
				}
				require.NotNil(t, n.LastPurchaseAt, body)
				require.WithinDuration(t, now.Add(-time.Duration(days[n.Name])*24*time.Hour), *n.LastPurchaseAt, time.Minute, n.Name)
			}
		})
		const q = `query($field: CustomerOrderField!, $dir: OrderDirection!, $where: CustomerWhereInput, $first: Int, $after: Cursor) {
			customers(orderBy: {field: $field, direction: $dir}, where: $where, first: $first, after: $after) {
				edges { node { name } } pageInfo { endCursor } } }`
		tenDaysAgo := now.Add(-10 * 24 * time.Hour)
		for _, c := range []struct {
			name       string
			field, dir string
			where      map[string]any
			want       []string
		}{
			{"most purchases first", "SALES_COUNT", "DESC", nil, []string{"Carla", "Ana", "Bruno", "Davi"}},
			{"fewest purchases first", "SALES_COUNT", "ASC", nil, []string{"Davi", "Bruno", "Ana", "Carla"}},
			{"at least two purchases", "SALES_COUNT", "DESC", map[string]any{"salesCountGTE": 2}, []string{"Carla", "Ana"}},
			{"one or two purchases", "SALES_COUNT", "ASC", map[string]any{"salesCountGTE": 1, "salesCountLTE": 2}, []string{"Bruno", "Ana"}},
			{"latest purchase first", "LAST_PURCHASE_AT", "DESC", nil, []string{"Carla", "Ana", "Bruno", "Davi"}},
			{"oldest purchase first", "LAST_PURCHASE_AT", "ASC", nil, []string{"Davi", "Bruno", "Ana", "Carla"}},
			// An instant with another offset than the stored UTC compares as an instant.
			{"bought within ten days", "LAST_PURCHASE_AT", "DESC", map[string]any{"lastPurchaseAtGTE": tenDaysAgo.In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339)}, []string{"Carla", "Ana"}},
			// Stored 1 day ago, compared with an instant 23 hours ago written 3 hours behind.
			{"none bought since 23 hours ago", "LAST_PURCHASE_AT", "DESC", map[string]any{"lastPurchaseAtGT": now.Add(-23 * time.Hour).In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339)}, nil},
			{"not within ten days", "LAST_PURCHASE_AT", "DESC", map[string]any{"lastPurchaseAtLT": tenDaysAgo.Format(time.RFC3339)}, []string{"Bruno"}},
			{"never bought", "SALES_COUNT", "DESC", map[string]any{"lastPurchaseAtIsNil": true}, []string{"Davi"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, _ := gqlNames(t, e, token, q, map[string]any{"field": c.field, "dir": c.dir, "where": c.where})
				require.Equal(t, c.want, got)
			})
		}
		t.Run("pages of one", func(t *testing.T) {
			for _, field := range []string{"SALES_COUNT", "LAST_PURCHASE_AT"} {
				for dir, want := range map[string][]string{"DESC": {"Carla", "Ana", "Bruno", "Davi"}, "ASC": {"Davi", "Bruno", "Ana", "Carla"}} {
					var all []string
					var after any
					for range 5 {
						names, end := gqlNames(t, e, token, q, map[string]any{"field": field, "dir": dir, "first": 1, "after": after})
						if len(names) == 0 {
							break
						}
						all, after = append(all, names...), end
					}
					require.Equal(t, want, all, field+" "+dir)
				}
			}
		})
	})
}

// TestCustomersOrderedByPurchasesREST (issue 52): GET /v1/customers by
// purchases and by last purchase, both ways, bounded, in pages whose
// cursors keep the order.
func TestCustomersOrderedByPurchasesREST(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, named := spendersREST(t, db)
		tenDaysAgo := time.Now().UTC().Add(-10 * 24 * time.Hour)
		for _, c := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{"order_by": {"sales_count"}}, []string{"Carla", "Ana", "Bruno", "Davi"}},
			{url.Values{"order_by": {"sales_count"}, "direction": {"asc"}}, []string{"Davi", "Bruno", "Ana", "Carla"}},
			{url.Values{"order_by": {"last_purchase_at"}}, []string{"Carla", "Ana", "Bruno", "Davi"}},
			{url.Values{"order_by": {"last_purchase_at"}, "direction": {"asc"}}, []string{"Davi", "Bruno", "Ana", "Carla"}},
			{url.Values{"order_by": {"sales_count"}, "min_sales_count": {"2"}}, []string{"Carla", "Ana"}},
			{url.Values{"max_sales_count": {"1"}}, []string{"Davi", "Bruno"}}, // newest first
			{url.Values{"min_sales_count": {"1"}, "max_sales_count": {"2"}, "order_by": {"lifetime_value"}}, []string{"Bruno", "Ana"}},
			{url.Values{"last_purchase_after": {tenDaysAgo.In(time.FixedZone("BRT", -3*3600)).Format(time.RFC3339)}}, []string{"Carla", "Ana"}},
			{url.Values{"last_purchase_before": {tenDaysAgo.Format("2006-01-02")}, "order_by": {"last_purchase_at"}}, []string{"Bruno"}},
			{url.Values{"min_sales_count": {"4"}}, nil},
		} {
			t.Run(c.query.Encode(), func(t *testing.T) {
				p := e.custList(t, e.token, c.query)
				require.Equal(t, c.want, named(p))
				require.Equal(t, len(c.want), p.total)
			})
		}
		t.Run("pages of one", func(t *testing.T) {
			for _, by := range []string{"sales_count", "last_purchase_at"} {
				for dir, want := range map[string][]string{"desc": {"Carla", "Ana", "Bruno", "Davi"}, "asc": {"Davi", "Bruno", "Ana", "Carla"}} {
					q := url.Values{"order_by": {by}, "direction": {dir}, "limit": {"1"}}
					require.Equal(t, want, pagedNames(t, e, named, q), by+" "+dir)
				}
			}
		})
		t.Run("refused", func(t *testing.T) {
			bySales := e.custList(t, e.token, url.Values{"limit": {"1"}, "order_by": {"sales_count"}}).nextCursor.(string)
			for q, field := range map[string]string{
				// A cursor of one order is no cursor of another.
				"order_by=lifetime_value&cursor=" + url.QueryEscape(bySales): "cursor",
				"order_by=purchases":              "order_by",
				"min_sales_count=-1":              "min_sales_count",
				"max_sales_count=two":             "max_sales_count",
				"min_sales_count=1.5":             "min_sales_count",
				"last_purchase_after=yesterday":   "last_purchase_after",
				"last_purchase_before=2026-13-01": "last_purchase_before",
			} {
				r := e.custDo(t, http.MethodGet, "/v1/customers?"+q, e.token, nil)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", field, field)
			}
		})
	})
}
