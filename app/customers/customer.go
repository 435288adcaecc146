package customers

import (
	"github.com/fideliza/fideliza/domain/document"
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

// CustomerWithDocument finds the customer with the complete, normalised
// document doc, by its blind index: the column holds it sealed.
func CustomerWithDocument(doc string) predicate.Customer {
	return customer.DocumentIndex(sealed.MustIndex(doc))
}

// SaleWithDocument finds the sales sent with the normalised document doc.
func SaleWithDocument(doc string) predicate.Sale {
	return sale.CustomerDocumentIndex(sealed.MustIndex(doc))
}

// DocumentIndexes are the blind indexes of the normalised documents docs.
func DocumentIndexes(docs []string) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = sealed.MustIndex(d)
	}
	return out
}
