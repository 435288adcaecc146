package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// now is the clock of every timestamp default: times are stored in UTC, to
// the microsecond (PostgreSQL's precision), so a time rendered by the API
// compares equal to the stored one on both databases.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// TimeMixin adds creation and update times.
type TimeMixin struct{ mixin.Schema }

func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the record was created (UTC)."),
		field.Time("updated_at").Default(now).UpdateDefault(now).
			Annotations(entgql.OrderField("UPDATED_AT")).
			Comment("When the record last changed (UTC)."),
	}
}

// TenantMixin marks an entity as owned by one tenant. Its privacy policy
// (privacy.go) is the single mechanism of tenant isolation: every query is
// filtered and every mutation checked against the viewer's tenant.
type TenantMixin struct{ mixin.Schema }

func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").NotEmpty().Immutable().
			Comment("The tenant that owns the record."),
	}
}

func (TenantMixin) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("tenant", Tenant.Type).Field("tenant_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}
