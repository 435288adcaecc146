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

// WalletKinds are the money wallets a customer may hold besides points:
// cashback in R$ today; gift cards will be another kind, each card a wallet
// of its own.
var WalletKinds = []string{"cashback"}

// Wallet is a customer's balance in one money wallet, in whole cents: the
// sum of its lots' remaining cents, itself the sum of its entries less the
// debt. Its row is written under the customer's lock (domain/wallet), and
// the conditional updates and the checks refuse a negative balance even if
// a lock were missed.
type Wallet struct{ ent.Schema }

func (Wallet) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Wallet)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.String("customer_id").NotEmpty().Immutable(),
		field.Enum("kind").Values(WalletKinds...).Immutable().
			Comment("Which wallet: cashback (R$ a cashback campaign credited)."),
		field.Int64("balance_cents").Default(0).NonNegative().
			Comment("Spendable cents: released, not expired."),
		field.Int64("pending_cents").Default(0).NonNegative().
			Comment("Cents credited but still in their pending period."),
		field.Int64("debt_cents").Default(0).NonNegative().
			Comment("Cents reversed after they were spent, settled by the next credits."),
	}
}

func (Wallet) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Wallet) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable(),
	}
}

// Policy: wallets are moved, never deleted, by a tenant's principals.
func (Wallet) Policy() ent.Policy { return ledgerPolicy() }

func (Wallet) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "customer_id", "kind").Unique(),
	}
}

func (Wallet) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.Skip(entgql.SkipAll),
		entsql.Checks(map[string]string{"wallets_cents_nonnegative": "balance_cents >= 0 AND pending_cents >= 0 AND debt_cents >= 0"}),
	}
}
