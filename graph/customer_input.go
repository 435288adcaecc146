package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/graph/generated"
)

// The GraphQL inputs of customers, read into the CustomerInput the
// operations take (the REST adapters build the same from JSON).

func createCustomerInput(in generated.CreateCustomerInput) customers.CustomerInput {
	c := customers.CustomerInput{
		ExternalID: ptrField(in.ExternalID),
		Name:       opt.Of(in.Name),
		Email:      opt.Of(in.Email),
		CPF:        opt.Of(in.Cpf),
		Phone:      ptrField(in.Phone),
		BirthDate:  ptrField(in.BirthDate),
		Gender:     genderField(graphql.OmittableOf(in.Gender)),
	}
	if in.Address != nil {
		c.Address = opt.Of(addressInput(*in.Address))
	}
	if in.Consent != nil {
		c.Consent = opt.Of(consentInput(*in.Consent))
	}
	return c
}

func updateCustomerInput(in generated.UpdateCustomerInput) customers.CustomerInput {
	c := customers.CustomerInput{
		ExternalID: omitted(in.ExternalID),
		Name:       omitted(in.Name),
		Email:      omitted(in.Email),
		CPF:        omitted(in.Cpf),
		Phone:      omitted(in.Phone),
		BirthDate:  omitted(in.BirthDate),
		Gender:     genderField(in.Gender),
	}
	if v, set := in.Address.ValueOK(); set {
		c.Address = opt.Null[customers.AddressInput]()
		if v != nil {
			c.Address = opt.Of(addressInput(*v))
		}
	}
	if v, set := in.Consent.ValueOK(); set {
		c.Consent = opt.Null[customers.ConsentInput]()
		if v != nil {
			c.Consent = opt.Of(consentInput(*v))
		}
	}
	return c
}

func addressInput(a generated.CustomerAddressInput) customers.AddressInput {
	return customers.AddressInput{Street: omitted(a.Street), City: omitted(a.City), State: omitted(a.State), ZipCode: omitted(a.ZipCode)}
}

func consentInput(c generated.CustomerConsentInput) customers.ConsentInput {
	return customers.ConsentInput{MarketingEmail: omitted(c.MarketingEmail), MarketingSMS: omitted(c.MarketingSms),
		MarketingWhatsApp: omitted(c.MarketingWhatsapp), DataSharing: omitted(c.DataSharing)}
}

// omitted reads an omittable GraphQL input: absent, null or a value.
func omitted[T any](o graphql.Omittable[*T]) opt.Field[T] {
	v, set := o.ValueOK()
	switch {
	case !set:
		return opt.Field[T]{}
	case v == nil:
		return opt.Null[T]()
	}
	return opt.Of(*v)
}

func ptrField[T any](v *T) opt.Field[T] {
	if v == nil {
		return opt.Field[T]{}
	}
	return opt.Of(*v)
}

func genderField(o graphql.Omittable[*customer.Gender]) opt.Field[string] {
	g := omitted(o)
	return opt.Field[string]{Set: g.Set, Null: g.Null, Value: string(g.Value)}
}
