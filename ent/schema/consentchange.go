package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// ConsentChange is one change of a customer's consent to a purpose, with who
// made it and through what: the history the LGPD asks a controller to keep.
type ConsentChange struct{ ent.Schema }

func (ConsentChange) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.ConsentChange)).Immutable().
			Comment("The change's id, such as cns_01J…."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the consent changed."),
		field.String("customer_id").NotEmpty().Immutable().
			Comment("The customer whose consent changed."),
		field.Enum("purpose").Values("marketing_email", "marketing_sms", "marketing_whatsapp", "data_sharing").Immutable().
			Comment("What the consent is to: marketing by e-mail, SMS or WhatsApp, or sharing data with partners."),
		field.Bool("granted").Immutable().
			Comment("The consent's value from then on: granted, or withdrawn."),
		field.Enum("channel").Values("api", "back_office", "import", "erasure").Immutable().
			Comment("Through what it changed: the API (an integration), the back office (a user), a customer import, or the customer's erasure."),
		field.String("source").Default("").MaxLen(200).Immutable().
			Comment("Who changed it: the API client's id or the back-office user's subject."),
	}
}

func (ConsentChange) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (ConsentChange) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customer", Customer.Type).Ref("consent_changes").Field("customer_id").Unique().Required().Immutable().
			Comment("The customer whose consent changed."),
	}
}

func (ConsentChange) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "customer_id", "id")}
}

func (ConsentChange) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One change of a customer's consent to a purpose: value, instant, channel and source. Never changed."),
		entgql.RelayConnection(),
	}
}
