package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// Store is a physical or online shop of a tenant, known to the point of sale
// by its external code.
type Store struct{ ent.Schema }

func (Store) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Store)).Immutable(),
		field.String("code").NotEmpty().MaxLen(64).
			Annotations(entgql.OrderField("CODE")).
			Comment("The store's code in the retailer's systems (sale.store.id at the POS)."),
		field.String("name").NotEmpty().
			Annotations(entgql.OrderField("NAME")),
	}
}

func (Store) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Store) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "code").Unique()}
}

func (Store) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.QueryField(),
		entgql.Mutations(entgql.MutationCreate(), entgql.MutationUpdate()),
	}
}
