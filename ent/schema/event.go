package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// Event is an entry of the outbox: written in the transaction of the change
// it reports, delivered to webhooks afterwards.
type Event struct{ ent.Schema }

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Event)).Immutable(),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")),
		field.String("type").NotEmpty().Immutable().
			Comment("customer.level_changed, points.expiring, campaign.activated, sale.processed, …"),
		field.String("subject_id").Default("").Immutable().
			Comment("The resource the event is about (a customer id, a campaign id)."),
		field.JSON("data", map[string]any{}).Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The event's data, as delivered."),
		field.Time("published_at").Optional().Nillable().
			Comment("When the event was handed to delivery."),
	}
}

func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "type", "id"),
		index.Fields("published_at"),
	}
}

func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}
