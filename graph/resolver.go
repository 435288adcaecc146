// Package graph is the GraphQL transport: gqlgen's resolvers, inputs,
// limits, paging and scopes. Every resolver translates and calls one
// operation of package app, the connections and node reads too (entgql's
// arguments passed through); only the edges between entities are resolved
// by entgql's generated code, below the scopes of TypeScopes.
package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/graph/generated"
)

// Config is the GraphQL transport's own configuration.
type Config struct {
	// NoIntrospection turns introspection off for every caller.
	NoIntrospection bool
	// Subscriptions bound the WebSocket connections of subscriptions.
	Subscriptions SubscriptionLimits
	// ClientAddress is the key of a request's client address (the rate
	// limits' own), by which connections not yet acknowledged are
	// counted; nil counts them all together.
	ClientAddress func(*http.Request) string
	// Trusted, when set, are the only documents that run (trusted mode);
	// without it any document runs, and automatic persisted queries are
	// remembered in a bounded cache.
	Trusted *TrustedDocuments
}

// Resolver is the root resolver.
type Resolver struct {
	app *app.App
}

// NewHandler returns the GraphQL HTTP handler, its parts chosen one by one
// (not gqlgen's default server): POST and GET transports, and WebSocket
// for subscriptions, a bounded query cache, persisted documents
// (documents.go), limits on the document's size (precheck.go), complexity,
// depth, aliases and body size, the same for every transport and every
// document however it arrives, and introspection unless
// cfg.NoIntrospection. Mutations call the operations
// REST calls, which open their own transactions (with the *sql.Tx River
// enqueues in), so the handler opens none.
func NewHandler(app *app.App, cfg Config) http.Handler {
	srv := handler.New(pagedComplexity{generated.NewExecutableSchema(generated.Config{
		Resolvers: &Resolver{app: app},
	})})
	srv.AddTransport(overHTTP{})
	live := &subscriptions{app: app, limits: cfg.Subscriptions.withDefaults(), address: cfg.ClientAddress}
	if live.address == nil {
		live.address = func(*http.Request) string { return "" }
	}
	srv.AddTransport(live.transport())
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(maxTokens)
	for _, ext := range persistedDocuments(cfg.Trusted) {
		srv.Use(ext)
	}
	srv.Use(documentBounds{}) // after the persisted documents: on the document they find
	if !cfg.NoIntrospection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(shapeLimit{})
	srv.Use(extension.FixedComplexityLimit(maxComplexity))
	srv.AroundOperations(withPerformancePages)
	srv.AroundRootFields(authorizeRootField)
	srv.AroundFields(checkField)
	srv.SetErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		return presentError(ctx, app.Log, err)
	})
	requests := http.TimeoutHandler(limitBody(srv), 30*time.Second, `{"errors":[{"message":"request timed out","extensions":{"code":"timeout"}}]}`)
	ws := live.serve(srv)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" { // subscriptions: a connection, not a request
			ws.ServeHTTP(w, r)
			return
		}
		requests.ServeHTTP(w, r)
	})
}

// limitBody reads a request's body before gqlgen does and refuses one over
// maxBodyBytes with 413 and a GraphQL error of its own code; gqlgen would
// report the cut-off body as an internal error.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			status, code, msg := http.StatusBadRequest, "invalid_request", "the request body could not be read"
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				status, code, msg = http.StatusRequestEntityTooLarge, "request_too_large",
					fmt.Sprintf("the request body is over %d bytes", maxBodyBytes)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []*gqlerror.Error{{
				Message: msg, Extensions: map[string]any{"code": code},
			}}})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// deref returns what p points to, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
