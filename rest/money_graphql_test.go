package rest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestGraphQLMoneyTwoPlaces (issue 52): GraphQL answers amounts in R$ with
// exactly two decimal places (Money), whether stored with fewer or summed
// to zero, and refuses an amount of a fraction of a cent.
func TestGraphQLMoneyTwoPlaces(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e, ids := spendersEnv(t, db)
		token := e.tokenFor(t, "customers:read")
		now := time.Now().UTC()
		status, body := postGraphQL(t, e, token, `query($from: Time!, $to: Time!) {
			customers(orderBy: {field: LIFETIME_VALUE, direction: DESC}) { edges { node { name lifetimeValue } } }
			topCustomers(from: $from, to: $to) { customer { name } spend } }`,
			map[string]any{"from": now.Add(-90 * 24 * time.Hour).Format(time.RFC3339), "to": now.Add(time.Hour).Format(time.RFC3339)})
		require.Equal(t, http.StatusOK, status, body)
		var out struct {
			Data struct {
				Customers struct {
					Edges []struct {
						Node struct{ Name, LifetimeValue string }
					}
				}
				TopCustomers []struct {
					Customer struct{ Name string }
					Spend    string
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out), body)
		values := map[string]string{}
		for _, edge := range out.Data.Customers.Edges {
			values[edge.Node.Name] = edge.Node.LifetimeValue
		}
		require.Equal(t, map[string]string{"Bruno": "300.00", "Ana": "150.25", "Carla": "30.49", "Davi": "0.00"}, values, body)
		spend := map[string]string{}
		for _, top := range out.Data.TopCustomers {
			spend[top.Customer.Name] = top.Spend
		}
		require.Equal(t, map[string]string{"Bruno": "300.00", "Ana": "150.25", "Carla": "30.49"}, spend, body)

		// An amount is read with at most two decimal places.
		write := e.tokenFor(t, "loyalty:write")
		for amount, refused := range map[string]bool{"10.5": false, "10.505": true} {
			_, body := postGraphQL(t, e, write, `mutation($c: ID!, $o: String!, $a: Money) {
				creditPoints(input: {customerID: $c, orderID: $o, amount: $a}) { replayed } }`,
				map[string]any{"c": ids["Davi"], "o": "money-" + amount, "a": amount})
			if refused {
				require.Contains(t, body, "at most two decimal places", body)
				continue
			}
			require.NotContains(t, body, `"errors"`, body)
		}
	})
}
