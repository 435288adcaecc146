package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
)

// webhookBody is the endpoint JSON of create and PATCH (a JSON merge
// patch: only the fields present change).
type webhookBody struct {
	URL         opt.Field[string]   `json:"url"`
	Events      opt.Field[[]string] `json:"events"`
	Description opt.Field[string]   `json:"description"`
	Active      opt.Field[bool]     `json:"active"`
}

// input translates the body. url, events and active cannot be cleared:
// null is refused; a null description clears it.
func (b webhookBody) input() (webhooks.WebhookInput, error) {
	var p apperr.Problems
	notNull := func(field string, null bool) {
		if null {
			p.Add(field, "must not be null")
		}
	}
	notNull("url", b.URL.Null)
	notNull("events", b.Events.Null)
	notNull("active", b.Active.Null)
	in := webhooks.WebhookInput{URL: b.URL.Ptr(), Description: b.Description.Ptr(), Active: b.Active.Ptr()}
	if b.Events.Present() {
		in.EventTypes = b.Events.Value
		if in.EventTypes == nil {
			in.EventTypes = []string{}
		}
	}
	if b.Description.Null {
		empty := ""
		in.Description = &empty
	}
	return in, p.Err()
}

// webhookJSON is an endpoint as every answer shows it, never with its
// secret.
type webhookJSON struct {
	ID                      string   `json:"id"`
	URL                     string   `json:"url"`
	Events                  []string `json:"events"`
	Description             string   `json:"description"`
	Active                  bool     `json:"active"`
	CreatedAt               string   `json:"created_at"`
	UpdatedAt               string   `json:"updated_at"`
	PreviousSecretExpiresAt *string  `json:"previous_secret_expires_at"`
}

// webhookCreated is the 201 body of create: the endpoint with its secret.
type webhookCreated struct {
	webhookJSON
	Secret string `json:"secret"`
}

// webhookRotated is the body of rotate-secret.
type webhookRotated struct {
	ID                      string  `json:"id"`
	Secret                  string  `json:"secret"`
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
}

type deliveryJSON struct {
	ID             string        `json:"id"`
	EventID        string        `json:"event_id"`
	EventType      string        `json:"event_type"`
	Status         string        `json:"status"`
	Attempts       int           `json:"attempts"`
	LastStatusCode *int          `json:"last_status_code"`
	LastError      *string       `json:"last_error"`
	NextAttemptAt  *string       `json:"next_attempt_at"`
	CompletedAt    *string       `json:"completed_at"`
	CreatedAt      string        `json:"created_at"`
	AttemptLog     []attemptJSON `json:"attempt_log"`
}

type attemptJSON struct {
	AttemptedAt     string  `json:"attempted_at"`
	StatusCode      *int    `json:"status_code"`
	LatencyMS       int64   `json:"latency_ms"`
	Error           *string `json:"error"`
	ResponseExcerpt string  `json:"response_excerpt"`
}

func renderWebhook(ep *ent.WebhookEndpoint) webhookJSON {
	return webhookJSON{
		ID: ep.ID, URL: ep.URL, Events: orEmpty(ep.EventTypes), Description: ep.Description, Active: ep.Active,
		CreatedAt: timestamp(ep.CreatedAt), UpdatedAt: timestamp(ep.UpdatedAt),
		PreviousSecretExpiresAt: optTimestamp(ep.PreviousSecretExpiresAt),
	}
}

// renderDelivery renders a delivery with the attempts loaded with it.
func renderDelivery(d *ent.WebhookDelivery) deliveryJSON {
	out := deliveryJSON{
		ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: string(d.Status), Attempts: d.Attempts,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError, NextAttemptAt: optTimestamp(d.NextAttemptAt),
		CompletedAt: optTimestamp(d.CompletedAt), CreatedAt: timestamp(d.CreatedAt),
		AttemptLog: make([]attemptJSON, 0, len(d.Edges.AttemptLog)),
	}
	for _, a := range d.Edges.AttemptLog {
		out.AttemptLog = append(out.AttemptLog, attemptJSON{
			AttemptedAt: timestamp(a.AttemptedAt), StatusCode: a.StatusCode, LatencyMS: a.LatencyMs,
			Error: a.Error, ResponseExcerpt: a.ResponseExcerpt,
		})
	}
	return out
}

// createWebhook is POST /v1/webhooks.
func (s *server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var body webhookBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	in, err := body.input()
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	ws, err := s.app.Webhooks.CreateWebhookEndpoint(r.Context(), in)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/webhooks/"+ws.Endpoint.ID)
	writeJSON(w, http.StatusCreated, webhookCreated{webhookJSON: renderWebhook(ws.Endpoint), Secret: ws.Secret})
}

// listWebhooks is GET /v1/webhooks: every endpoint of the tenant (at most
// 20), oldest first.
func (s *server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	eps, err := s.app.Webhooks.WebhookEndpoints(r.Context())
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	items := make([]webhookJSON, 0, len(eps))
	for _, ep := range eps {
		items = append(items, renderWebhook(ep))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": items})
}

// getWebhook is GET /v1/webhooks/{id}.
func (s *server) getWebhook(w http.ResponseWriter, r *http.Request) {
	ep, err := s.app.Webhooks.WebhookEndpoint(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, renderWebhook(ep))
}

// patchWebhook is PATCH /v1/webhooks/{id}, a JSON merge patch.
func (s *server) patchWebhook(w http.ResponseWriter, r *http.Request) {
	var body webhookBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	in, err := body.input()
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	ep, err := s.app.Webhooks.UpdateWebhookEndpoint(r.Context(), chi.URLParam(r, "id"), in)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, renderWebhook(ep))
}

// deleteWebhook is DELETE /v1/webhooks/{id}: 204, with the delivery log gone.
func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.app.Webhooks.DeleteWebhookEndpoint(r.Context(), chi.URLParam(r, "id")); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rotateWebhookSecret is POST /v1/webhooks/{id}/rotate-secret.
func (s *server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	ws, err := s.app.Webhooks.RotateWebhookSecret(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookRotated{
		ID: ws.Endpoint.ID, Secret: ws.Secret, PreviousSecretExpiresAt: optTimestamp(ws.Endpoint.PreviousSecretExpiresAt),
	})
}

// listWebhookDeliveries is GET /v1/webhooks/{id}/deliveries, newest first,
// each with its attempts.
func (s *server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	var problems apperr.Problems
	after, limit := pageQuery(r.URL.Query(), "dlv_", &problems)
	if err := problems.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	conn, err := s.app.Webhooks.WebhookDeliveries(r.Context(), chi.URLParam(r, "id"), after, limit)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	items := make([]deliveryJSON, 0, len(conn.Edges))
	for _, e := range conn.Edges {
		items = append(items, renderDelivery(e.Node))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": items, "pagination": newPagination(conn.PageInfo, conn.TotalCount)})
}

// redeliverWebhook is POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver:
// 202, the delivery being pending again. A delivery of another endpoint is
// not found under this one.
func (s *server) redeliverWebhook(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d, err := s.app.Webhooks.RedeliverWebhook(ctx, chi.URLParam(r, "id"), chi.URLParam(r, "delivery_id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, renderDelivery(d))
}
