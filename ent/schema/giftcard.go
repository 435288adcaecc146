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

// GiftCard is R$ of stored value behind a code, each card its own balance
// in whole cents and its own single lot: the whole balance expires at the
// card's expires_at. Its code is never stored: only its SHA-256 and its
// last four characters. Its row is written under its own row lock
// (domain/giftcard), and the conditional updates and the checks refuse a
// negative balance even if a lock were missed.
type GiftCard struct{ ent.Schema }

func (GiftCard) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.GiftCard)).Immutable().
			Comment("The card's id, such as gcd_01J…."),
		field.Time("created_at").Default(now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the card was issued (UTC)."),
		field.String("code_hash").NotEmpty().Immutable().Sensitive().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("SHA-256 of the card's code as normalized: the code itself is shown once, when issued."),
		field.String("code_last4").NotEmpty().MaxLen(4).Immutable().
			Comment("The last four characters of the code, to tell cards apart on receipts and screens."),
		field.String("batch_id").Optional().Nillable().Immutable().MaxLen(64).
			Comment("The batch the card was issued in, when several were issued at once."),
		field.String("customer_id").Optional().Nillable().
			Comment("The customer the card is bound to; null for a bearer card."),
		field.Enum("status").Values("inactive", "active", "expired", "cancelled").
			Comment("inactive: issued, waiting for the sale that activates it; active: spendable until it expires; expired: its time came; cancelled: withdrawn."),
		field.Int64("initial_cents").Positive().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The card's face value in cents (GraphQL's initialAmount, in R$)."),
		field.Int64("balance_cents").Default(0).NonNegative().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("What the card holds now, in cents: the sum of its entries."),
		field.Int64("loaded_cents").Default(0).NonNegative().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Cents loaded after the issue, transfers in included."),
		field.Int64("redeemed_cents").Default(0).NonNegative().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Cents spent, less those refunded: what a refund may give back."),
		field.Time("expires_at").Immutable().
			Annotations(entgql.OrderField("EXPIRES_AT")).
			Comment("When the card's balance expires, whole."),
		field.Time("activated_at").Optional().Nillable().
			Comment("When the card became spendable."),
		field.Time("cancelled_at").Optional().Nillable().
			Comment("When the card was cancelled."),
		field.Time("expiring_notified_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("When the gift_card.expiring event of the card was recorded."),
		field.String("store_code").Default("").Immutable().MaxLen(128).
			Comment("The store the card was issued for, when there is one."),
		field.String("note").Default("").Immutable().MaxLen(200).
			Comment("Free text about the card or its batch: whom it was issued to, the promotion."),
	}
}

func (GiftCard) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (GiftCard) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customer", Customer.Type).Ref("gift_cards").Field("customer_id").Unique().
			Comment("The customer the card is bound to."),
		edge.To("entries", GiftCardEntry.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The card's movements, newest last."),
	}
}

// Policy: cards are cancelled, never deleted, by a tenant's principals.
func (GiftCard) Policy() ent.Policy { return ledgerPolicy() }

func (GiftCard) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "code_hash").Unique(),
		index.Fields("tenant_id", "customer_id", "expires_at"),
		index.Fields("tenant_id", "batch_id"),
		index.Fields("status", "expires_at"),
	}
}

func (GiftCard) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A gift card: R$ of stored value behind a code, spent in part or whole until it expires, optionally bound to a customer."),
		entsql.Checks(map[string]string{"gift_cards_cents_nonnegative": "balance_cents >= 0 AND loaded_cents >= 0 AND redeemed_cents >= 0"}),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's gift cards, oldest first unless ordered, with filters; codes are never shown."),
		entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput),
	}
}
