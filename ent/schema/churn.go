package schema

import (
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

// ChurnModel is a BG/NBD model fitted to a tenant's purchase histories
// (package domain/churn); the newest is the one customers are scored with.
type ChurnModel struct{ ent.Schema }

func (ChurnModel) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.ChurnModel)).Immutable().
			Comment("The model's id, such as chm_01J…."),
		field.Time("fitted_at").Immutable().Annotations(entgql.OrderField("FITTED_AT")).
			Comment("When the model was fitted: the end of the histories it read."),
		field.Int("customers").Immutable().
			Comment("Customers with at least one purchase the model was fitted to."),
		field.Float("r").Immutable().Comment("Shape of the gamma distribution of purchase rates."),
		field.Float("alpha").Immutable().Comment("Scale of the gamma distribution of purchase rates (weeks)."),
		field.Float("a").Immutable().Comment("First shape of the beta distribution of the chance to drop out after a purchase."),
		field.Float("b").Immutable().Comment("Second shape of the beta distribution of the chance to drop out after a purchase."),
		field.Float("log_likelihood").Immutable().Comment("Log-likelihood of the histories under the parameters."),
		field.Other("high_value_threshold", decimal.Decimal{}).SchemaType(decimalColumn).Default(decimal.Zero).Immutable().
			Annotations(entgql.Type("Money"), entsql.Default("0")).
			Comment("The least average purchase in R$ of a high-value customer: the 75th percentile of the tenant's."),
	}
}

func (ChurnModel) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (ChurnModel) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "fitted_at")}
}

func (ChurnModel) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A BG/NBD churn model fitted to a tenant's purchases."),
		entgql.Skip(entgql.SkipAll),
	}
}

// CustomerScore is a customer's churn score under the tenant's newest
// model, and the recency, frequency and monetary value it was computed
// from.
type CustomerScore struct{ ent.Schema }

func (CustomerScore) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.CustomerScore)).Immutable().
			Comment("The score's id, such as csc_01J…."),
		field.String("customer_id").NotEmpty().Immutable().
			Comment("The customer scored."),
		field.Time("scored_at").
			Comment("When the customer was last scored."),
		field.Time("model_fitted_at").Optional().Nillable().
			Comment("When the model the score comes from was fitted; none for a customer the model cannot score."),
		field.Enum("risk").Values("low", "medium", "high", "unknown").Annotations(entgql.OrderField("RISK")).
			Comment("Churn risk from p_alive: low from 0.7 up, medium from 0.4, high below; unknown without a purchase or a fitted model."),
		field.String("reason").Default("").
			Comment("Why the risk is unknown; empty otherwise."),
		field.Float("p_alive").Optional().Nillable().
			Comment("Probability that the customer is still active."),
		field.Float("expected_purchases_90d").Optional().Nillable().
			Comment("Purchases the customer is expected to make in the next 90 days."),
		field.Int("frequency").Default(0).
			Comment("Repeat purchases: days with a purchase after the first."),
		field.Int("recency_days").Optional().Nillable().
			Comment("Days since the last purchase; none without a purchase."),
		field.Other("monetary_value", decimal.Decimal{}).SchemaType(decimalColumn).Default(decimal.Zero).
			Annotations(entgql.Type("Money")).
			Comment("Average value in R$ of the customer's purchases."),
		field.Bool("high_value").Default(false).
			Comment("Whether the average purchase is in the tenant's top quarter (the model's high_value_threshold)."),
	}
}

func (CustomerScore) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (CustomerScore) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customer", Customer.Type).Ref("score").Field("customer_id").Unique().Required().Immutable().
			Comment("The customer scored."),
	}
}

func (CustomerScore) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "risk", "customer_id"),
		// A scoring run replaces a range of customers' scores: with the
		// tenant filter every query carries, only this index bounds the
		// range (the one above would scan the tenant's scores).
		index.Fields("tenant_id", "customer_id"),
	}
}

func (CustomerScore) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A customer's churn score (BG/NBD) and its recency, frequency and monetary value."),
	}
}
