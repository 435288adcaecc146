package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// WalletLot is what remains of one credit of a money wallet, in cents, as
// PointsLot is for points: debits spend the lots expiring first, an
// expiration takes what is left of a lot when it expires.
type WalletLot struct{ ent.Schema }

func (WalletLot) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.WalletLot)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.String("customer_id").NotEmpty().Immutable(),
		field.Enum("wallet").Values(WalletKinds...).Immutable(),
		field.String("entry_id").NotEmpty().Immutable().Comment("The entry that credited the lot."),
		field.Int64("amount_cents").Positive().Immutable(),
		field.Int64("remaining_cents").NonNegative(),
		field.Time("expires_at").Immutable(),
		field.Time("pending_until").Optional().Nillable().
			Comment("Until when the lot's cents are pending (not spendable); cleared when they are released to the balance."),
		field.Time("expiring_notified_at").Optional().Nillable().
			Comment("When the cashback.expiring event of the lot was recorded."),
	}
}

func (WalletLot) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WalletLot) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable(),
		edge.To("entry", WalletEntry.Type).Field("entry_id").Unique().Required().Immutable(),
	}
}

// Policy: lots are spent and expired, never deleted, by a tenant's principals.
func (WalletLot) Policy() ent.Policy { return ledgerPolicy() }

func (WalletLot) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "customer_id", "wallet", "expires_at"),
		index.Fields("expires_at"),
		index.Fields("pending_until"),
		index.Fields("entry_id").Unique(),
	}
}

func (WalletLot) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(entgql.SkipAll),
		entsql.Checks(map[string]string{"wallet_lots_remaining_within_amount": "remaining_cents >= 0 AND remaining_cents <= amount_cents"}),
	}
}
