package rest

import (
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

// webhookCreated is the 201 body of create: the endpoint with its secret,
// at its Location.
type webhookCreated struct {
	location
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

// readWebhook reads POST /v1/webhooks.
func readWebhook(b *binder) webhooks.WebhookInput {
	in, err := jsonBody[webhookBody](b).input()
	b.refuse(err)
	return in
}

func newWebhookJSON(ws *webhooks.WebhookSecret) webhookCreated {
	return webhookCreated{location: location("/v1/webhooks/" + ws.Endpoint.ID), webhookJSON: renderWebhook(ws.Endpoint), Secret: ws.Secret}
}

// webhookList is GET /v1/webhooks: every endpoint of the tenant (at most
// 20), oldest first.
func webhookList(eps []*ent.WebhookEndpoint) webhookListJSON {
	out := webhookListJSON{Data: make([]webhookJSON, 0, len(eps))}
	for _, ep := range eps {
		out.Data = append(out.Data, renderWebhook(ep))
	}
	return out
}

type webhookListJSON struct {
	Data []webhookJSON `json:"data"`
}

// readWebhookPatch reads PATCH /v1/webhooks/{id}, a JSON merge patch.
func readWebhookPatch(b *binder) onPath[webhooks.WebhookInput] {
	return onPath[webhooks.WebhookInput]{id: pathID(b), in: readWebhook(b)}
}

// renderRotated is the answer of POST /v1/webhooks/{id}/rotate-secret.
func renderRotated(ws *webhooks.WebhookSecret) webhookRotated {
	return webhookRotated{
		ID: ws.Endpoint.ID, Secret: ws.Secret, PreviousSecretExpiresAt: optTimestamp(ws.Endpoint.PreviousSecretExpiresAt),
	}
}

// deliveryPage is a page of GET /v1/webhooks/{id}/deliveries, newest
// first, each delivery with its attempts.
func deliveryPage(conn *ent.WebhookDeliveryConnection) listJSON[deliveryJSON] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.WebhookDeliveryEdge) deliveryJSON { return renderDelivery(e.Node) })
}

// readRedelivery reads POST
// /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver: 202, the delivery
// being pending again. A delivery of another endpoint is not found under
// this one.
func readRedelivery(b *binder) onPath[string] {
	return onPath[string]{id: pathID(b), in: b.path("delivery_id")}
}
