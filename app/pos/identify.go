package pos

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
)

// checkProtocol refuses a protocol other than the documented one: a client
// speaking another version of the interface would be misread.
func checkProtocol(p *apperr.Problems, got, want string, required bool) {
	switch {
	case got == want, got == "" && !required:
	case got == "":
		p.Add("protocol", "is required: %s", want)
	default:
		p.Add("protocol", "must be %s", want)
	}
}

// POSCustomer is the customer reference of a POS request.
type POSCustomer struct {
	ID, Type, Phone string
}

// parse validates the reference: id (CPF or CNPJ, bare or in its mask, at
// most 18 characters once the spaces around it are trimmed) and type (CPF or
// CNPJ, in any case). A type left out is inferred from the id when
// typeOptional (sales: the document makes it optional there, and a sale
// refused for it would be lost). It returns the sanitized document.
func (c POSCustomer) parse(p *apperr.Problems, idRequired, typeOptional bool) (string, document.Type) {
	id := strings.TrimFunc(c.ID, unicode.IsSpace)
	switch {
	case id == "" && idRequired:
		p.Add("customer.id", "is required")
		return "", ""
	case id == "":
		return "", ""
	case utf8.RuneCountInString(id) > maxDocumentLength:
		p.Add("customer.id", "must be at most %d characters", maxDocumentLength)
	}
	t := document.Type(strings.ToUpper(strings.TrimSpace(c.Type)))
	switch {
	case strings.TrimSpace(c.Type) == "" && typeOptional:
		t, d, err := document.ParseAny(c.ID)
		if err != nil {
			p.Add("customer.id", "is not a valid CPF or CNPJ (%v)", err)
		}
		return d, t
	case c.Type == "":
		p.Add("customer.type", "is required (CPF or CNPJ)")
		return "", ""
	case len(c.Type) > maxTypeLength:
		p.Add("customer.type", "must be at most %d characters", maxTypeLength)
		return "", ""
	case t != document.CPF && t != document.CNPJ:
		p.Add("customer.type", "must be CPF or CNPJ")
		return "", ""
	}
	d, err := document.Parse(t, c.ID)
	if err != nil {
		p.Add("customer.id", "is not a valid %s (%v)", t, err)
	}
	return d, t
}

// IdentifyInput asks who the customer at a till is, for the till's session.
type IdentifyInput struct {
	SessionID, Protocol string
	Customer            *POSCustomer
}

// Identification is the answer of identify.
type Identification struct {
	Document  string
	Type      document.Type
	Customer  *ent.Customer // nil: NOT_FOUND; its identified fields only
	Status    string
	PriceCode int
	Points    *loyalty.PointsOffer // nil: the programme takes no points at the till, or NOT_FOUND
	Wallets   *WalletsOffer        // nil: no cashback or gift card to pay with at the till, or NOT_FOUND
}

// identified are the fields of a customer an identification answers with
// (POSStatus, PriceCode and the point of sale's customer): a third of its
// columns, read at every till for every customer.
var identified = []string{
	customer.FieldExternalID, customer.FieldName, customer.FieldEmail, customer.FieldPhone,
	customer.FieldBirthDate, customer.FieldLevel,
}

// IdentifyCustomer finds the customer of a CPF or CNPJ; an unknown one is
// NOT_FOUND, or pre-registered when the tenant enables it.
func (a *Service) IdentifyCustomer(ctx context.Context, in IdentifyInput) (*Identification, error) {
	if err := Rules.IdentifyCustomer.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" {
		p.Add("sessionId", "is required")
	}
	checkProtocol(&p, in.Protocol, protocolPartner, false)
	var doc string
	var typ document.Type
	if in.Customer == nil {
		p.Add("customer", "is required")
	} else {
		doc, typ = in.Customer.parse(&p, true, false)
		if ph := in.Customer.Phone; ph != "" && !posPhone.MatchString(ph) {
			p.Add("customer.phone", "must be a phone number of 8 to 15 digits")
		}
	}
	if err := p.Malformed(); err != nil {
		return nil, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	var phone string
	if in.Customer != nil {
		phone = in.Customer.Phone
	}
	fields := spendingFields(tenant, identified...)
	cust, err := a.findOrPreRegister(ctx, a.k.DB.Ent, tenant, documentCustomer(a.k.DB.Ent, doc).Select(fields...), doc, string(typ), phone)
	if ent.IsConstraintError(err) { // pre-registered by a concurrent identify
		cust, err = documentCustomer(a.k.DB.Ent, doc).Select(fields...).Only(ctx)
	}
	if err != nil {
		return nil, err
	}
	if cust == nil {
		return &Identification{Document: doc, Type: typ, Status: "NOT_FOUND"}, nil
	}
	offer, err := a.pointsOffer(ctx, tenant, cust, nil)
	if err != nil {
		return nil, err
	}
	money, err := a.walletsOffer(ctx, tenant, cust.ID, nil)
	if err != nil {
		return nil, err
	}
	return &Identification{
		Document: doc, Type: typ, Customer: cust, Status: customers.POSStatus(cust),
		PriceCode: PriceCode(tenant, points.Level(cust.Level)), Points: offer, Wallets: money,
	}, nil
}

// PriceCode is the tenant's POS price code for a level.
func PriceCode(t *ent.Tenant, l points.Level) int {
	switch l {
	case points.Silver:
		return t.PriceCodeSilver
	case points.Gold:
		return t.PriceCodeGold
	case points.Diamond:
		return t.PriceCodeDiamond
	case points.Bronze:
	}
	return t.PriceCodeBronze
}
