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

// Coupon is a code that unlocks a campaign requiring one, for a number of
// uses.
type Coupon struct{ ent.Schema }

func (Coupon) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Coupon)).Immutable().
			Comment("The coupon's id, such as cpn_01J…."),
		field.String("campaign_id").NotEmpty().Immutable().
			Comment("The campaign the code unlocks."),
		field.String("code").NotEmpty().MaxLen(64).Immutable().Annotations(entgql.OrderField("CODE")).
			Comment("The code, in capitals: codes are matched without regard to case."),
		field.Int("max_uses").Default(1).Positive().Immutable().
			Comment("How many redemptions the code allows: 1 for a single-use code."),
		field.Int("uses").Default(0).NonNegative().
			Comment("Redemptions of the code so far, less those rolled back."),
		field.Time("last_used_at").Optional().Nillable().
			Comment("When the code was last redeemed."),
		field.String("note").Default("").MaxLen(200).
			Comment("Free text about the code, such as whom it was sent to; empty when none."),
	}
}

func (Coupon) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Coupon) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("campaign", Campaign.Type).Ref("coupons").Field("campaign_id").Unique().Required().Immutable().
			Comment("The campaign the code unlocks."),
	}
}

func (Coupon) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "code").Unique(),
		index.Fields("campaign_id"),
	}
}

func (Coupon) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A coupon code of a campaign that requires one, single-use or with its own limit of uses."),
		entgql.RelayConnection(),
		entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput),
	}
}
