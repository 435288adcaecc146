package schema

import (
	"encoding/json"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// ValidationToken is the answer of validate kept for redeem: the cart it
// saw and the benefits it promised, for five minutes and one order.
type ValidationToken struct{ ent.Schema }

func (ValidationToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Validation)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.String("token_hash").NotEmpty().Immutable().Sensitive().
			Comment("SHA-256 of the token handed to the client; the token itself is not stored."),
		field.String("customer_id").NotEmpty().Immutable(),
		field.String("channel").Default("").Immutable(),
		field.String("store_id").Default("").Immutable(),
		field.JSON("cart", json.RawMessage{}).Immutable().Comment("The cart as validated."),
		field.JSON("benefits", json.RawMessage{}).Immutable().
			Comment("The eligible campaigns and their estimated benefits, by campaign id."),
		field.Strings("campaign_ids").Immutable(),
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
		index.Fields("token_hash").Unique(),
		index.Fields("expires_at"),
	}
}

func (ValidationToken) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
