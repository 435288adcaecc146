package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// aliased repeats field n times under aliases a0, a1, ….
func aliased(n int, field string) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	b.WriteString("}")
	return b.String()
}

// TestGraphQLQueryLimits: queries too complex, too deep or flooded with
// aliases are refused before any resolver runs, each with its own code;
// queries just inside the limits pass.
func TestGraphQLQueryLimits(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		token := f.token(t, f.client(t, apiclient.KindOauth), "")
		_, err := f.app.Customers.CreateCustomer(viewer.TenantContext(context.Background(), f.tenantID), customers.CustomerInput{
			Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725"),
		})
		require.NoError(t, err)
		deep := `{ customers { edges { node { redemptions { edges { node { customer { segments { edges { node { customers { edges { node { name } } } } } } } } } } } } } }`
		cases := []struct {
			name, query, code string
		}{
			{"a page of customers", `{ customers(first: 100) { totalCount edges { node { id name email level pointsBalance createdAt } } } }`, ""},
			{"nested pages multiply", `{ customers(first: 100) { edges { node { pointsEntries(first: 100) { edges { node { id points kind } } } } } } }`, "query_too_complex"},
			{"nested default pages", `{ customers(first: 100) { edges { node { id redemptions { edges { node { id orderID amountPaid discountAmount campaign { id name } } } } } } } }`, "query_too_complex"},
			{"ten levels", `{ customers(first: 2) { edges { node { redemptions(first: 2) { edges { node { customer { segments(first: 2) { edges { cursor } } } } } } } } } }`, ""},
			{"too deep", deep, "query_too_deep"},
			{"too deep through fragments", `query { customers { ...C } } fragment C on CustomerConnection { edges { node { redemptions { edges { node { customer { ...S } } } } } } } fragment S on Customer { segments { edges { node { name } } } }`, "query_too_deep"},
			{"twenty aliases", aliased(20, "customers(first: 1) { totalCount }"), ""},
			{"alias flood", aliased(21, "customers(first: 1) { totalCount }"), "too_many_aliases"},
			{"page too large", `{ customers(first: 1000) { totalCount } }`, "validation_error"},
			{"nested page too large", `{ customers(first: 1) { edges { node { pointsEntries(first: 101) { totalCount } } } } }`, "validation_error"},
			{"not a query", `{ customers {`, "invalid_query"},
			{"unknown field", `{ customers { nope } }`, "invalid_query"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				a := f.gql(t, token, tc.query, nil)
				if tc.code == "" {
					require.Empty(t, a.Errors, "%s", a.Raw)
					return
				}
				require.Contains(t, a.codes(), tc.code, "%s", a.Raw)
				if tc.code != "validation_error" {
					require.JSONEq(t, "null", string(orNull(a.Data)), "refused before execution: %s", a.Raw)
				}
			})
		}
		t.Run("introspection is deep but allowed", func(t *testing.T) {
			a := f.gql(t, token, `{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } }`, nil)
			require.Empty(t, a.Errors, "%s", a.Raw)
		})
		t.Run("a body over 1 MiB", func(t *testing.T) {
			big := `{ customers { totalCount } }` + strings.Repeat(" ", 1<<20)
			res := f.graphqlQuery(t, nil, http.MethodPost, token, big)
			require.Equal(t, http.StatusRequestEntityTooLarge, res.status, "%s", res.body)
			require.Contains(t, string(res.body), `"code":"request_too_large"`)
		})
	})
}

// TestGraphQLIntrospectionSwitch: introspection answers unless the operator
// turns it off; data queries work either way.
func TestGraphQLIntrospectionSwitch(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("off=%v", off), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, storagetest.Open(t, "sqlite3"), func(a *rest.ServerSetup) { a.NoIntrospection = off })
			token := f.token(t, f.client(t, apiclient.KindOauth), "")
			a := f.gql(t, token, `{ __schema { queryType { name } } }`, nil)
			if off {
				require.NotEmpty(t, a.Errors, "%s", a.Raw)
			} else {
				require.Empty(t, a.Errors, "%s", a.Raw)
			}
			require.Empty(t, f.gql(t, token, `{ customers { totalCount } }`, nil).Errors)
		})
	}
}

func orNull(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}
