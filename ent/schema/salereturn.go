package schema

import (
	"encoding/json"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// SaleReturn is a return of some of a sale's units, or the cancellation of
// all that remain, as the point of sale sent it; processed in the
// background once the sale is.
type SaleReturn struct{ ent.Schema }

func (SaleReturn) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SaleReturn)).Immutable().
			Comment("The return's id, such as ret_01J…."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the return was received."),
		field.String("sale_id").NotEmpty().Immutable().
			Comment("Id of the sale returned."),
		field.String("external_id").NotEmpty().MaxLen(64).Immutable().
			Comment("The return's or cancellation's id as the point of sale sent it; the same id again is the same return."),
		field.Enum("kind").Values("return", "cancellation").Immutable().
			Comment("return: the units listed; cancellation: every unit not yet returned."),
		field.String("pos_id").Default("").Immutable().
			Comment("The point of sale (terminal) the return came from (store.posId)."),
		field.Time("returned_at").Immutable().
			Comment("When the return was made, as the point of sale sent it (date)."),
		field.String("reason").Default("").MaxLen(500).Immutable().
			Comment("Why, as the point of sale sent it."),
		field.JSON("lines", json.RawMessage{}).Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The units returned: [{line_id, quantity}]."),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).
			Comment("Net value in R$ of the units returned: what was paid for them, after their discounts."),
		field.Enum("status").Values("RECEIVED", "PROCESSED").Default("RECEIVED").
			Comment("RECEIVED until processed (after the sale), then PROCESSED."),
		field.Int64("points_reversed").Default(0).
			Comment("Points the return took back; 0 until processed."),
		field.Time("processed_at").Optional().Nillable().
			Comment("When the return was processed."),
	}
}

func (SaleReturn) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (SaleReturn) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("sale", Sale.Type).Ref("returns").Field("sale_id").Unique().Required().Immutable().
			Comment("The sale returned."),
	}
}

func (SaleReturn) Indexes() []ent.Index {
	return []ent.Index{
		// The same id for the same sale is one return: a retry, not a second.
		index.Fields("tenant_id", "sale_id", "external_id").Unique(),
	}
}

func (SaleReturn) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A return or cancellation of a sale: the units, their net value and the points taken back."),
		entgql.RelayConnection(),
	}
}
