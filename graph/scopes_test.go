package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/graph/generated"
)

// TestEveryRootFieldHasAScope fails when a query or mutation is added to the
// schema without an entry in RootFieldScopes, or an entry names no field.
func TestEveryRootFieldHasAScope(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	seen := map[string]bool{}
	for _, def := range []string{"Query", "Mutation"} {
		for _, f := range schema.Types[def].Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			key := def + "." + f.Name
			seen[key] = true
			_, ok := RootFieldScopes[key]
			require.Truef(t, ok, "%s has no scope in RootFieldScopes", key)
		}
	}
	for key := range RootFieldScopes {
		require.Truef(t, seen[key], "RootFieldScopes names %s, which is not in the schema", key)
	}
}

// TestEveryEntityTypeHasAScope: each type implementing Node is in
// TypeScopes, so its edges and node lookups are guarded, and TypeScopes
// names no other type.
func TestEveryEntityTypeHasAScope(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	entities := map[string]bool{}
	for _, def := range schema.PossibleTypes["Node"] {
		entities[def.Name] = true
		_, ok := TypeScopes[def.Name]
		require.Truef(t, ok, "entity type %s has no scope in TypeScopes", def.Name)
	}
	for name := range TypeScopes {
		require.Truef(t, entities[name], "TypeScopes names %s, which is no entity type", name)
	}
}
