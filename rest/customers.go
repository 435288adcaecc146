package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
)

// customerJSON is the full customer record of the document.
type customerJSON struct {
	ID            string       `json:"id"`
	ExternalID    *string      `json:"external_id"`
	Name          string       `json:"name"`
	Email         *string      `json:"email"`
	CPF           string       `json:"cpf"`
	Phone         *string      `json:"phone"`
	BirthDate     *string      `json:"birth_date"`
	Gender        *string      `json:"gender"`
	Address       *addressJSON `json:"address"`
	Level         string       `json:"level"`
	PointsBalance int64        `json:"points_balance"`
	LifetimeValue json.Number  `json:"lifetime_value"`
	Segments      []string     `json:"segments"`
	Consent       consentJSON  `json:"consent"`
	CreatedAt     string       `json:"created_at"`
	UpdatedAt     string       `json:"updated_at"`
}

type addressJSON struct {
	Street  *string `json:"street"`
	City    *string `json:"city"`
	State   *string `json:"state"`
	ZipCode *string `json:"zip_code"`
}

type consentJSON struct {
	MarketingEmail    bool    `json:"marketing_email"`
	MarketingSMS      bool    `json:"marketing_sms"`
	MarketingWhatsApp bool    `json:"marketing_whatsapp"`
	DataSharing       bool    `json:"data_sharing"`
	UpdatedAt         *string `json:"updated_at"`
}

// customerListItem is an item of the list response.
type customerListItem struct {
	ID            string   `json:"id"`
	ExternalID    *string  `json:"external_id"`
	Name          string   `json:"name"`
	Email         *string  `json:"email"`
	CPF           string   `json:"cpf"`
	Phone         *string  `json:"phone"`
	Level         string   `json:"level"`
	PointsBalance int64    `json:"points_balance"`
	Segments      []string `json:"segments"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

// customerCreated is the 201 body of create.
type customerCreated struct {
	ID         string  `json:"id"`
	ExternalID *string `json:"external_id"`
	Name       string  `json:"name"`
	Email      *string `json:"email"`
	CreatedAt  string  `json:"created_at"`
}

// timestamp renders a time in ISO 8601 with its offset (UTC), with the
// fraction of a second that is stored, so created_after=<a rendered
// created_at> excludes that record.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// optTimestamp renders an optional instant; nil stays null.
func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

func segmentIDs(c *ent.Customer) []string {
	ids := make([]string, 0, len(c.Edges.Segments))
	for _, s := range c.Edges.Segments {
		ids = append(ids, s.ID)
	}
	return ids
}

func fullCustomer(c *ent.Customer) customerJSON {
	out := customerJSON{
		ID: c.ID, ExternalID: c.ExternalID, Name: c.Name, Email: c.Email, CPF: customers.MaskedDocument(c),
		Phone: c.Phone, BirthDate: c.BirthDate, Level: string(c.Level), PointsBalance: c.PointsBalance,
		LifetimeValue: json.Number(c.LifetimeValue.String()), Segments: segmentIDs(c),
		Consent: consentJSON{MarketingEmail: c.ConsentMarketingEmail, MarketingSMS: c.ConsentMarketingSms,
			MarketingWhatsApp: c.ConsentMarketingWhatsapp, DataSharing: c.ConsentDataSharing},
		CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
	}
	if c.Gender != nil {
		g := string(*c.Gender)
		out.Gender = &g
	}
	if c.AddressStreet != nil || c.AddressCity != nil || c.AddressState != nil || c.AddressZipCode != nil {
		out.Address = &addressJSON{Street: c.AddressStreet, City: c.AddressCity, State: c.AddressState, ZipCode: c.AddressZipCode}
	}
	out.Consent.UpdatedAt = optTimestamp(c.ConsentUpdatedAt)
	return out
}

// createCustomer is POST /v1/customers.
func (s *server) createCustomer(w http.ResponseWriter, r *http.Request) {
	var body customers.CustomerInput
	if !s.decodeV1(w, r, &body) {
		return
	}
	c, err := s.app.Customers.CreateCustomer(r.Context(), body)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/customers/"+c.ID)
	writeJSON(w, http.StatusCreated, customerCreated{
		ID: c.ID, ExternalID: c.ExternalID, Name: c.Name, Email: c.Email, CreatedAt: timestamp(c.CreatedAt),
	})
}

// getCustomer is GET /v1/customers/{id}.
func (s *server) getCustomer(w http.ResponseWriter, r *http.Request) {
	c, err := s.app.Customers.Customer(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fullCustomer(c))
}

// replaceCustomer is PUT /v1/customers/{id}.
func (s *server) replaceCustomer(w http.ResponseWriter, r *http.Request) {
	s.writeCustomer(w, r, s.app.Customers.ReplaceCustomer)
}

// patchCustomer is PATCH /v1/customers/{id}, a JSON merge patch.
func (s *server) patchCustomer(w http.ResponseWriter, r *http.Request) {
	s.writeCustomer(w, r, s.app.Customers.PatchCustomer)
}

// writeCustomer decodes a customer body, applies it to the customer of the
// path with op, and answers the full record.
func (s *server) writeCustomer(w http.ResponseWriter, r *http.Request,
	op func(context.Context, string, customers.CustomerInput) (*ent.Customer, error)) {
	var body customers.CustomerInput
	if !s.decodeV1(w, r, &body) {
		return
	}
	c, err := op(r.Context(), chi.URLParam(r, "id"), body)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fullCustomer(c))
}

// listCustomers is GET /v1/customers.
func (s *server) listCustomers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := customers.CustomerFilter{SegmentID: q.Get("segment_id"), Search: q.Get("search")}
	var problems apperr.Problems
	after, limit := pageQuery(q, "cus_", &problems)
	if v := q.Get("created_after"); v != "" {
		t, err := parseInstant(v)
		if err != nil {
			problems.Add("created_after", "must be an ISO 8601 date or date-time, such as 2026-03-01T00:00:00-03:00")
		}
		f.CreatedAfter = &t
	}
	if err := problems.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	conn, err := s.app.Customers.ListCustomers(r.Context(), f, after, limit)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	s.writeCustomerPage(w, conn)
}

// writeCustomerPage answers a page of customers as GET /v1/customers does.
func (s *server) writeCustomerPage(w http.ResponseWriter, conn *ent.CustomerConnection) {
	items := make([]customerListItem, 0, len(conn.Edges))
	for _, e := range conn.Edges {
		c := e.Node
		items = append(items, customerListItem{
			ID: c.ID, ExternalID: c.ExternalID, Name: c.Name, Email: c.Email, CPF: customers.MaskedDocument(c), Phone: c.Phone,
			Level: string(c.Level), PointsBalance: c.PointsBalance, Segments: segmentIDs(c),
			CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
		})
	}
	page := newPagination(conn.PageInfo, conn.TotalCount)
	writeJSON(w, http.StatusOK, map[string]any{"data": items, "pagination": page})
}

// parseInstant reads an ISO 8601 date-time with offset, or a date (midnight UTC).
func parseInstant(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, v)
}
