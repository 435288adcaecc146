package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// PointsLot is what remains of one credit: debits spend the lots that
// expire first, and an expiration takes what is left of a lot when it
// expires. The sum of a customer's lots' remaining points is the balance.
type PointsLot struct{ ent.Schema }

func (PointsLot) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.PointsLot)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.String("customer_id").NotEmpty().Immutable(),
		field.String("entry_id").NotEmpty().Immutable().Comment("The entry that credited the lot."),
		field.Int64("points").Positive().Immutable(),
		field.Int64("remaining").NonNegative(),
		field.Time("expires_at").Immutable(),
		field.Time("pending_until").Optional().Nillable().
			Comment("Until when the lot's points are pending (not spendable); cleared when they are released to the balance."),
		field.Time("expiring_notified_at").Optional().Nillable().
			Comment("When the points.expiring event of the lot was recorded."),
	}
}

func (PointsLot) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (PointsLot) Edges() []ent.Edge {
	return []ent.Edge{
		// The edges make the lot's customer and entry foreign keys, and let
		// the privacy policy check they belong to the viewer's tenant.
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable(),
		edge.To("entry", PointsEntry.Type).Field("entry_id").Unique().Required().Immutable(),
	}
}

// Policy: lots are spent and expired, never deleted, by a tenant's principals.
func (PointsLot) Policy() ent.Policy { return ledgerPolicy() }

func (PointsLot) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "customer_id", "expires_at"),
		index.Fields("expires_at"),
		index.Fields("pending_until"),
		index.Fields("entry_id").Unique(),
	}
}

func (PointsLot) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(entgql.SkipAll),
		entsql.Checks(map[string]string{"points_lots_remaining_within_points": "remaining >= 0 AND remaining <= points"}),
	}
}
