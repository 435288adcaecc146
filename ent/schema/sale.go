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
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// Sale is a sale registered by a point of sale. It is stored at once and
// processed by a River job: points, redemptions, lifetime value, level.
type Sale struct{ ent.Schema }

func (Sale) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Sale)).Immutable().
			Comment("The sale's id, such as sal_01J…."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the sale was received."),
		field.String("store_id").NotEmpty().Immutable().
			Comment("Id of the store the sale was made in."),
		field.String("external_id").NotEmpty().MaxLen(20).Immutable().
			Comment("The receipt number the point of sale sent (sale.id)."),
		field.String("pos_id").Default("").Immutable().
			Comment("The point of sale (terminal) the sale came from, as it sent it (sale.store.posId)."),
		field.String("employee_id").Default("").Immutable().
			Comment("The operator at the point of sale, as it sent it (sale.store.employeeId); empty when not sent."),
		field.String("seller_id").Default("").Immutable().
			Comment("The salesperson credited with the sale, as the point of sale sent it (sale.store.sellerId); empty when not sent."),
		field.String("channel").Default("").Immutable().
			Comment("The sales channel the point of sale sent (sale.channel)."),
		field.String("customer_document").Default("").ValueScanner(sealed.Text).
			// As the customer's document: masked and equality-only in GraphQL.
			Annotations(entgql.Skip(entgql.SkipType, entgql.SkipWhereInput)).
			Comment("The CPF or CNPJ sent; 00000000000 for an unidentified customer. Sealed in the database (find it by customer_document_index)."),
		field.String("customer_document_index").Optional().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Blind index of customer_document, kept by a hook."),
		field.Enum("customer_document_type").Values("CPF", "CNPJ").Optional().Nillable().Immutable().
			Comment("Kind of document sent; none for an unidentified customer."),
		field.String("customer_id").Optional().Nillable().
			Comment("The customer the sale was credited to, once processed."),
		field.Time("sold_at").Immutable().Annotations(entgql.OrderField("SOLD_AT")).Comment("sale.date"),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("Gross total in R$."),
		field.Other("amount_payable", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("Payable after discounts, in R$."),
		field.Other("discount_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).
			Comment("Total discount in R$: as the point of sale sent it, else the sum of the items' discounts."),
		field.JSON("fiscal_document", json.RawMessage{}).Optional().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
		field.Enum("status").Values("RECEIVED", "PROCESSED", "FAILED", "PARTIALLY_RETURNED", "RETURNED", "CANCELLED").Default("RECEIVED").
			Annotations(entgql.OrderField("STATUS")).
			Comment("RECEIVED until processed, then PROCESSED, or FAILED when processing gave up (see failureReason)."),
		field.String("failure_reason").Optional().Nillable().
			Comment("Why processing failed, for a FAILED sale."),
		field.Int64("points_credited").Default(0).
			Comment("Points credited to the customer for the sale, bonus points included; 0 until processed."),
		field.Time("processed_at").Optional().Nillable().
			Comment("When the sale was processed."),
		field.Other("returned_amount", decimal.Decimal{}).SchemaType(decimalColumn).Default(decimal.Zero).
			Annotations(entgql.Type("Money"), entsql.Default("0")).
			Comment("Net value in R$ of the units returned so far (returns and cancellation processed)."),
		field.Int64("points_reversed").Default(0).
			Comment("Points taken back by the sale's processed returns and cancellation."),
		field.String("coupon_code").Optional().Nillable().MaxLen(64).Immutable().
			Comment("The coupon code the point of sale sent with the sale (couponCode); its campaign's redemption uses it."),
	}
}

func (Sale) Hooks() []ent.Hook {
	return []ent.Hook{keepBlindIndex("customer_document", "customer_document_index")}
}

func (Sale) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Sale) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("store", Store.Type).Field("store_id").Unique().Required().Immutable().
			Comment("The store the sale was made in."),
		edge.To("customer", Customer.Type).Field("customer_id").Unique().
			Comment("The customer the sale was credited to, once processed; none for an unidentified or unknown customer."),
		edge.To("items", SaleItem.Type).Annotations(entgql.RelayConnection()).
			Comment("The sale's lines."),
		edge.To("payments", SalePayment.Type).
			Comment("The sale's payments."),
		edge.To("returns", SaleReturn.Type).
			Comment("The sale's returns and cancellation, in the order they were received."),
	}
}

func (Sale) Indexes() []ent.Index {
	return []ent.Index{
		// The same receipt from the same store is one sale.
		index.Fields("tenant_id", "store_id", "external_id").Unique(),
		index.Fields("tenant_id", "status"),
		// A customer's purchases, read by the churn scoring in batches of
		// customers.
		index.Fields("tenant_id", "customer_id", "sold_at"),
		index.Fields("tenant_id", "customer_document_index"),
		// Time-ordered lists and the dashboards' period edges (issue 38).
		index.Fields("tenant_id", "sold_at"),
		// A customer's sales not processed (waiting, or failed), read before a
		// later one is processed (processSale keeps a customer's order).
		index.Fields("tenant_id", "customer_document_index", "created_at").
			Annotations(entsql.IndexWhere("processed_at IS NULL")),
	}
}

func (Sale) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A sale registered by a point of sale, processed in the background: points, bonuses and redemptions."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's sales, oldest first unless ordered, with filters."),
	}
}

// SaleItem is a line of a sale.
type SaleItem struct{ ent.Schema }

func (SaleItem) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SaleItem)).Immutable().
			Comment("The item's id, such as sli_01J…."),
		field.String("sale_id").NotEmpty().Immutable().
			Comment("Id of the sale the item belongs to."),
		field.String("line_id").NotEmpty().Immutable().Comment("The item's id in the sale (sequential)."),
		field.String("gtin").NotEmpty().Immutable().
			Comment("The product's GTIN (barcode) as the point of sale sent it."),
		field.String("description").Default("").Immutable().
			Comment("The product's description as the point of sale sent it."),
		field.Other("unit_price", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Decimal")).
			Comment("Unit price in R$, before discounts, exact as the point of sale sent it: it may hold fractions of a cent (fuel by the litre)."),
		field.Other("quantity", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Decimal")).
			Comment("Quantity sold; may be fractional (kg)."),
		field.Other("discount_amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Annotations(entgql.Type("Money")).Comment("Sum of the item's discounts, in R$."),
		field.JSON("discounts", json.RawMessage{}).Optional().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).Comment("The discounts as sent."),
		field.Other("returned_quantity", decimal.Decimal{}).SchemaType(decimalColumn).Default(decimal.Zero).
			Annotations(entgql.Type("Decimal"), entsql.Default("0")).
			Comment("Units returned so far, counting returns received and not yet processed: what remains returnable is quantity less this."),
		field.String("gift_card_id").Optional().Nillable().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The inactive gift card the line sold (its code scanned at the till): activated when the sale is processed, its value earning nothing."),
	}
}

func (SaleItem) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Indexes: a sale's items are read by the sale (processing, the sale's
// outcome); without this every read scans every item ever sold.
func (SaleItem) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("sale_id"),
		// A card is sold by one line of one sale: two tills scanning the
		// same card cannot both sell it.
		index.Fields("tenant_id", "gift_card_id").Unique(),
	}
}

func (SaleItem) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("sale", Sale.Type).Ref("items").Field("sale_id").Unique().Required().Immutable().
			Comment("The sale the item belongs to."),
	}
}

func (SaleItem) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A line of a sale: a product, its quantity, price and discounts."),
		entgql.RelayConnection(),
	}
}

// SalePayment is a payment of a sale.
type SalePayment struct{ ent.Schema }

func (SalePayment) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SalePayment)).Immutable().
			Comment("The payment's id, such as pay_01J…."),
		field.String("sale_id").NotEmpty().Immutable().
			Comment("Id of the sale paid."),
		field.String("payment_id").NotEmpty().Immutable().
			Comment("The payment's id in the sale, as the point of sale sent it."),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().Annotations(entgql.Type("Money")).
			Comment("Amount paid in R$."),
		field.String("method").NotEmpty().Immutable().
			Comment("Payment method as the point of sale sent it, such as CREDIT_CARD."),
		field.String("bin").Default("").Immutable().
			Comment("First digits of the card (BIN), when sent; empty otherwise."),
		field.String("nsu").Default("").Immutable().
			Comment("NSU of the card transaction, when sent; empty otherwise."),
		field.Int("installments").Default(1).Immutable().
			Comment("Number of installments, 1 to 99; 1 when not sent."),
		field.String("hold_id").Optional().Nillable().Immutable().
			Comment("The points hold a POINTS payment spends; none for other methods."),
	}
}

func (SalePayment) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

// Indexes: a sale's payments are read by the sale.
func (SalePayment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("sale_id")}
}

func (SalePayment) Annotations() []schema.Annotation {
	return []schema.Annotation{schema.Comment("A payment of a sale: its method and amount.")}
}

func (SalePayment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("sale", Sale.Type).Ref("payments").Field("sale_id").Unique().Required().Immutable().
			Comment("The sale paid."),
	}
}
