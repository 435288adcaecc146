package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// PointsHold reserves points a customer means to pay with at the till or at
// checkout: while open (until it expires) or taken by a sale or order not
// yet processed, its points cannot be held or spent again; processing the
// sale or order turns it into a debit once.
type PointsHold struct{ ent.Schema }

func (PointsHold) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.PointsHold)).Immutable().
			Comment("The hold's id, such as phd_01J…."),
		field.Time("created_at").Default(now).Immutable(),
		field.String("customer_id").NotEmpty().Immutable(),
		field.Enum("channel").Values("pdv", "ecommerce").Immutable(),
		field.String("session").NotEmpty().MaxLen(128).Immutable().
			Comment("The caller's key of the hold (the POS's session, the checkout's order): asking again with it answers the same hold."),
		field.String("store_code").Default("").MaxLen(64).Immutable().
			Comment("The store of a hold made at the till."),
		field.Int64("points").Positive().Immutable(),
		field.Other("amount", decimal.Decimal{}).SchemaType(decimalColumn).Immutable().
			Comment("The R$ the points pay."),
		field.Enum("status").Values("open", "taken", "spent", "released").Default("open").
			Comment("open: reserved until expires_at; taken: a sale or order carries it, to be debited when processed; spent: debited; released: given back (by the caller, on expiry or on a rollback)."),
		field.Time("expires_at").Immutable().
			Comment("When an open hold lapses: its points count as available again from then on."),
		field.String("sale_id").Optional().Nillable().
			Comment("The sale that took the hold."),
		field.String("order_id").Optional().Nillable().MaxLen(128).
			Comment("The online order that took the hold."),
		field.Time("closed_at").Optional().Nillable().
			Comment("When the hold was spent or released."),
	}
}

func (PointsHold) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (PointsHold) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable(),
	}
}

// Policy: holds are released, never deleted, by a tenant's principals.
func (PointsHold) Policy() ent.Policy { return ledgerPolicy() }

func (PointsHold) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "session").Unique(),
		index.Fields("tenant_id", "customer_id", "status"),
		index.Fields("status", "expires_at"),
	}
}

func (PointsHold) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
