package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/graph/generated"
)

// TestEverySubscriptionHasAScope: each subscription field is in
// SubscriptionScopes, which names no other field.
func TestEverySubscriptionHasAScope(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	fields := map[string]bool{}
	for _, f := range schema.Types["Subscription"].Fields {
		fields[f.Name] = true
		require.Containsf(t, SubscriptionScopes, f.Name, "Subscription.%s has no scope in SubscriptionScopes", f.Name)
	}
	for name := range SubscriptionScopes {
		require.Truef(t, fields[name], "SubscriptionScopes names %s, which is not in the schema", name)
	}
}
