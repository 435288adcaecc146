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
		field.String("id").DefaultFunc(pid.Generator(pid.Store)).Immutable().
			Comment("The store's id, such as sto_01J…."),
		field.String("code").NotEmpty().MaxLen(64).
			Annotations(entgql.OrderField("CODE")).
			Comment("The store's code in the retailer's systems (sale.store.id at the POS)."),
		field.String("name").NotEmpty().
			Annotations(entgql.OrderField("NAME")).
			Comment("The store's display name."),
		field.Strings("groups").Optional().
			Comment("The store's groups (regions, franchisees, …), which campaigns may target."),
	}
}

func (Store) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

// Hooks record the back office's changes of stores.
func (Store) Hooks() []ent.Hook { return []ent.Hook{audited("store")} }

func (Store) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "code").Unique()}
}

func (Store) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A physical or online store of the retailer, known to the point of sale by its code."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's stores, oldest first unless ordered, with filters."),
	}
}
