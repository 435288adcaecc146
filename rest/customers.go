package rest

import (
	"encoding/json"
	"time"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/ent"
)

// customerJSON is the full customer record of the document.
type customerJSON struct {
	customerIdentity
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

// customerIdentity are the first fields of a customer in every answer.
type customerIdentity struct {
	ID         string  `json:"id"`
	ExternalID *string `json:"external_id"`
	Name       string  `json:"name"`
	Email      *string `json:"email"`
	CPF        string  `json:"cpf"`
	Phone      *string `json:"phone"`
}

func identityOf(c *ent.Customer) customerIdentity {
	return customerIdentity{ID: c.ID, ExternalID: c.ExternalID, Name: c.Name, Email: c.Email, CPF: customers.MaskedDocument(c), Phone: c.Phone}
}

// customerListItem is an item of the list response.
type customerListItem struct {
	customerIdentity
	Level         string   `json:"level"`
	PointsBalance int64    `json:"points_balance"`
	Segments      []string `json:"segments"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
}

// customerCreated is the 201 body of create.
type customerCreated struct {
	location
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
		customerIdentity: identityOf(c), BirthDate: c.BirthDate, Level: string(c.Level), PointsBalance: c.PointsBalance,
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

// newCustomerJSON is the answer of create, at the customer's Location.
func newCustomerJSON(c *ent.Customer) customerCreated {
	return customerCreated{location: location("/v1/customers/" + c.ID),
		ID: c.ID, ExternalID: c.ExternalID, Name: c.Name, Email: c.Email, CreatedAt: timestamp(c.CreatedAt)}
}

// readCustomerWrite reads PUT and PATCH /v1/customers/{id} (a JSON merge
// patch).
func readCustomerWrite(b *binder) onPath[customers.CustomerInput] {
	return onPath[customers.CustomerInput]{id: pathID(b), in: jsonBody[customers.CustomerInput](b)}
}

// readCustomerPage reads GET /v1/customers.
func readCustomerPage(b *binder) paged[customers.CustomerFilter] {
	return paged[customers.CustomerFilter]{pageRequest: b.valuedPage("cus_"), filter: customers.CustomerFilter{
		SegmentID: b.query("segment_id"), Search: b.query("search"),
		CreatedAfter:     instant(&b.problems, "created_after", b.query("created_after"), dateOrDateTime),
		MinLifetimeValue: b.amount("min_lifetime_value"), MaxLifetimeValue: b.amount("max_lifetime_value"),
		MinSalesCount: b.count("min_sales_count"), MaxSalesCount: b.count("max_sales_count"),
		LastPurchaseAfter:  instant(&b.problems, "last_purchase_after", b.query("last_purchase_after"), dateOrDateTime),
		LastPurchaseBefore: instant(&b.problems, "last_purchase_before", b.query("last_purchase_before"), dateOrDateTime),
		OrderBy:            b.query("order_by"), Direction: b.query("direction"),
	}}
}

// readPredictivePage reads GET /v2/segments/predictive/{key}/customers:
// the segment's members, paginated as GET /v1/customers.
func readPredictivePage(b *binder) paged[customers.CustomerFilter] {
	return paged[customers.CustomerFilter]{pageRequest: b.page("cus_"), filter: customers.CustomerFilter{Predictive: b.path("key")}}
}

// customerPage is a page of customers as GET /v1/customers answers it.
func customerPage(conn *ent.CustomerConnection) listJSON[customerListItem] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.CustomerEdge) customerListItem {
		c := e.Node
		return customerListItem{
			customerIdentity: identityOf(c), Level: string(c.Level), PointsBalance: c.PointsBalance, Segments: segmentIDs(c),
			CreatedAt: timestamp(c.CreatedAt), UpdatedAt: timestamp(c.UpdatedAt),
		}
	})
}
