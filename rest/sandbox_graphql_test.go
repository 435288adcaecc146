package rest_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/schema/pid"
)

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
