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

// WalletHold reserves cents of a money wallet a customer means to pay with
// at the till or at checkout, as PointsHold does points: while open (until
// it expires) or taken by a sale or order not yet processed, its cents
// cannot be held or spent again; spending it debits the wallet once.
type WalletHold struct{ ent.Schema }

func (WalletHold) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.WalletHold)).Immutable().
			Comment("The hold's id, such as whd_01J…."),
		field.Time("created_at").Default(now).Immutable(),
		field.String("customer_id").Optional().Nillable().Immutable().
			Comment("The customer whose wallet is held; none for a gift card bound to no one (its code pays)."),
		field.Enum("wallet").Values("cashback", "gift_card").Immutable().
			Comment("The wallet the cents are held in."),
		field.String("gift_card_id").Optional().Nillable().Immutable().MaxLen(64).
			Comment("The gift card of a gift_card hold; none for cashback."),
		field.Enum("channel").Values("pdv", "ecommerce").Immutable(),
		field.String("session").NotEmpty().MaxLen(128).Immutable().
			Comment("The caller's key of the hold (the POS's session, the checkout's order and wallet): asking again with it answers the same hold."),
		field.String("store_code").Default("").MaxLen(64).Immutable().
			Comment("The store of a hold made at the till."),
		field.Int64("cents").Positive().Immutable().
			Comment("The cents held, R$ × 100."),
		field.Enum("status").Values("open", "taken", "spent", "released").Default("open").
			Comment("open: reserved until expires_at; taken: a sale or order carries it, to be debited when processed; spent: debited; released: given back (by the caller, on expiry or on a rollback, which refunds what was debited)."),
		field.Time("expires_at").Immutable().
			Comment("When an open hold lapses: its cents count as available again from then on."),
		field.String("sale_id").Optional().Nillable().
			Comment("The sale that took the hold."),
		field.String("order_id").Optional().Nillable().MaxLen(128).
			Comment("The online order that took the hold."),
		field.Time("closed_at").Optional().Nillable().
			Comment("When the hold was spent or released."),
	}
}

func (WalletHold) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WalletHold) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Immutable(),
	}
}

// Policy: holds are released, never deleted, by a tenant's principals.
func (WalletHold) Policy() ent.Policy { return ledgerPolicy() }

func (WalletHold) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "session").Unique(),
		index.Fields("tenant_id", "customer_id", "wallet", "status"),
		index.Fields("status", "expires_at"),
		index.Fields("tenant_id", "gift_card_id", "status"),
	}
}

func (WalletHold) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
