package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Change is an entry of the change feed: written in the transaction of a
// write that changes what the hot paths keep in memory (a tenant's
// campaign definitions, settings or stores), so every process drops that
// part of the tenant's read model once it commits (app/kernel's read
// model; PostgreSQL notifies it through a trigger of migration 0029).
type Change struct{ ent.Schema }

func (Change) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(now).Immutable().
			Comment("When the change was written (UTC)."),
		field.Enum("part").Values("campaigns", "settings", "stores").Immutable().
			Comment("What of the tenant changed: its campaigns' definitions, its settings, or its stores and their groups."),
		field.String("origin").Default("").Immutable().
			Comment("The process that wrote it (it applied the change at commit, and ignores its notification)."),
	}
}

func (Change) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (Change) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at")}
}

func (Change) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A change of what the hot paths keep in memory of a tenant: its campaigns, settings or stores. Never changed; purged after a day."),
		entgql.Skip(entgql.SkipAll),
	}
}
