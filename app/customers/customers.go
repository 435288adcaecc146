package customers

import (
	"context"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/storage"
)

// CustomerInput is a customer create, a replacement (PUT) or a merge patch
// (PATCH): each field may be absent, null or set. Its JSON is the customer
// body of /v1 and a line of a JSON Lines customer import.
type CustomerInput struct {
	ExternalID opt.Field[string]       `json:"external_id"`
	Name       opt.Field[string]       `json:"name"`
	Email      opt.Field[string]       `json:"email"`
	CPF        opt.Field[string]       `json:"cpf"`
	Phone      opt.Field[string]       `json:"phone"`
	BirthDate  opt.Field[string]       `json:"birth_date"`
	Gender     opt.Field[string]       `json:"gender"`
	Address    opt.Field[AddressInput] `json:"address"`
	Consent    opt.Field[ConsentInput] `json:"consent"`
}

// AddressInput is the postal address of a customer.
type AddressInput struct {
	Street  opt.Field[string] `json:"street"`
	City    opt.Field[string] `json:"city"`
	State   opt.Field[string] `json:"state"`
	ZipCode opt.Field[string] `json:"zip_code"`
}

// ConsentInput holds the Consents, one per purpose (ConsentPurposes).
type ConsentInput struct {
	MarketingEmail    opt.Field[bool] `json:"marketing_email"`
	MarketingSMS      opt.Field[bool] `json:"marketing_sms"`
	MarketingWhatsApp opt.Field[bool] `json:"marketing_whatsapp"`
	DataSharing       opt.Field[bool] `json:"data_sharing"`
}

// writeMode says how absent fields of a CustomerInput are read.
type writeMode int

const (
	modeCreate  writeMode = iota // required fields must be present
	modeReplace                  // like create; absent optional fields are cleared
	modePatch                    // only present fields change; null clears
)

var (
	e164      = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)
	isoDate   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	maxLength = map[string]int{"name": 200, "external_id": 128, "email": 254, "address.street": 200, "address.city": 100, "address.state": 50, "address.zip_code": 20}
)

// validate checks every field of in and returns all problems at once; cpf
// is the normalised CPF when one was given.
func (in CustomerInput) validate(mode writeMode) (cpf string, err error) {
	var p apperr.Problems
	required := func(field string, f opt.Field[string]) {
		switch {
		case f.Null:
			p.Add(field, "must not be null")
		case !f.Set && mode != modePatch:
			p.Add(field, "is required")
		case f.Set && strings.TrimSpace(f.Value) == "":
			p.Add(field, "must not be empty")
		}
	}
	length := func(field string, f opt.Field[string]) {
		if f.Present() && len([]rune(f.Value)) > maxLength[field] {
			p.Add(field, "must be at most %d characters", maxLength[field])
		}
	}
	required("name", in.Name)
	required("email", in.Email)
	required("cpf", in.CPF)
	length("name", in.Name)
	length("external_id", in.ExternalID)
	length("email", in.Email)
	if in.Email.Present() && strings.TrimSpace(in.Email.Value) != "" {
		if a, err := mail.ParseAddress(in.Email.Value); err != nil || a.Address != strings.TrimSpace(in.Email.Value) {
			p.Add("email", "must be an e-mail address such as ana@example.com")
		}
	}
	if in.CPF.Present() && strings.TrimSpace(in.CPF.Value) != "" {
		d, err := document.ParseCPF(in.CPF.Value)
		if err != nil {
			p.Add("cpf", "is not a valid CPF (%v)", err)
		}
		cpf = d
	}
	if in.ExternalID.Present() && strings.TrimSpace(in.ExternalID.Value) == "" {
		p.Add("external_id", "must not be empty; send null to remove it")
	}
	if in.Phone.Present() && !e164.MatchString(in.Phone.Value) {
		p.Add("phone", "must be in E.164 format, such as +5511987654321")
	}
	if in.BirthDate.Present() {
		d, err := time.Parse(time.DateOnly, in.BirthDate.Value)
		switch {
		case err != nil || !isoDate.MatchString(in.BirthDate.Value):
			p.Add("birth_date", "must be a date in the format YYYY-MM-DD")
		case d.After(time.Now()) || d.Year() < 1900:
			p.Add("birth_date", "must be a past date after 1900")
		}
	}
	if in.Gender.Present() && customer.GenderValidator(customer.Gender(in.Gender.Value)) != nil {
		p.Add("gender", "must be M, F or NB")
	}
	if a := in.Address.Value; in.Address.Present() {
		length("address.street", a.Street)
		length("address.city", a.City)
		length("address.state", a.State)
		length("address.zip_code", a.ZipCode)
	}
	return cpf, p.Err()
}

// CreateCustomer registers a customer in the viewer's tenant.
func (a *Service) CreateCustomer(ctx context.Context, in CustomerInput) (*ent.Customer, error) {
	if err := Rules.CreateCustomer.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", in); err != nil {
		return nil, err
	}
	cpf, err := in.validate(modeCreate)
	if err != nil {
		return nil, err
	}
	if err := a.requireUnique(ctx, "", in.Email, cpf); err != nil {
		return nil, err
	}
	id, err := a.createCustomer(ctx, in, cpf, a.k.Stamp())
	if err != nil {
		return nil, duplicateOr(err)
	}
	return a.customer(ctx, id)
}

// createCustomer writes a new customer and the history of the Consents it
// gave, in one transaction, and returns its id.
func (a *Service) createCustomer(ctx context.Context, in CustomerInput, cpf string, now time.Time) (string, error) {
	var id string
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		c, err := newCustomer(tx.Ent, in, cpf, now).Save(ctx)
		if err != nil {
			return err
		}
		id = c.ID
		changes, events := givenConsents(ctx, tx.Ent, c, in)
		return writeConsentRecords(ctx, tx.Ent, changes, events)
	})
	return id, err
}

// givenConsents are the history rows and events of the Consents a new
// customer (its id, tenant and creation are read) was created with from in.
func givenConsents(ctx context.Context, c *ent.Client, cust *ent.Customer, in CustomerInput) ([]*ent.ConsentChangeCreate, []*ent.EventCreate) {
	if !in.Consent.Present() {
		return nil, nil
	}
	var given, values Consents
	for i, f := range in.Consent.Value.fields() {
		given[i], values[i] = f.Set, f.Value
	}
	return consentRecords(ctx, c, cust, nil, values, given, consentChannel(viewerOf(ctx)), cust.CreatedAt)
}

// newCustomer builds the creation of a customer from a checked input and
// its normalised CPF; now stamps the Consents given.
func newCustomer(c *ent.Client, in CustomerInput, cpf string, now time.Time) *ent.CustomerCreate {
	create := c.Customer.Create().
		SetName(strings.TrimSpace(in.Name.Value)).
		SetEmail(strings.TrimSpace(in.Email.Value)).
		SetDocumentType(customer.DocumentTypeCPF).
		SetDocument(cpf).
		SetNillableExternalID(in.ExternalID.Ptr()).
		SetNillablePhone(in.Phone.Ptr()).
		SetNillableBirthDate(in.BirthDate.Ptr())
	if in.Gender.Present() {
		create.SetGender(customer.Gender(in.Gender.Value))
	}
	if addr := in.Address.Value; in.Address.Present() {
		create.SetNillableAddressStreet(addr.Street.Ptr()).SetNillableAddressCity(addr.City.Ptr()).
			SetNillableAddressState(addr.State.Ptr()).SetNillableAddressZipCode(addr.ZipCode.Ptr())
	}
	if c := in.Consent.Value; in.Consent.Present() {
		create.SetConsentMarketingEmail(c.MarketingEmail.Value).SetConsentMarketingSms(c.MarketingSMS.Value).
			SetConsentMarketingWhatsapp(c.MarketingWhatsApp.Value).SetConsentDataSharing(c.DataSharing.Value).
			SetConsentUpdatedAt(now)
	}
	return create
}

// ReplaceCustomer replaces a customer whole: the create fields are required and every optional
// field absent from in is cleared.
func (a *Service) ReplaceCustomer(ctx context.Context, id string, in CustomerInput) (*ent.Customer, error) {
	if err := Rules.ReplaceCustomer.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	return a.updateCustomer(ctx, id, in, modeReplace)
}

// PatchCustomer is a JSON merge patch: only the fields present change, and
// null clears an optional field.
func (a *Service) PatchCustomer(ctx context.Context, id string, in CustomerInput) (*ent.Customer, error) {
	if err := Rules.PatchCustomer.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", in); err != nil {
		return nil, err
	}
	return a.updateCustomer(ctx, id, in, modePatch)
}

func (a *Service) updateCustomer(ctx context.Context, id string, in CustomerInput, mode writeMode) (*ent.Customer, error) {
	cpf, err := in.validate(mode)
	if err != nil {
		return nil, err
	}
	if err := a.requireUnique(ctx, id, in.Email, cpf); err != nil {
		return nil, err
	}
	if mode == modeReplace {
		in = in.withAbsentCleared()
	}
	// One transaction writes the customer and the history of the Consents
	// it changes, under the customer's lock: an erasure committed first is
	// seen (an erased customer takes no writes), one coming after waits.
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		old, err := a.k.LockCustomer(ctx, tx.Ent, id)
		if err != nil {
			return err
		}
		if old.ErasedAt != nil {
			return apperr.NotFound("customer")
		}
		u := old.Update()
		applyCustomerInput(u, in, cpf)
		was := ConsentsOf(old)
		now, at := was.applied(in.Consent), a.k.Stamp()
		if now != was {
			u.SetConsentMarketingEmail(now[0]).SetConsentMarketingSms(now[1]).SetConsentMarketingWhatsapp(now[2]).
				SetConsentDataSharing(now[3]).SetConsentUpdatedAt(at)
		}
		if _, err := u.Save(ctx); err != nil {
			return err
		}
		if err := RecordConsents(ctx, tx.Ent, old, &was, now, Consents{}, consentChannel(viewerOf(ctx)), at); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, id) // a profile's or consents' change, as it commits
	})
	if err != nil {
		if ent.IsNotFound(err) {
			return nil, apperr.NotFound("customer")
		}
		return nil, duplicateOr(err)
	}
	return a.customer(ctx, id)
}

// applyCustomerInput sets on u the identity fields of a checked input (cpf
// its normalised CPF, "" when it changes none).
func applyCustomerInput(u *ent.CustomerUpdateOne, in CustomerInput, cpf string) {
	if in.Name.Present() {
		u.SetName(strings.TrimSpace(in.Name.Value))
	}
	if in.Email.Present() {
		u.SetEmail(strings.TrimSpace(in.Email.Value))
	}
	if cpf != "" {
		u.SetDocument(cpf).SetDocumentType(customer.DocumentTypeCPF)
	}
	setOrClear(in.ExternalID, u.SetExternalID, u.ClearExternalID)
	setOrClear(in.Phone, u.SetPhone, u.ClearPhone)
	setOrClear(in.BirthDate, u.SetBirthDate, u.ClearBirthDate)
	setOrClear(in.Gender, func(g string) *ent.CustomerUpdateOne { return u.SetGender(customer.Gender(g)) }, u.ClearGender)
	if in.Address.Set {
		addr := in.Address.Value
		if in.Address.Null {
			addr = AddressInput{Street: opt.Null[string](), City: opt.Null[string](), State: opt.Null[string](), ZipCode: opt.Null[string]()}
		}
		setOrClear(addr.Street, u.SetAddressStreet, u.ClearAddressStreet)
		setOrClear(addr.City, u.SetAddressCity, u.ClearAddressCity)
		setOrClear(addr.State, u.SetAddressState, u.ClearAddressState)
		setOrClear(addr.ZipCode, u.SetAddressZipCode, u.ClearAddressZipCode)
	}
}

// withAbsentCleared turns every absent optional field into null, as PUT
// replaces the whole record. Consent absent means both Consents withdrawn.
func (in CustomerInput) withAbsentCleared() CustomerInput {
	for _, f := range []*opt.Field[string]{&in.ExternalID, &in.Phone, &in.BirthDate, &in.Gender} {
		if !f.Set {
			*f = opt.Null[string]()
		}
	}
	if !in.Address.Set {
		in.Address = opt.Null[AddressInput]()
	} else if in.Address.Present() {
		a := &in.Address.Value
		for _, f := range []*opt.Field[string]{&a.Street, &a.City, &a.State, &a.ZipCode} {
			if !f.Set {
				*f = opt.Null[string]()
			}
		}
	}
	if !in.Consent.Set {
		in.Consent = opt.Null[ConsentInput]()
	} else if in.Consent.Present() {
		for _, f := range in.Consent.Value.fields() {
			if !f.Set {
				*f = opt.Of(false)
			}
		}
	}
	return in
}

// setOrClear applies one optional field of a write.
func setOrClear[T any](f opt.Field[T], set func(T) *ent.CustomerUpdateOne, unset func() *ent.CustomerUpdateOne) {
	switch {
	case f.Null:
		unset()
	case f.Set:
		set(f.Value)
	}
}

// requireUnique reports which field of a write clashes with another customer
// of the tenant (the unique indexes decide under concurrency; this names the
// field for the caller).
func (a *Service) requireUnique(ctx context.Context, self string, email opt.Field[string], cpf string) error {
	check := func(field string, p predicate.Customer) error {
		q := a.k.DB.Ent.Customer.Query().Where(p)
		if self != "" {
			q.Where(customer.IDNEQ(self))
		}
		taken, err := q.Exist(ctx)
		if err != nil {
			return err
		}
		if taken {
			return duplicate(field)
		}
		return nil
	}
	if email.Present() {
		if err := check("email", customer.EmailKey(emailKey(email.Value))); err != nil {
			return err
		}
	}
	if cpf != "" {
		return check("cpf", CustomerWithDocument(cpf))
	}
	return nil
}

func duplicate(field string) error {
	return apperr.Conflict("duplicate_customer", field, "a customer with this "+map[string]string{"email": "e-mail", "cpf": "CPF"}[field]+" is already registered")
}

// duplicateOr maps a unique-index violation (a concurrent duplicate) to
// duplicate_customer; the database's message is not passed on, as it may
// carry the value.
func duplicateOr(err error) error {
	if !ent.IsConstraintError(err) {
		return err
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, "email_key"):
		return duplicate("email")
	case strings.Contains(msg, "document"):
		return duplicate("cpf")
	}
	return err
}

// Customer reads one customer of the viewer's tenant with its segments.
func (a *Service) Customer(ctx context.Context, id string) (*ent.Customer, error) {
	if err := Rules.Customer.Allow(ctx); err != nil {
		return nil, err
	}
	return a.customer(ctx, id)
}

// customer is Customer without its policy check, for the operations
// of this context that call it.
func (a *Service) customer(ctx context.Context, id string) (*ent.Customer, error) {
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	c, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(id), customer.ErasedAtIsNil()).
		WithSegments(func(q *ent.SegmentQuery) { q.Select(segment.FieldID) }).
		Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("customer")
	}
	return c, err
}
