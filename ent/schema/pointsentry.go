package schema

import (
	"context"
	"fmt"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/hook"
	"github.com/fideliza/fideliza/ent/schema/pid"
)

// PointsEntry is one line of a customer's points ledger. The ledger is
// append-only: entries are never changed, and the customer's balance is the
// sum of its entries' points.
type PointsEntry struct{ ent.Schema }

func (PointsEntry) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.PointsTx)).Immutable().
			Comment("The entry's id, such as ptx_01J…."),
		field.Time("created_at").Default(now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the entry was written (UTC)."),
		field.String("customer_id").NotEmpty().Immutable().
			Comment("Id of the customer whose balance moved."),
		field.Enum("kind").Values("credit", "bonus", "debit", "expiration", "adjustment", "reversal", "refund").Immutable().
			Comment("credit: earned on an order; bonus: from a campaign; debit: spent; expiration: a lot expired; adjustment: by an operator; reversal: a credit undone (a return, a refund), its points taken from the balance and, when spent, owed as a debt; refund: points paid with given back by a return or cancellation."),
		field.Int64("points").Immutable().
			Comment("Signed change of the balance."),
		field.Int64("balance_after").NonNegative().Immutable().
			Comment("The customer's balance right after this entry."),
		field.Int64("debt_after").Default(0).NonNegative().Immutable().
			Comment("The customer's points debt right after this entry: points reversed after they were spent."),
		field.Enum("source_kind").Values("order", "sale", "redemption", "operator", "lot", "return").Immutable().
			Comment("What caused the entry; with source_id, a credit of one source happens once."),
		field.String("source_id").Optional().Nillable().Immutable().MaxLen(128).
			Comment("The order id, or the id of the sale, redemption, return or points lot behind the entry; none for an operator's adjustment or a debit without an order."),
		field.String("order_id").Optional().Nillable().Immutable().MaxLen(128).
			Comment("The order a reversal undoes (POST /points/reverse); none otherwise."),
		field.String("reason").Default("").Immutable().MaxLen(500).
			Comment("Why, in words: an operator's reason, a campaign name."),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().Immutable().
			Annotations(entgql.Type("Money")).
			Comment("Order value in R$ the points were earned on."),
		field.Time("expires_at").Optional().Nillable().Immutable().
			Comment("When the points of a credit expire."),
	}
}

func (PointsEntry) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (PointsEntry) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customer", Customer.Type).Ref("points_entries").Field("customer_id").
			Unique().Required().Immutable().
			Comment("The customer whose balance moved."),
	}
}

func (PointsEntry) Indexes() []ent.Index {
	return []ent.Index{
		// A source (an order, a lot) moves points of one kind once.
		index.Fields("tenant_id", "customer_id", "kind", "source_kind", "source_id").Unique(),
		index.Fields("tenant_id", "customer_id", "id"),
		// Time-ordered lists and the dashboards' period edges (issue 38).
		index.Fields("tenant_id", "created_at"),
	}
}

func (PointsEntry) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One movement of the points ledger: a credit, a debit, an expiry or an adjustment. Entries are never changed."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The points ledger of every customer of the tenant, oldest first unless ordered, with filters."),
	}
}

// Hooks record the back office's adjustments in the audit trail.
func (PointsEntry) Hooks() []ent.Hook {
	return []ent.Hook{hook.If(audited("points_adjustment"), isAdjustment)}
}

// isAdjustment matches the creation of a manual adjustment of points, the
// one ledger entry the back office makes.
func isAdjustment(_ context.Context, m ent.Mutation) bool {
	k, ok := m.Field("kind")
	return ok && m.Op().Is(ent.OpCreate) && fmt.Sprint(k) == "adjustment"
}
