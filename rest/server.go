// Package rest serves the documented REST paths over chi. Handlers only
// translate the documented JSON and errors; the rules live behind graph.
package rest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/openapi"
	"github.com/fideliza/fideliza/panel"
	"github.com/fideliza/fideliza/playground"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/tracing"
)

type server struct {
	app    *app.App
	log    *slog.Logger
	limits *limits
	gql    http.Handler
	scrape http.Handler // GET /metrics
	// origins are the installation's CORS origins (Config.CORSOrigins).
	origins map[string]bool
}

// Config is the HTTP interface's own configuration.
type Config struct {
	// NoIntrospection turns GraphQL introspection off for every caller (it
	// is on for the playground and analysts' tools unless an operator says
	// otherwise).
	NoIntrospection bool
	// RateLimits are the request quotas (per client, per tenant, per IP);
	// the zero value is the defaults.
	RateLimits ratelimit.Config
	// Metrics counts requests and is what GET /metrics serves (give the
	// application and the workers the same registry to serve their counts
	// too); nil: a registry of its own.
	Metrics *metrics.Registry
	// CORSOrigins are the origins (scheme://host[:port]) of back-office web
	// apps allowed to call the API from a browser, for every tenant; each
	// tenant adds its own (docs/backoffice.md). One that backoffice.CORSOrigin
	// refuses is ignored: check them before.
	CORSOrigins []string
	// Subscriptions bound GraphQL subscriptions' WebSocket connections.
	Subscriptions graph.SubscriptionLimits
	// TrustedDocuments, when set, are the only GraphQL documents clients
	// may run (graph.Config.Trusted).
	TrustedDocuments *graph.TrustedDocuments
}

// NewHandler returns the HTTP interface of the service.
func NewHandler(a *app.App, log *slog.Logger, cfg Config) http.Handler {
	s := &server{app: a, log: log, limits: newLimits(a, cfg.RateLimits)}
	s.origins = map[string]bool{}
	for _, o := range cfg.CORSOrigins {
		if n, err := backoffice.CORSOrigin(o); err == nil {
			s.origins[n] = true
		}
	}
	reg := cfg.Metrics
	if reg == nil {
		reg = metrics.New()
	}
	if a.DB != nil {
		reg.WatchQueue(a.DB.Reads)
	}
	r := chi.NewRouter()
	r.Use(correlate, accessLog(log), reg.HTTP, recoverer(log, internalV1), s.cors)
	if tracing.Enabled() {
		r.Use(traceRoute)
	}

	for _, rt := range s.publicRoutes() {
		mount(r, rt)
	}
	for _, rt := range s.bearerRoutes() {
		s.protected(r, rt)
	}
	r.Route(posPrefix, s.mountPOS)

	gcfg := graph.Config{NoIntrospection: cfg.NoIntrospection, Subscriptions: cfg.Subscriptions, ClientAddress: clientIP,
		Trusted: cfg.TrustedDocuments}
	s.gql, s.scrape = graph.NewHandler(a, gcfg), reg.Handler(log)
	pg := playground.Config{GraphQLPath: "/graphql"}
	if a.Auth.CanSignIn() {
		pg.LoginURL = "/auth/login?return_to=/playground"
	}
	r.Mount("/playground", playground.Handler(pg))
	r.Mount("/panel", panel.Handler(a, log))
	r.Mount("/openapi", openapi.Handler()) // the OpenAPI documents and their reference page
	// Outermost: the access log's line carries the request's trace.
	return tracing.Handler(r)
}

// metrics serves Prometheus' scrape (docs/metrics.md).
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	s.scrape.ServeHTTP(w, r)
}

// graphql serves GraphQL; each field checks its own scope.
func (s *server) graphql(w http.ResponseWriter, r *http.Request) { s.gql.ServeHTTP(w, r) }

// healthz says the process is up.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, healthJSON{Status: "ok"})
}

// readyz says whether requests can be served: the database answers and its
// schema is current.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.app.DB.Ready(ctx); err != nil {
		s.log.WarnContext(ctx, "not ready", "error", err)
		reason := err.Error()
		writeJSON(w, http.StatusServiceUnavailable, healthJSON{Reason: &reason, Status: "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, healthJSON{Status: "ready"})
}

// healthJSON is the answer of /healthz and /readyz; its fields are in the
// order of their names.
type healthJSON struct {
	Reason *string `json:"reason,omitempty"`
	Status string  `json:"status"`
}
