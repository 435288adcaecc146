package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/graph/generated"
)

// TestConnectionsNeedTheirNodesScope: a root field listing entities (a
// connection of an entity type) needs the scope of reading one of them by
// id, so a list shows no more than node would; both come from the rules of
// the operations they call (the XConnection operations, nodes.TypeRules).
func TestConnectionsNeedTheirNodesScope(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	lists := 0
	for _, f := range schema.Types["Query"].Fields {
		nodeType, isConnection := strings.CutSuffix(f.Type.Name(), "Connection")
		if _, entity := TypeScopes[nodeType]; !isConnection || !entity {
			continue
		}
		lists++
		scope, ok := RootFieldScopes["Query."+f.Name]
		require.Truef(t, ok, "Query.%s has no scope", f.Name)
		require.Equalf(t, TypeScopes[nodeType], scope, "Query.%s needs the scope of reading a %s by id", f.Name, nodeType)
	}
	require.GreaterOrEqual(t, lists, 14, "the connections of the schema were found")
}
