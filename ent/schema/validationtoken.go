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

// ValidationToken is a validation token redeemed: validate writes nothing
// (its token is signed and carries the cart and the benefits it promised);
// the first redemption of a token writes its row, keyed by the token's id,
// which binds the token to one order.
type ValidationToken struct{ ent.Schema }

func (ValidationToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Validation)).Immutable().
			Comment("The token's id: a token's first redemption writes its row."),
		field.Time("created_at").Default(now).Immutable().Comment("When the cart was validated."),
		field.String("customer_id").NotEmpty().Immutable(),
		field.String("channel").Default("").Immutable(),
		field.String("store_id").Default("").Immutable(),
		field.Time("expires_at").Immutable(),
		field.String("order_id").Optional().Nillable().
			Comment("The order the token was first redeemed for; it serves no other."),
		field.String("coupon_id").Optional().Nillable().Immutable().
			Comment("The coupon whose code came with the cart; its campaign's redemption uses it."),
	}
}

func (ValidationToken) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (ValidationToken) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable(),
	}
}

func (ValidationToken) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("expires_at"),
	}
}

func (ValidationToken) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
