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

// WalletEntry is one line of a customer's money wallet, in cents, as
// PointsEntry is of the points ledger: append-only, and the wallet's
// balance less its debt is the sum of its entries.
type WalletEntry struct{ ent.Schema }

func (WalletEntry) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.WalletTx)).Immutable().
			Comment("The entry's id, such as wtx_01J…."),
		field.Time("created_at").Default(now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the entry was written (UTC)."),
		field.String("customer_id").NotEmpty().Immutable().
			Comment("Id of the customer whose wallet moved."),
		field.Enum("wallet").Values(WalletKinds...).Immutable().
			Comment("The wallet that moved: cashback."),
		field.Enum("kind").Values("credit", "debit", "expiration", "reversal", "refund").Immutable().
			Comment("credit: a cashback credited; debit: spent; expiration: a lot expired; reversal: a credit undone, taken from the balance and, when spent, owed as a debt; refund: cents a payment spent given back (its order rolled back), spendable at once."),
		field.Int64("amount_cents").Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Signed change in cents (GraphQL's amount, in R$)."),
		field.Int64("balance_after_cents").NonNegative().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The wallet's spendable balance right after this entry, in cents."),
		field.Int64("debt_after_cents").Default(0).NonNegative().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The wallet's debt right after this entry, in cents."),
		field.Enum("source_kind").Values("redemption", "order", "sale", "return", "lot").Immutable().
			Comment("What caused the entry; with source_id, a source moves a wallet once per kind."),
		field.String("source_id").Optional().Nillable().Immutable().MaxLen(128).
			Comment("The id of the redemption, order, sale, return or lot behind the entry."),
		field.String("store_code").Default("").Immutable().MaxLen(128).
			Comment("The store the movement happened at, when there is one."),
		field.String("reason").Default("").Immutable().MaxLen(500).
			Comment("Why, in words: the campaign's name."),
		field.Time("expires_at").Optional().Nillable().Immutable().
			Comment("When the cents of a credit expire."),
		field.Time("pending_until").Optional().Nillable().Immutable().
			Comment("Until when the cents of a credit are pending, when they wait out a pending period."),
	}
}

func (WalletEntry) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (WalletEntry) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customer", Customer.Type).Ref("wallet_entries").Field("customer_id").
			Unique().Required().Immutable().
			Comment("The customer whose wallet moved."),
	}
}

func (WalletEntry) Indexes() []ent.Index {
	return []ent.Index{
		// A source moves a wallet once per kind.
		index.Fields("tenant_id", "customer_id", "wallet", "kind", "source_kind", "source_id").Unique(),
		index.Fields("tenant_id", "customer_id", "wallet", "id"),
		index.Fields("tenant_id", "created_at"),
	}
}

func (WalletEntry) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One movement of a customer's money wallet (cashback in R$): a credit, a debit, an expiry, a reversal or a refund. Entries are never changed."),
		entgql.RelayConnection(),
	}
}
