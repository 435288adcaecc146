package graph

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	gqlast "github.com/vektah/gqlparser/v2/ast"

	"github.com/fideliza/fideliza/graph/generated"
)

// entPrivacyReads are the GraphQL fields whose resolvers read ent directly
// instead of calling an operation of the application: ent privacy isolates
// the tenants and ent's schema keeps sealed and secret fields out of them
// (docs/decisions.md, "GraphQL reads through ent privacy").
var entPrivacyReads = []string{
	"Query.apiClients",
	"Query.auditEvents",
	"Query.campaigns",
	"Query.customers",
	"Query.events",
	"Query.node",
	"Query.nodes",
	"Query.pointsEntries",
	"Query.products",
	"Query.redemptions",
	"Query.sales",
	"Query.segments",
	"Query.stores",
	"Query.tenants",
	"Query.webhookDeliveries",
	"Query.webhookEndpoints",
}

// policyOf is the policy entry of a GraphQL root field ("Query.customers")
// or entity type ("Customer"): the scope it needs ("" a valid token only),
// and whether there is an entry. It reads the transport's tables
// (RootFieldScopes, TypeScopes); when the application declares the policy
// of each operation, it reads that table instead.
func policyOf(name string) (scope string, ok bool) {
	if strings.Contains(name, ".") {
		scope, ok = RootFieldScopes[name]
	} else {
		scope, ok = TypeScopes[name]
	}
	return scope, ok
}

// TestEntPrivacyReadsHaveAPolicy: the resolvers reading ent directly are
// exactly entPrivacyReads (a new one is a decision to record there); each
// has a policy entry, a list needs the scope of its nodes' type (as reading
// one of them by id does), and every type node and nodes can return has an
// entry.
func TestEntPrivacyReadsHaveAPolicy(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	require.Equal(t, entPrivacyReads, directEntReads(t, schema), "resolvers reading ent directly")
	for _, field := range entPrivacyReads {
		scope, ok := policyOf(field)
		require.Truef(t, ok, "%s reads ent without a policy entry", field)
		object, name, _ := strings.Cut(field, ".")
		def := schema.Types[object].Fields.ForName(name)
		nodeType, isConnection := strings.CutSuffix(def.Type.Name(), "Connection")
		if !isConnection {
			require.Equal(t, "Node", def.Type.Name(), "%s: a read of ent is a connection or a node", field)
			for _, entity := range schema.PossibleTypes["Node"] {
				_, ok := policyOf(entity.Name)
				require.Truef(t, ok, "%s can return %s, which has no policy entry", field, entity.Name)
			}
			continue
		}
		nodeScope, ok := policyOf(nodeType)
		require.Truef(t, ok, "%s lists %s, which has no policy entry", field, nodeType)
		require.Equalf(t, nodeScope, scope, "%s needs the scope of reading a %s by id", field, nodeType)
	}
}

// directEntReads returns, sorted, the fields ("Query.customers") whose
// resolver in graph/*.resolvers.go uses the resolver's ent client
// (r.client), found by reading the sources.
func directEntReads(t *testing.T, schema *gqlast.Schema) []string {
	t.Helper()
	files, err := filepath.Glob("*.resolvers.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var fields []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || !usesClient(fn) {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			require.True(t, ok, fn.Name.Name)
			resolver, ok := star.X.(*ast.Ident)
			require.True(t, ok, fn.Name.Name)
			object := []rune(strings.TrimSuffix(resolver.Name, "Resolver"))
			object[0] = unicode.ToUpper(object[0])
			def := schema.Types[string(object)]
			require.NotNilf(t, def, "%s resolves no type of the schema", resolver.Name)
			i := slices.IndexFunc(def.Fields, func(f *gqlast.FieldDefinition) bool {
				return strings.EqualFold(f.Name, fn.Name.Name)
			})
			require.GreaterOrEqualf(t, i, 0, "%s.%s resolves no field", resolver.Name, fn.Name.Name)
			fields = append(fields, def.Name+"."+def.Fields[i].Name)
		}
	}
	slices.Sort(fields)
	return fields
}

// usesClient tells whether fn's body uses r.client, r being its receiver.
func usesClient(fn *ast.FuncDecl) bool {
	if len(fn.Recv.List[0].Names) == 0 {
		return false
	}
	recv := fn.Recv.List[0].Names[0].Name
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "client" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == recv {
				found = true
			}
		}
		return !found
	})
	return found
}
