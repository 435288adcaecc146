package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// postGraphQL posts a query and its variables to /graphql.
func postGraphQL(t testing.TB, e *TestEnv, token, query string, vars map[string]any) (int, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	return rawGraphQL(t, e, token, "application/json", string(body))
}

// joined joins n items made by item with sep.
func joined(n int, sep string, item func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = item(i)
	}
	return strings.Join(parts, sep)
}

// TestDocumentOrBatches (issue 32, item 1): a where-input of no type
// filters by document, so the review's attack, a batch of candidate CPFs
// in an `or` next to the victim's id, 20 aliases a request, is refused as a
// query on an unknown field before it runs.
func TestDocumentOrBatches(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		cpf := posCPF()
		victim := e.posCustomer(t, cpf, posCust{name: "Vítima do Lote"})
		reader := e.tokenFor(t, "customers:read")
		candidates := make([]string, 990)
		for i := range candidates {
			candidates[i] = posCPF()
		}
		candidates[437] = cpf

		t.Run("20 aliases of 990 candidates each", func(t *testing.T) {
			or := make([]map[string]any, len(candidates))
			for i, c := range candidates {
				or[i] = map[string]any{"document": c}
			}
			query := `query($id: ID!, $or: [CustomerWhereInput!]) ` +
				aliasedFields(20, `customers(where: {id: $id, or: $or}) { totalCount }`)
			status, body := postGraphQL(t, e.TestEnv, reader, query, map[string]any{"id": victim.ID, "or": or})
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, []string{"invalid_query"}, gqlCodes(t, body), body)
			require.NotContains(t, body, `"data"`)
		})
		t.Run("candidates written in the query", func(t *testing.T) {
			or := joined(20, ", ", func(i int) string { return `{document: "` + candidates[430+i] + `"}` })
			status, body := postGraphQL(t, e.TestEnv, reader, `{ customers(where: {id: "`+victim.ID+`", or: [`+or+`]}) { totalCount } }`, nil)
			require.Equal(t, http.StatusOK, status, body)
			codes := gqlCodes(t, body)
			require.Len(t, codes, 20, "one error a candidate: %s", body)
			require.Equal(t, []string{"invalid_query"}, slices.Compact(codes), body)
			require.NotContains(t, body, "totalCount")
		})
		t.Run("sales are not filtered by document either", func(t *testing.T) {
			_, body := postGraphQL(t, e.TestEnv, reader, `{ sales(where: {customerDocument: "`+cpf+`"}) { totalCount } }`, nil)
			require.Equal(t, []string{"invalid_query"}, gqlCodes(t, body), body)
		})
		t.Run("no where-input has a document field", func(t *testing.T) {
			_, body := postGraphQL(t, e.TestEnv, reader, `{ __schema { types { name inputFields { name } } } }`, nil)
			var a struct {
				Data struct {
					Schema struct {
						Types []struct {
							Name        string
							InputFields []struct{ Name string }
						}
					} `json:"__schema"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(body), &a), body)
			wheres := 0
			for _, typ := range a.Data.Schema.Types {
				if !strings.HasSuffix(typ.Name, "WhereInput") {
					continue
				}
				wheres++
				for _, f := range typ.InputFields {
					name := strings.ToLower(f.Name)
					require.False(t, strings.Contains(name, "document") && !strings.Contains(name, "documenttype"),
						"%s.%s filters by document", typ.Name, f.Name)
				}
			}
			require.Greater(t, wheres, 10)
		})
	})
}

// TestDocumentLookupQuota (issue 32, item 1): a customer is found by
// complete document one value a call, through GraphQL's customerByDocument
// or a REST search by CPF; both count against the client's one quota of
// lookups, refused beyond it with 429 (REST, with Retry-After) or a
// document_lookups_exceeded error (GraphQL), and every lookup is in the
// audit trail without the document.
func TestDocumentLookupQuota(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		idp := authtest.NewProvider(t)
		e := posSetup(t, db, func(s *ServerSetup) {
			s.DocumentLookups = ratelimit.Quota{Limit: 3, Window: time.Hour}
			require.NoError(t, s.Auth.UseOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.URL, Audience: "fideliza-lookup-test"}))
		})
		cpf, unknown := posCPF(), posCPF()
		cust := e.posCustomer(t, cpf, posCust{name: "Ana Consulta", email: "ana.consulta@example.com"})
		reader := e.tokenFor(t, "customers:read")
		analyst := idp.Sign(t, map[string]any{
			"iss": idp.URL, "sub": "analyst@loja.example", "aud": "fideliza-lookup-test",
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
			"tenant_id": e.tenantID, "role": string(viewer.RoleAnalyst),
		})
		byDocument := func(token, doc string) string {
			_, body := postGraphQL(t, e.TestEnv, token, `query($d: String!) { customerByDocument(document: $d) { id documentMasked } }`,
				map[string]any{"d": doc})
			require.NotContains(t, body, cpf)
			return body
		}
		search := func(term string) apiResp {
			return e.bearer(t, http.MethodGet, "/v1/customers?search="+url.QueryEscape(term), reader, nil)
		}

		require.JSONEq(t, `{"data":{"customerByDocument":{"id":"`+cust.ID+`","documentMasked":"***.***.***-`+cpf[9:]+`"}}}`,
			byDocument(reader, posFormatCPF(cpf)))
		found := search(cpf)
		require.Equal(t, http.StatusOK, found.status, "%s", found.body)
		require.Contains(t, string(found.body), `"id":"`+cust.ID+`"`)
		require.JSONEq(t, `{"data":{"customerByDocument":null}}`, byDocument(reader, unknown))
		require.Equal(t, http.StatusOK, search("Ana Consulta").status, "a search by name is no lookup")

		refused := search(cpf)
		require.Equal(t, http.StatusTooManyRequests, refused.status, "%s", refused.body)
		require.Equal(t, "document_lookups_exceeded", refused.obj(t)["error"])
		retry, err := strconv.Atoi(refused.header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After: %q", refused.header.Get("Retry-After"))
		require.Positive(t, retry)
		require.NotContains(t, string(refused.body), cust.ID)

		body := byDocument(reader, cpf)
		require.Equal(t, []string{"document_lookups_exceeded"}, gqlCodes(t, body), body)
		var a struct {
			Errors []struct {
				Extensions struct {
					RetryAfter int `json:"retryAfter"`
				} `json:"extensions"`
			} `json:"errors"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &a))
		require.Positive(t, a.Errors[0].Extensions.RetryAfter, body)
		require.NotContains(t, body, cust.ID)

		// Another principal, a read-only analyst, has a quota of its own
		// and is audited too.
		require.Contains(t, byDocument(analyst, cpf), cust.ID)

		events, err := e.db.Ent.AuditEvent.Query().Where(auditevent.Action("customer.looked_up")).
			Order(auditevent.ByID()).All(viewer.SystemContext(context.Background()))
		require.NoError(t, err)
		var got []string
		for _, ev := range events {
			require.Equal(t, "customer", ev.TargetType)
			require.Empty(t, ev.Fields)
			got = append(got, fmt.Sprintf("%s %s %s", ev.ActorKind, ev.Actor, ev.TargetID))
		}
		client := e.client.Client.ID
		require.Equal(t, []string{
			"client " + client + " " + cust.ID, "client " + client + " " + cust.ID, "client " + client + " ",
			"user analyst@loja.example " + cust.ID,
		}, got, "one entry a lookup; none for the refused ones")
	})
}

// TestGraphQLWhereBounds (issue 32, item 1): where-inputs of every type are
// bounded: at most 50 items in an or, and or …In list, at most 300
// predicates in a request's filters; beyond, query_too_complex before any
// resolver runs.
func TestGraphQLWhereBounds(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		e.posCustomer(t, posCPF(), posCust{name: "Ana"})
		token := e.tokenFor(t, "customers:read", "campaigns:read")
		names := func(n int) string {
			return "[" + joined(n, ", ", func(i int) string { return `{nameContains: "n` + strconv.Itoa(i) + `"}` }) + "]"
		}
		idList := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = "cus_" + strconv.Itoa(i)
			}
			return out
		}
		ids := func(n int) string { return `["` + strings.Join(idList(n), `", "`) + `"]` }
		customers := func(where string) string { return `customers(where: ` + where + `) { totalCount }` }
		cases := []struct {
			name, query string
			vars        map[string]any
			code        string
		}{
			{"50 in an or", `{ ` + customers(`{or: `+names(50)+`}`) + ` }`, nil, ""},
			{"50 in an in", `{ ` + customers(`{idIn: `+ids(50)+`}`) + ` }`, nil, ""},
			{"51 in an or", `{ ` + customers(`{or: `+names(51)+`}`) + ` }`, nil, "query_too_complex"},
			{"51 in an and", `{ ` + customers(`{and: `+names(51)+`}`) + ` }`, nil, "query_too_complex"},
			{"51 in an in", `{ ` + customers(`{idIn: `+ids(51)+`}`) + ` }`, nil, "query_too_complex"},
			{"51 below a not", `{ ` + customers(`{not: {or: `+names(51)+`}}`) + ` }`, nil, "query_too_complex"},
			{"51 in another type's filter", `{ campaigns(where: {nameIn: ` + ids(51) + `}) { totalCount } }`, nil, "query_too_complex"},
			{"51 in an edge's filter", `{ customers(first: 1) { edges { node { segments(where: {idIn: ` + ids(51) + `}) { totalCount } } } } }`, nil, "query_too_complex"},
			{"51 through a variable", `query($w: CustomerWhereInput) { ` + customers(`$w`) + ` }`,
				map[string]any{"w": map[string]any{"idIn": idList(51)}}, "query_too_complex"},
			{"300 predicates", aliasedFields(6, customers(`{or: `+names(49)+`}`)), nil, ""},
			{"301 predicates in one filter", `{ ` + customers(`{and: [`+joined(50, ", ", func(int) string { return `{or: ` + names(5) + `}` })+`]}`) + ` }`, nil, "query_too_complex"},
			{"over 300 predicates across aliases", aliasedFields(7, customers(`{or: `+names(50)+`}`)), nil, "query_too_complex"},
			{"over 300 predicates through variables", `query($or: [CustomerWhereInput!]) ` + aliasedFields(7, customers(`{or: $or}`)),
				map[string]any{"or": func() []any {
					or := make([]any, 50)
					for i := range or {
						or[i] = map[string]any{"nameContains": "n" + strconv.Itoa(i)}
					}
					return or
				}()}, "query_too_complex"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, body := postGraphQL(t, e.TestEnv, token, tc.query, tc.vars)
				require.Equal(t, http.StatusOK, status, body)
				if tc.code == "" {
					require.Empty(t, gqlCodes(t, body), body)
					return
				}
				require.Equal(t, []string{tc.code}, gqlCodes(t, body), body)
				require.NotContains(t, body, `"data"`, "refused before execution")
			})
		}
	})
}
