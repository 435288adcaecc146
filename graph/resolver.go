// Package graph is the application layer: the gqlgen resolvers and the
// operations that GraphQL and the REST adapters share.
package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/graph/generated"
)

// Resolver is the root resolver; it holds the dependencies of every operation.
type Resolver struct {
	client *ent.Client
}

// NewSchema returns the executable schema over client.
func NewSchema(client *ent.Client) graphql.ExecutableSchema {
	return generated.NewExecutableSchema(generated.Config{
		Resolvers: &Resolver{client: client},
	})
}
