package schema

import (
	"encoding/json"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// Redemption is a campaign benefit given to a customer for an order.
type Redemption struct{ ent.Schema }

func (Redemption) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Redemption)).Immutable().
			Comment("The redemption's id, such as red_01J…."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the benefit was redeemed."),
		field.String("campaign_id").NotEmpty().Immutable().
			Comment("Id of the campaign redeemed."),
		field.String("customer_id").NotEmpty().Immutable().
			Comment("Id of the customer who received the benefit."),
		field.String("order_id").NotEmpty().MaxLen(128).Immutable().
			Comment("The order's id in the client's system; for a point-of-sale discount, the sale's receipt number."),
		field.String("validation_token_id").Optional().Nillable().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The validation redeemed; none for a discount given at the point of sale."),
		field.String("sale_id").Optional().Nillable().Immutable().
			Comment("The sale a point-of-sale discount was given in."),
		field.Bool("over_limit").Default(false).Immutable().
			Comment("A point-of-sale discount recorded after the campaign's limit was reached: the POS had already given it."),
		field.Other("amount_paid", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("What the customer paid for the order, in R$."),
		field.Other("discount_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("Discount given, in R$ (0 for other types)."),
		field.Other("cashback_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("Cashback promised, in R$ (0 for other types)."),
		field.Int64("bonus_points").Default(0).Immutable().
			Comment("Bonus points given (0 for other types), credited once the order's points are."),
		field.JSON("benefit", json.RawMessage{}).Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("benefit_applied as answered to the client."),
		field.Time("rolled_back_at").Optional().Nillable().
			Comment("When the redemption was undone (its order refunded, or every discounted unit of its sale returned); it no longer counts toward the campaign's limits."),
		field.String("rollback_reason").Optional().Nillable().MaxLen(500).
			Comment("Why the redemption was undone."),
		field.String("store_code").Default("").MaxLen(128).Immutable().
			Comment("The store the benefit was given at (validate's store_id, the sale's store); empty online."),
		field.String("coupon_id").Optional().Nillable().Immutable().
			Comment("The coupon code the redemption used, for a campaign that requires one."),
		field.Other("budget_returned", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Skip()).
			Comment("R$ of the redemption its sale's partial returns gave back to the campaign's budgets (none: nothing)."),
	}
}

func (Redemption) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Redemption) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("campaign", Campaign.Type).Ref("redemptions").Field("campaign_id").Unique().Required().Immutable().
			Comment("The campaign redeemed."),
		edge.From("customer", Customer.Type).Ref("redemptions").Field("customer_id").Unique().Required().Immutable().
			Comment("The customer who received the benefit."),
		edge.To("validation_token", ValidationToken.Type).Field("validation_token_id").Unique().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
		edge.To("sale", Sale.Type).Field("sale_id").Unique().Immutable().
			Comment("The sale a point-of-sale discount was given in; none for a redemption of a cart validation."),
	}
}

func (Redemption) Indexes() []ent.Index {
	return []ent.Index{
		// A validated cart gives each campaign's benefit once; a redemption
		// rolled back frees its token for the campaign.
		index.Fields("validation_token_id", "campaign_id").Unique().Annotations(entsql.IndexWhere("rolled_back_at IS NULL")),
		index.Fields("tenant_id", "campaign_id", "customer_id"),
		index.Fields("tenant_id", "customer_id", "order_id"),
		// Time-ordered lists and the dashboards' period edges (issue 38).
		index.Fields("tenant_id", "created_at"),
		// A sale records each campaign's discount once.
		index.Fields("sale_id", "campaign_id").Unique(),
	}
}

func (Redemption) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A campaign benefit given on an order."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's redemptions, oldest first unless ordered, with filters."),
	}
}
