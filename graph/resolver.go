// Package graph is the application layer: the gqlgen resolvers and the
// operations that GraphQL, the REST adapters, the CLI and the workers share.
package graph

import (
	"context"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/graph/generated"
)

// Limits of a GraphQL request.
const (
	maxComplexity = 1000
	maxBodyBytes  = 1 << 20
)

// Resolver is the root resolver.
type Resolver struct {
	app    *App
	client *ent.Client
}

// NewHandler returns the GraphQL HTTP handler: POST and GET transports only,
// a bounded query cache, a complexity limit and introspection. Mutations
// call the operations REST calls, which open their own transactions (with
// the *sql.Tx River enqueues in), so the handler opens none.
func NewHandler(app *App) http.Handler {
	srv := handler.New(generated.NewExecutableSchema(generated.Config{
		Resolvers: &Resolver{app: app, client: app.DB.Ent},
	}))
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.FixedComplexityLimit(maxComplexity))
	srv.AroundRootFields(authorizeRootField)
	srv.AroundFields(authorizeField)
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, app.Log, err)
	})
	return http.TimeoutHandler(http.MaxBytesHandler(srv, maxBodyBytes), 30*time.Second, `{"errors":[{"message":"request timed out"}]}`)
}
