package schema

import (
	"context"
	"slices"

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

// Campaign is a promotion: a discount, cashback, bonus points or a gift.
type Campaign struct{ ent.Schema }

func (Campaign) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Campaign)).Immutable().
			Comment("The campaign's id, such as cmp_01J…."),
		field.String("name").NotEmpty().Annotations(entgql.OrderField("NAME")).
			Comment("The campaign's name."),
		field.String("description").Default("").
			Comment("Free text about the campaign; empty when none."),
		field.Enum("type").Values("discount", "cashback", "bonus_points", "gift").Immutable().
			Comment("What the campaign gives: a discount, cashback, bonus points or a gift; fixed at creation."),
		field.Enum("status").Values("scheduled", "active", "paused", "ended").Default("scheduled").
			Annotations(entgql.OrderField("STATUS")).
			Comment("The campaign's status: it follows startsAt and endsAt (stored within a minute of each passing) unless an operator paused or ended the campaign."),
		field.Time("starts_at").Annotations(entgql.OrderField("STARTS_AT")).
			Comment("When the campaign starts giving its benefit."),
		field.Time("ends_at").Annotations(entgql.OrderField("ENDS_AT")).
			Comment("When the campaign stops giving its benefit; it is ended from then on."),
		field.String("segment_id").Optional().Nillable().
			Comment("Target segment; absent means every customer."),
		field.Enum("predictive_segment").Values("churn_risk_high", "churn_risk_medium", "churn_risk_low", "at_risk_high_value").
			Optional().Nillable().
			Comment("Target predictive segment (the v2 churn scores), instead of a segment; absent means none."),
		field.Strings("channels").Optional().
			Comment("Channels (pdv, ecommerce, app, …); absent means every channel."),
		field.Strings("store_codes").Optional().
			Comment("Codes of the stores the campaign is for; with store_groups absent too, every store."),
		field.Strings("store_groups").Optional().
			Comment("Store groups (regions) the campaign is for: every store of one of them."),
		field.Enum("discount_mode").Values("percentage", "fixed_amount", "free_shipping").Optional().Nillable().
			Comment("Discount and cashback campaigns: a percentage of the items, a fixed amount in R$, or free shipping."),
		field.Other("discount_value", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Percentage (0–100, exact, fractions of a percent too) or fixed amount in R$."),
		field.Int("credit_after_days").Optional().Nillable().NonNegative().
			Comment("Cashback: days after the redemption the credit is released; 0 means at once."),
		field.Other("multiplier", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Bonus points: multiplier of the points earned."),
		field.String("gift_sku").Optional().Nillable().
			Comment("Gift campaigns: the SKU given."),
		field.Other("min_subtotal", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Money")).
			Comment("Eligibility: minimum cart subtotal in R$."),
		field.Strings("eligible_skus").Optional().Comment("Eligibility: applicable SKUs or GTINs."),
		field.Strings("eligible_categories").Optional().Comment("Eligibility: applicable categories."),
		field.Int("limit_total").Optional().Nillable().Positive().Comment("Most redemptions in all."),
		field.Int("limit_per_customer").Optional().Nillable().Positive().Comment("Most redemptions per customer."),
		field.Other("budget_total", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Money")).
			Comment("Budget: the R$ the campaign may give in all, in discounts and cashback; none means no budget."),
		field.Other("budget_per_store", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Money")).
			Comment("Budget: the R$ each store may give (redemptions without a store count in the total only)."),
		field.Enum("budget_period").Values("day", "week", "month").Optional().Nillable().
			Comment("Budget: the period of budget_per_period, in the tenant's time zone (weeks start on Monday)."),
		field.Other("budget_per_period", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Money")).
			Comment("Budget: the R$ the campaign may give in each budget_period."),
		field.Other("budget_spent", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Money")).
			Comment("Budget: the R$ given so far, in discounts and cashback, less what returns and rollbacks gave back (none: nothing)."),
		field.JSON("budget_spent_by", map[string]decimal.Decimal{}).Optional().
			Annotations(entgql.Skip()).
			Comment("Budget: the R$ given so far by store (store:CODE) and in the current period (day:, week:, month: and its first day)."),
		field.Int("redemptions_count").Default(0).NonNegative().
			Comment("Redemptions so far, of every customer, those over the limit at the point of sale included."),
		field.Enum("stacking").Values("combinable", "exclusive").Optional().Nillable().
			Comment("Stacking: combinable campaigns add up on one order, at the till too; an exclusive campaign applies alone, when it gives more than the combinable ones together. Absent: combinable online, and at the till the one best discount of each item."),
		field.Int("priority").Default(0).Range(-1000, 1000).
			Comment("Stacking: between combinations giving as much, the one holding the highest priority applies."),
		field.Bool("requires_code").Default(false).
			Comment("Only a cart with one of the campaign's coupon codes is eligible."),
		field.Strings("eligible_brands").Optional().Comment("Eligibility: applicable brands, of the tenant's catalogue."),
		field.Int("holdout_basis_points").Default(0).Range(0, 5000).Immutable().
			Comment("Experiment: the share of the target customers held out as a control group, in basis points (1000 = 10%, at most 5000); they get no benefit. 0 holds out no one; fixed at creation."),
	}
}

func (Campaign) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

// Hooks record the creation of campaigns and changes of their status, not
// the counters their redemptions move.
func (Campaign) Hooks() []ent.Hook {
	return []ent.Hook{audited("campaign", "redemptions_count", "budget_spent", "budget_spent_by")}
}

// Interceptors: a campaign's status is shown as of now, from its dates
// (campaignrules.StatusAt), so a query selecting the status column selects
// the dates too; GraphQL selects only the columns of the fields asked for,
// and without them every campaign would read as ended.
func (Campaign) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{ent.InterceptFunc(func(next ent.Querier) ent.Querier {
		return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
			if qc := ent.QueryFromContext(ctx); qc != nil && slices.Contains(qc.Fields, "status") {
				for _, f := range []string{"starts_at", "ends_at"} {
					if !slices.Contains(qc.Fields, f) {
						qc.Fields = append(qc.Fields, f)
					}
				}
			}
			return next.Query(ctx, q)
		})
	})}
}

func (Campaign) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("segment", Segment.Type).Field("segment_id").Unique().
			Comment("The segment the campaign targets; none means every customer."),
		edge.To("redemptions", Redemption.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The campaign's redemptions."),
		edge.To("coupons", Coupon.Type).
			Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The campaign's coupon codes, when it requires one."),
	}
}

func (Campaign) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "status")}
}

func (Campaign) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A promotion: a discount, cashback, bonus points or a gift, for a period, a segment and channels."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's campaigns, oldest first unless ordered, with filters."),
	}
}
