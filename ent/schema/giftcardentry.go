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

// GiftCardEntry is one movement of a gift card, in cents, as WalletEntry is
// of a wallet: append-only, and the card's balance is the sum of its
// entries.
type GiftCardEntry struct{ ent.Schema }

func (GiftCardEntry) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.GiftCardTx)).Immutable().
			Comment("The entry's id, such as gce_01J…."),
		field.Time("created_at").Default(now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the entry was written (UTC)."),
		field.String("gift_card_id").NotEmpty().Immutable().
			Comment("Id of the card that moved."),
		field.Enum("kind").Values("issue", "load", "debit", "refund", "transfer_out", "transfer_in", "expiration", "cancellation").Immutable().
			Comment("issue: the face value made spendable (at issue, or when the sale activating the card is processed); load: R$ added; debit: spent; refund: given back; transfer_out and transfer_in: moved to or from another card; expiration: the card expired; cancellation: the card was withdrawn."),
		field.Int64("amount_cents").Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Signed change in cents (GraphQL's amount, in R$)."),
		field.Int64("balance_after_cents").NonNegative().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The card's balance right after this entry, in cents."),
		field.Enum("source_kind").Values("card", "sale", "order", "load", "transfer", "return", "hold").Immutable().
			Comment("What caused the entry; with source_id, a source moves a card once per kind."),
		field.String("source_id").NotEmpty().Immutable().MaxLen(128).
			Comment("The id of the card, sale, order, load, transfer, return or hold behind the entry."),
		field.String("store_code").Default("").Immutable().MaxLen(128).
			Comment("The store the movement happened at, when there is one."),
		field.String("reason").Default("").Immutable().MaxLen(500).
			Comment("Why, in words."),
	}
}

func (GiftCardEntry) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (GiftCardEntry) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("gift_card", GiftCard.Type).Ref("entries").Field("gift_card_id").
			Unique().Required().Immutable().
			Comment("The card that moved."),
	}
}

func (GiftCardEntry) Indexes() []ent.Index {
	return []ent.Index{
		// A source moves a card once per kind.
		index.Fields("tenant_id", "gift_card_id", "kind", "source_kind", "source_id").Unique(),
		index.Fields("tenant_id", "gift_card_id", "id"),
		index.Fields("tenant_id", "created_at"),
	}
}

func (GiftCardEntry) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One movement of a gift card: its issue, a load, a debit, a refund, a transfer, its expiry or cancellation. Entries are never changed."),
		entgql.RelayConnection(),
	}
}
