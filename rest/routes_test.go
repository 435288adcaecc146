package rest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/graph/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// scopeServer is a served app with one OAuth client of every scope.
type scopeServer struct {
	srv    *httptest.Server
	app    *graph.App
	client *graph.ClientCredentials
}

func newScopeServer(t testing.TB, db *storage.DB) *scopeServer {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	app := &graph.App{DB: db, Log: log}
	srv := httptest.NewUnstartedServer(nil)
	app.Auth = auth.NewService(db.Ent, "http://"+srv.Listener.Addr().String(), "fideliza")
	srv.Config.Handler = NewHandler(app, log)
	srv.Start()
	t.Cleanup(srv.Close)
	ctx := viewer.SystemContext(context.Background())
	tn, err := app.CreateTenant(ctx, "Escopos", nil)
	require.NoError(t, err)
	c, err := app.CreateClient(ctx, tn.ID, apiclient.KindOauth, "all", nil)
	require.NoError(t, err)
	return &scopeServer{srv: srv, app: app, client: c}
}

// tokenWith issues a token holding only scope.
func (s *scopeServer) tokenWith(t testing.TB, scope string) string {
	t.Helper()
	tok, err := s.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: s.client.Client.ID, ClientSecret: s.client.Secret, Scope: scope,
	})
	require.NoError(t, err)
	return tok.AccessToken
}

// otherScope returns a scope that is not scope.
func otherScope(scope string) string {
	if scope == "loyalty:read" {
		return "loyalty:write"
	}
	return "loyalty:read"
}

// TestEveryRouteHasAScope walks the router: each route is public or in
// RouteScopes, and each RouteScopes entry is mounted.
func TestEveryRouteHasAScope(t *testing.T) {
	t.Parallel()
	s := newScopeServer(t, storagetest.Open(t, "sqlite3"))
	mounted := map[string]bool{}
	err := chi.Walk(s.srv.Config.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := method + " " + route
		mounted[key] = true
		_, scoped := RouteScopes[key]
		require.Truef(t, scoped || PublicRoutes[key] || POSRoutes[key], "route %s is neither public, POS nor in RouteScopes", key)
		return nil
	})
	require.NoError(t, err)
	for key := range RouteScopes {
		require.Truef(t, mounted[key], "RouteScopes names %s, which is not mounted", key)
	}
	for key := range PublicRoutes {
		require.Truef(t, mounted[key], "PublicRoutes names %s, which is not mounted", key)
	}
	for key := range POSRoutes {
		require.Truef(t, mounted[key], "POSRoutes names %s, which is not mounted", key)
	}
}

// TestScopeMatrix calls every scoped route with a token lacking its scope
// (403 naming it) and with a token holding it (not 401/403).
func TestScopeMatrix(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		for key, scope := range RouteScopes {
			if scope == "" {
				continue // GraphQL: field scopes, see TestGraphQLScopeMatrix
			}
			method, route, _ := strings.Cut(key, " ")
			path := strings.ReplaceAll(route, "{id}", "cus_00000000000000000000000000")
			t.Run(key, func(t *testing.T) {
				call := func(token string) (int, map[string]any) {
					req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(`{}`))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					var body map[string]any
					raw, _ := io.ReadAll(resp.Body)
					_ = json.Unmarshal(raw, &body)
					return resp.StatusCode, body
				}
				status, body := call(s.tokenWith(t, otherScope(scope)))
				require.Equal(t, http.StatusForbidden, status, body)
				require.Equal(t, "insufficient_scope", body["error"])
				require.Contains(t, body["error_description"], scope)

				status, body = call(s.tokenWith(t, scope))
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status, body)
			})
		}
	})
}

// graphQLProbes is one query per root field; a field of RootFieldScopes
// without a probe fails TestGraphQLScopeMatrix.
var graphQLProbes = map[string]string{
	"Query.node":              `{ node(id: "cus_00000000000000000000000000") { id } }`,
	"Query.nodes":             `{ nodes(ids: ["cus_00000000000000000000000000"]) { id } }`,
	"Query.tenants":           `{ tenants { totalCount } }`,
	"Query.stores":            `{ stores { totalCount } }`,
	"Query.apiClients":        `{ apiClients { totalCount } }`,
	"Query.customers":         `{ customers { totalCount } }`,
	"Query.customerSearch":    `{ customerSearch(search: "ana") { totalCount } }`,
	"Query.segments":          `{ segments { totalCount } }`,
	"Query.campaigns":         `{ campaigns { totalCount } }`,
	"Mutation.createCustomer": `mutation { createCustomer(input: {name: "Ana", email: "ana@example.com", cpf: "52998224725"}) { id } }`,
	"Mutation.updateCustomer": `mutation { updateCustomer(id: "cus_00000000000000000000000000", input: {name: "Ana"}) { id } }`,
	"Query.pointsLiability":   `{ pointsLiability { total } }`,
	"Mutation.createCampaign": `mutation { createCampaign(input: {name: "x", type: gift, giftSku: "G", startsAt: "2026-01-01T00:00:00Z", endsAt: "2099-01-01T00:00:00Z"}) { id } }`,
	"Mutation.pauseCampaign":  `mutation { pauseCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.resumeCampaign": `mutation { resumeCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.endCampaign":    `mutation { endCampaign(id: "cmp_00000000000000000000000000") { id } }`,
	"Mutation.validateCart":   `mutation { validateCart(input: {customerID: "cus_00000000000000000000000000", items: [{sku: "A", quantity: "1", unitPrice: "10"}]}) { validationToken } }`,
	"Mutation.redeemCampaign": `mutation { redeemCampaign(input: {campaignID: "cmp_00000000000000000000000000", customerID: "cus_00000000000000000000000000", orderID: "o", validationToken: "vtk_x", amountPaid: "10"}) { id } }`,
	"Query.sales":             `{ sales { totalCount } }`,
	"Query.redemptions":       `{ redemptions { totalCount } }`,
	"Mutation.creditPoints":   `mutation { creditPoints(input: {customerID: "cus_00000000000000000000000000", orderID: "o-1", points: 10}) { replayed } }`,
	"Mutation.debitPoints":    `mutation { debitPoints(input: {customerID: "cus_00000000000000000000000000", points: 10}) { replayed } }`,
	"Mutation.adjustPoints":   `mutation { adjustPoints(input: {customerID: "cus_00000000000000000000000000", points: 10, reason: "gift"}) { replayed } }`,
}

func TestGraphQLScopeMatrix(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		for field, scope := range graph.RootFieldScopes {
			query, ok := graphQLProbes[field]
			require.Truef(t, ok, "no probe for %s", field)
			t.Run(field, func(t *testing.T) {
				call := func(token string) []map[string]any {
					body, _ := json.Marshal(map[string]string{"query": query})
					req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/graphql", strings.NewReader(string(body)))
					require.NoError(t, err)
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					var out struct {
						Errors []map[string]any `json:"errors"`
					}
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
					return out.Errors
				}
				codes := func(errs []map[string]any) []any {
					var cs []any
					for _, e := range errs {
						ext, _ := e["extensions"].(map[string]any)
						cs = append(cs, ext["code"])
					}
					return cs
				}
				switch scope {
				case "":
					require.NotContains(t, codes(call(s.tokenWith(t, "loyalty:read"))), "insufficient_scope")
				case graph.ScopeBackoffice, graph.ScopeBackofficeWrite:
					// OAuth clients can never hold it: only back-office users.
					require.Contains(t, codes(call(s.tokenWith(t, strings.Join(auth.Scopes, " ")))), "insufficient_scope")
				default:
					errs := call(s.tokenWith(t, otherScope(scope)))
					require.Contains(t, codes(errs), "insufficient_scope")
					require.Contains(t, errs[0]["message"], scope)
					require.NotContains(t, codes(call(s.tokenWith(t, scope))), "insufficient_scope")
				}
			})
		}
	})
}

// TestGraphQLFieldScopes: a field below the root guarded by FieldScopes is
// refused without its scope even when the root field is allowed.
func TestGraphQLFieldScopes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newScopeServer(t, db)
		ctx := viewer.TenantContext(context.Background(), s.client.Client.TenantID)
		_, err := s.app.CreateCustomer(ctx, graph.CustomerInput{
			Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725"),
		})
		require.NoError(t, err)
		query := `{ customers { edges { node { name pointsEntries { totalCount } } } } }`
		for field, scope := range graph.FieldScopes {
			require.Equal(t, "Customer.pointsEntries", field, "add a probe for %s", field)
			call := func(token string) string {
				body, _ := json.Marshal(map[string]string{"query": query})
				req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/graphql", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return string(raw)
			}
			without := call(s.tokenWith(t, "customers:read"))
			require.Contains(t, without, "insufficient_scope")
			require.Contains(t, without, scope)
			with := call(s.tokenWith(t, "customers:read "+scope))
			require.NotContains(t, with, "insufficient_scope")
			require.Contains(t, with, `"totalCount":0`)
		}
	})
}
