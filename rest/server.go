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
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/openapi"
	"github.com/fideliza/fideliza/panel"
	"github.com/fideliza/fideliza/playground"
)

type server struct {
	app    *app.App
	log    *slog.Logger
	limits *limits
}

// NewHandler returns the HTTP interface of the service.
func NewHandler(a *app.App, log *slog.Logger) http.Handler {
	s := &server{app: a, log: log, limits: newLimits(a.RateLimits)}
	if a.Metrics == nil {
		a.Metrics = metrics.New()
	}
	if a.DB != nil {
		a.Metrics.WatchQueue(a.DB.Reads)
	}
	r := chi.NewRouter()
	r.Use(correlate, accessLog(log), a.Metrics.HTTP, recoverer(log, internalV1))

	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	// Prometheus metrics (docs/metrics.md); not for the public internet.
	r.Get("/metrics", a.Metrics.Handler(log).ServeHTTP)

	r.Post("/auth/token", s.token)
	r.Get("/.well-known/openid-configuration", s.discovery)
	r.Get("/.well-known/jwks.json", s.jwks)

	gql := graph.NewHandler(a)
	s.protected(r, http.MethodGet, "/graphql", gql.ServeHTTP)
	s.protected(r, http.MethodPost, "/graphql", gql.ServeHTTP)
	r.Get("/auth/login", s.startSignIn)
	r.Get(auth.SignInPath, s.finishSignIn)
	pg := playground.Config{GraphQLPath: "/graphql"}
	if a.Auth.CanSignIn() {
		pg.LoginURL = "/auth/login?return_to=/playground"
	}
	r.Mount("/playground", playground.Handler(pg))
	r.Mount("/panel", panel.Handler(a, log))
	r.Mount("/openapi", openapi.Handler()) // the OpenAPI documents and their reference page

	s.protected(r, http.MethodGet, "/v1/customers", s.listCustomers)
	s.protected(r, http.MethodPost, "/v1/customers", s.createCustomer)
	s.protected(r, http.MethodGet, "/v1/customers/{id}", s.getCustomer)
	s.protected(r, http.MethodPut, "/v1/customers/{id}", s.replaceCustomer)
	s.protected(r, http.MethodPatch, "/v1/customers/{id}", s.patchCustomer)

	s.protected(r, http.MethodGet, "/v1/campaigns", s.listCampaigns)
	s.protected(r, http.MethodPost, "/v1/campaigns", s.createCampaign)
	s.protected(r, http.MethodPost, "/v1/campaigns/validate", s.validateCart)
	s.protected(r, http.MethodGet, "/v1/campaigns/{id}", s.getCampaign)
	s.protected(r, http.MethodDelete, "/v1/campaigns/{id}", s.endCampaign)
	s.protected(r, http.MethodPost, "/v1/campaigns/{id}/redeem", s.redeemCampaign)

	s.protected(r, http.MethodPost, "/v1/webhooks", s.createWebhook)
	s.protected(r, http.MethodGet, "/v1/webhooks", s.listWebhooks)
	s.protected(r, http.MethodGet, "/v1/webhooks/{id}", s.getWebhook)
	s.protected(r, http.MethodPatch, "/v1/webhooks/{id}", s.patchWebhook)
	s.protected(r, http.MethodDelete, "/v1/webhooks/{id}", s.deleteWebhook)
	s.protected(r, http.MethodPost, "/v1/webhooks/{id}/rotate-secret", s.rotateWebhookSecret)
	s.protected(r, http.MethodGet, "/v1/webhooks/{id}/deliveries", s.listWebhookDeliveries)
	s.protected(r, http.MethodPost, "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", s.redeliverWebhook)

	r.Route("/api/v1/tenants/{tenantId}", s.posRoutes)

	// The document gives /points/credit without the version prefix; every
	// points path is served with and without it.
	for _, prefix := range []string{"", "/v1"} {
		s.protected(r, http.MethodPost, prefix+"/points/credit", s.creditPoints)
		s.protected(r, http.MethodPost, prefix+"/points/debit", s.debitPoints)
		s.protected(r, http.MethodGet, prefix+"/points/balance/{customer_id}", s.pointsBalance)
		s.protected(r, http.MethodGet, prefix+"/points/statement/{customer_id}", s.pointsStatement)
	}
	return r
}

// healthz says the process is up.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether requests can be served: the database answers and its
// schema is current.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.app.DB.Ready(ctx); err != nil {
		s.log.WarnContext(ctx, "not ready", "error", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
