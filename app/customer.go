package app

import (
	"context"
	"errors"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// POS registration statuses of a customer (the identify response's status,
// besides NOT_FOUND).
const (
	POSStatusPreRegister = "PRE_REGISTER"
	POSStatusIncomplete  = "INCOMPLETE"
	POSStatusComplete    = "COMPLETE"
)

// POSStatus derives a customer's registration status from the profile: it is
// never stored, so it cannot disagree with the fields it depends on.
func POSStatus(c *ent.Customer) string {
	switch {
	case c.Name == "":
		return POSStatusPreRegister
	case c.Email != nil && c.Phone != nil && c.BirthDate != nil:
		return POSStatusComplete
	default:
		return POSStatusIncomplete
	}
}

// MaskedDocument is the customer's CPF or CNPJ as every interface shows it:
// only the last two characters visible.
func MaskedDocument(c *ent.Customer) string {
	return document.Mask(document.Type(c.DocumentType), c.Document)
}

// SaleMaskedDocument is the document a sale was sent with, masked likewise.
func SaleMaskedDocument(s *ent.Sale) string {
	t := document.CPF
	if s.CustomerDocumentType != nil {
		t = document.Type(*s.CustomerDocumentType)
	}
	return document.Mask(t, s.CustomerDocument)
}

// customerWithDocument finds the customer with the complete, normalised
// document doc, by its blind index: the column holds it sealed.
func customerWithDocument(doc string) predicate.Customer {
	return customer.DocumentIndex(sealed.MustIndex(doc))
}

// saleWithDocument finds the sales sent with the normalised document doc.
func saleWithDocument(doc string) predicate.Sale {
	return sale.CustomerDocumentIndex(sealed.MustIndex(doc))
}

// documentIndexes are the blind indexes of the normalised documents docs.
func documentIndexes(docs []string) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = sealed.MustIndex(d)
	}
	return out
}

// lockCustomer locks a customer's row until the transaction of c ends
// (PostgreSQL: SELECT … FOR UPDATE; SQLite's write transactions are serial
// already) and reads it, erased or not; an unknown customer is not found.
//
// The lock order: every transaction that writes a customer's data (its
// profile and consents, its ledger and lots, its sales, returns and
// redemptions, its erasure) takes this lock before any other row lock it
// takes or any row it writes, then the rest in the order customer, ledger,
// lots, sales, redemptions, events. Transactions on one customer therefore
// queue on its row instead of deadlocking, and an erasure sees no write
// begun before it commit after it. docs/decisions.md, "Lock order".
func (a *App) lockCustomer(ctx context.Context, c *ent.Client, id string) (*ent.Customer, error) {
	cust, err := a.Ledger().LockCustomer(ctx, c, id)
	if errors.Is(err, ledger.ErrCustomerNotFound) {
		return nil, apperr.NotFound("customer")
	}
	return cust, err
}
