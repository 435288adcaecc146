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

// Sale is a sale registered by a point of sale. It is stored at once and
// processed by a River job: points, redemptions, lifetime value, level.
type Sale struct{ ent.Schema }

func (Sale) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Sale)).Immutable(),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the sale was received."),
		field.String("store_id").NotEmpty().Immutable(),
		field.String("external_id").NotEmpty().MaxLen(20).Immutable().
			Comment("The receipt number the point of sale sent (sale.id)."),
		field.String("pos_id").Default("").Immutable(),
		field.String("channel").Default("").Immutable(),
		field.String("customer_document").Default("").Immutable().
			Comment("The CPF or CNPJ sent; 00000000000 for an unidentified customer."),
		field.Enum("customer_document_type").Values("CPF", "CNPJ").Optional().Nillable().Immutable(),
		field.String("customer_id").Optional().Nillable().
			Comment("The customer the sale was credited to, once processed."),
		field.Time("sold_at").Immutable().Annotations(entgql.OrderField("SOLD_AT")).Comment("sale.date"),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Decimal")).Comment("Gross total in R$."),
		field.Other("amount_payable", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Decimal")).Comment("Payable after discounts, in R$."),
		field.Other("discount_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Decimal")),
		field.JSON("fiscal_document", json.RawMessage{}).Optional().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.Enum("status").Values("RECEIVED", "PROCESSED", "FAILED").Default("RECEIVED").
			Annotations(entgql.OrderField("STATUS")),
		field.String("failure_reason").Optional().Nillable(),
		field.Int64("points_credited").Default(0),
		field.Time("processed_at").Optional().Nillable(),
	}
}

func (Sale) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Sale) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("store", Store.Type).Field("store_id").Unique().Required().Immutable(),
		edge.To("customer", Customer.Type).Field("customer_id").Unique(),
		edge.To("items", SaleItem.Type).Annotations(entgql.RelayConnection()),
		edge.To("payments", SalePayment.Type),
	}
}

func (Sale) Indexes() []ent.Index {
	return []ent.Index{
		// The same receipt from the same store is one sale.
		index.Fields("tenant_id", "store_id", "external_id").Unique(),
		index.Fields("tenant_id", "status"),
	}
}

func (Sale) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection(), entgql.QueryField()}
}

// SaleItem is a line of a sale.
type SaleItem struct{ ent.Schema }

func (SaleItem) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SaleItem)).Immutable(),
		field.String("sale_id").NotEmpty().Immutable(),
		field.String("line_id").NotEmpty().Immutable().Comment("The item's id in the sale (sequential)."),
		field.String("gtin").NotEmpty().Immutable(),
		field.String("description").Default("").Immutable(),
		field.Other("unit_price", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Decimal")),
		field.Other("quantity", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Decimal")),
		field.Other("discount_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Decimal")).Comment("Sum of the item's discounts, in R$."),
		field.JSON("discounts", json.RawMessage{}).Optional().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).Comment("The discounts as sent."),
	}
}

func (SaleItem) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (SaleItem) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("sale", Sale.Type).Ref("items").Field("sale_id").Unique().Required().Immutable(),
	}
}

func (SaleItem) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.RelayConnection()}
}

// SalePayment is a payment of a sale.
type SalePayment struct{ ent.Schema }

func (SalePayment) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SalePayment)).Immutable(),
		field.String("sale_id").NotEmpty().Immutable(),
		field.String("payment_id").NotEmpty().Immutable(),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Decimal")),
		field.String("method").NotEmpty().Immutable(),
		field.String("bin").Default("").Immutable(),
		field.String("nsu").Default("").Immutable(),
		field.Int("installments").Default(1).Immutable(),
	}
}

func (SalePayment) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (SalePayment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("sale", Sale.Type).Ref("payments").Field("sale_id").Unique().Required().Immutable(),
	}
}
