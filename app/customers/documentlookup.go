package customers

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/viewer"
)

// DefaultDocumentLookups is how many customers each client (API client or
// back-office user) may look up by complete document per window when
// App.DocumentLookups is unset: enough for a till or a help desk, while
// trying the million CPFs a masked one and a state leave open takes months.
var DefaultDocumentLookups = ratelimit.Quota{Limit: 100, Window: 15 * time.Minute}

// CustomerByDocument reads the customer of the viewer's tenant with a
// complete, valid CPF or CNPJ (formatted or not), as Customer does. It is a
// document lookup: counted against the client's quota and audited.
func (a *Service) CustomerByDocument(ctx context.Context, doc string) (*ent.Customer, error) {
	if err := Rules.CustomerByDocument.Allow(ctx); err != nil {
		return nil, err
	}
	_, d, err := document.ParseAny(doc)
	if err != nil {
		return nil, apperr.Invalid("document", "must be a complete, valid CPF or CNPJ: %v", err)
	}
	id, err := a.lookUpDocument(ctx, d)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return nil, apperr.NotFound("customer")
	}
	return a.customer(ctx, id)
}

// lookUpDocument finds the id of the live customer with the normalised
// document doc ("" when there is none). Every lookup, found or not, takes
// one of the viewer's quota of lookups, refused with 429 beyond it, and is
// recorded in the audit trail with the customer found (never the
// document): documents are tried one at a time, so no batch of guesses can
// find a CPF from its masked form.
func (a *Service) lookUpDocument(ctx context.Context, doc string) (string, error) {
	v, _ := viewer.FromContext(ctx)
	q := a.documentLookupQuota()
	if d := a.documentLookups().Allow(v.TenantID+"\x00"+string(v.Role)+"\x00"+v.Subject, q); !d.Allowed {
		return "", &apperr.Error{Kind: apperr.KindRateLimited, Code: "document_lookups_exceeded", RetryAfter: d.RetryAfter,
			Message: fmt.Sprintf("too many lookups by document: each client may make %s (lookups/window); retry in %s",
				q, d.RetryAfter.Round(time.Second))}
	}
	id, err := a.k.DB.Ent.Customer.Query().Where(CustomerWithDocument(doc), customer.ErasedAtIsNil()).OnlyID(ctx)
	if ent.IsNotFound(err) {
		id, err = "", nil
	}
	if err != nil {
		return "", err
	}
	return id, schema.Audit(ctx, a.k.DB.Ent, "customer.looked_up", "customer", id, nil)
}

// documentLookups counts each client's document lookups (across processes
// on PostgreSQL: Kernel.Limiter).
func (a *Service) documentLookups() ratelimit.Counter {
	a.lookupsOnce.Do(func() { a.lookups = a.k.Limiter("document-lookups", a.k.Now, 0) })
	return a.lookups
}

func (a *Service) documentLookupQuota() ratelimit.Quota {
	if a.k.DocumentLookups.IsZero() {
		return DefaultDocumentLookups
	}
	return a.k.DocumentLookups
}
