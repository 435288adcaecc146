package schema

import (
	"context"
	"regexp"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	gen "github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/hook"
	"github.com/fideliza/fideliza/ent/schema/fold"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

var datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// Customer is a consumer enrolled in a tenant's loyalty programme.
type Customer struct{ ent.Schema }

func (Customer) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Customer)).Immutable().
			Comment("The customer's id, such as cus_01J…."),
		field.String("external_id").Optional().Nillable().MaxLen(128).
			Comment("Identifier of the customer in the originating system."),
		field.String("name").Default("").
			Annotations(entgql.OrderField("NAME")).
			Comment("Full name; empty for a customer pre-registered at the point of sale."),
		field.String("name_search").Default("").
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Name folded for accent- and case-insensitive search, kept by a hook."),
		field.String("email").Optional().Nillable().
			Comment("E-mail as given; unique per tenant regardless of case."),
		field.String("email_key").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Lower-cased e-mail, kept by a hook, for the per-tenant unique index."),
		field.Enum("document_type").Values("CPF", "CNPJ").Default("CPF").
			Comment("Kind of Brazilian taxpayer number in document."),
		field.String("document").NotEmpty().MaxLen(14).ValueScanner(sealed.Text).
			// Never exposed nor filterable by parts: GraphQL shows documentMasked
			// and filters by equality with a complete document (schema/customer.graphql).
			Annotations(entgql.Skip(entgql.SkipType, entgql.SkipWhereInput)).
			Comment("CPF (11 digits) or CNPJ (14 characters), without formatting; sealed in the database (find it by document_index). Rendered masked by the REST interfaces."),
		field.String("document_index").Optional().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Blind index of document, kept by a hook: lookups and the per-tenant unique index. Empty only until a database from before sealing is sealed at start."),
		field.String("phone").Optional().Nillable().Comment("E.164 phone number."),
		field.String("birth_date").Optional().Nillable().Match(datePattern).
			Comment("Birth date, YYYY-MM-DD."),
		field.Enum("gender").Values("M", "F", "NB").Optional().Nillable().
			Comment("M, F or NB (non-binary), when given."),
		field.String("address_street").Optional().Nillable().
			Comment("Street and number of the postal address."),
		field.String("address_city").Optional().Nillable().
			Comment("City of the postal address."),
		field.String("address_state").Optional().Nillable().
			Comment("State of the postal address, such as SP."),
		field.String("address_zip_code").Optional().Nillable().
			Comment("Postal code (CEP) of the postal address."),
		field.Enum("level").Values("bronze", "silver", "gold", "diamond").Default("bronze").
			Annotations(entgql.OrderField("LEVEL")).
			Comment("Loyalty level, from points earned in the trailing 12 months (local days of the tenant's time zone)."),
		field.Time("level_grace_since").Optional().Nillable().
			Comment("Since when the points earned no longer hold the level: it is kept for the tenant's downgrade grace period after this instant, then lowered. Empty while the points hold it."),
		field.Int64("points_balance").Default(0).NonNegative().
			Annotations(entgql.OrderField("POINTS_BALANCE")).
			Comment("Current spendable points balance, never negative; the balance plus the pending points less the debt is always the sum of the points ledger."),
		field.Int64("points_pending").Default(0).NonNegative().
			Comment("Points earned but not spendable yet: the tenant's pending period after a sale or order has not passed. A return inside it takes these back first."),
		field.Int64("points_debt").Default(0).NonNegative().
			Comment("Points owed: reversed after they were spent (a return). The next credits settle it first; nothing can be spent while it is open."),
		field.Other("lifetime_value", decimal.Decimal{}).SchemaType(decimalColumn).
			Default(decimal.Zero).
			Annotations(entgql.Type("Money")).
			Comment("Total spent, in R$."),
		field.Int64("lifetime_value_cents").Default(0).
			Annotations(entgql.OrderField("LIFETIME_VALUE"),
				entgql.Skip(entgql.SkipType, entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The lifetime value in cents (rounded half away from zero), kept by a hook: the order and the comparisons by lifetime value, which a decimal stored as text (SQLite) cannot give."),
		field.Int64("sales_count").Default(0).NonNegative().
			Annotations(entgql.OrderField("SALES_COUNT"),
				entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The customer's purchases: their sales processed and not returned or cancelled whole (the audiences' purchases), recounted as a sale is processed or returned."),
		field.Time("last_purchase_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("When the latest of those purchases was made (the sale's date); empty without one."),
		field.Int64("last_purchase_unix").Default(0).
			Annotations(entgql.OrderField("LAST_PURCHASE_AT"),
				entgql.Skip(entgql.SkipType, entgql.SkipWhereInput, entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("last_purchase_at in whole seconds since 1970 (0 without one), kept by a hook: the order by last purchase, the same on both databases, without NULLs (which cursors cannot carry)."),
		field.Bool("consent_marketing_email").Default(false).
			Comment("Whether the customer agreed to marketing by e-mail."),
		field.Bool("consent_marketing_sms").Default(false).
			Comment("Whether the customer agreed to marketing by SMS."),
		field.Time("consent_updated_at").Optional().Nillable().
			Comment("When a consent flag last changed."),
		field.Bool("consent_marketing_whatsapp").Default(false).
			Comment("Whether the customer agreed to marketing by WhatsApp."),
		field.Bool("consent_data_sharing").Default(false).
			Comment("Whether the customer agreed to the sharing of their data with the retailer's partners."),
		field.Time("erased_at").Optional().Nillable().
			Comment("When the customer's personal data was erased (LGPD); its points, sales and redemptions stay under this pseudonymous record."),
	}
}

func (Customer) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Customer) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("segments", Segment.Type).
			Annotations(entgql.RelayConnection()).
			Comment("Segments the customer belongs to."),
		edge.To("points_entries", PointsEntry.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The customer's points ledger, newest last."),
		edge.To("wallet_entries", WalletEntry.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The movements of the customer's money wallets (cashback in R$), newest last."),
		edge.To("gift_cards", GiftCard.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The gift cards bound to the customer."),
		edge.To("redemptions", Redemption.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("Campaign benefits the customer redeemed."),
		edge.From("sales", Sale.Type).Ref("customer").
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("Sales registered for the customer at the points of sale."),
		edge.To("consent_changes", ConsentChange.Type).
			Annotations(entgql.RelayConnection(), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The history of the customer's consents, oldest first."),
		edge.To("score", CustomerScore.Type).Unique().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The customer's churn score (the v2 predictive segments); none until the tenant's customers are scored."),
	}
}

func (Customer) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "document_index").Unique(),
		index.Fields("tenant_id", "email_key").Unique(),
		index.Fields("tenant_id", "external_id"),
		index.Fields("tenant_id", "id"),
		// The customers by lifetime value (GraphQL's LIFETIME_VALUE, GET
		// /v1/customers?order_by=lifetime_value), the id breaking ties.
		index.Fields("tenant_id", "lifetime_value_cents", "id"),
		// By purchases and by last purchase (SALES_COUNT, LAST_PURCHASE_AT;
		// order_by=sales_count, last_purchase_at).
		index.Fields("tenant_id", "sales_count", "id"),
		index.Fields("tenant_id", "last_purchase_unix", "id"),
	}
}

func (Customer) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A shopper of the retailer, identified by CPF (or CNPJ), with a points balance and a loyalty level."),
		// A balance never goes below zero, whatever code path writes it.
		entsql.Checks(map[string]string{"customers_points_balance_nonnegative": "points_balance >= 0"}),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's customers, oldest first unless ordered, with filters."),
	}
}

func (Customer) Hooks() []ent.Hook {
	return []ent.Hook{keepEmailKey, keepNameSearch, keepLifetimeValueCents, keepLastPurchaseUnix, keepBlindIndex("document", "document_index")}
}

// keepLifetimeValueCents derives the lifetime value in cents that the
// order and the comparisons by lifetime value read.
func keepLifetimeValueCents(next ent.Mutator) ent.Mutator {
	return hook.CustomerFunc(func(ctx context.Context, m *gen.CustomerMutation) (ent.Value, error) {
		if v, ok := m.LifetimeValue(); ok {
			m.SetLifetimeValueCents(cents(v))
		}
		return next.Mutate(ctx, m)
	})
}

// keepLastPurchaseUnix derives the last purchase's seconds that the order
// by last purchase reads.
func keepLastPurchaseUnix(next ent.Mutator) ent.Mutator {
	return hook.CustomerFunc(func(ctx context.Context, m *gen.CustomerMutation) (ent.Value, error) {
		if t, ok := m.LastPurchaseAt(); ok {
			m.SetLastPurchaseUnix(t.Unix())
		} else if m.LastPurchaseAtCleared() {
			m.SetLastPurchaseUnix(0)
		}
		return next.Mutate(ctx, m)
	})
}

// cents is an amount in R$ in whole cents, rounded half away from zero.
func cents(v decimal.Decimal) int64 { return v.Shift(2).Round(0).IntPart() }

// keepNameSearch derives the folded name that search compares.
func keepNameSearch(next ent.Mutator) ent.Mutator {
	return hook.CustomerFunc(func(ctx context.Context, m *gen.CustomerMutation) (ent.Value, error) {
		if name, ok := m.Name(); ok {
			m.SetNameSearch(fold.Text(name))
		}
		return next.Mutate(ctx, m)
	})
}

// keepEmailKey derives the lower-cased e-mail the unique index uses, so "Ana@x.com"
// and "ana@x.com" are one customer whatever path wrote them.
func keepEmailKey(next ent.Mutator) ent.Mutator {
	return hook.CustomerFunc(func(ctx context.Context, m *gen.CustomerMutation) (ent.Value, error) {
		if email, ok := m.Email(); ok {
			m.SetEmailKey(strings.ToLower(strings.TrimSpace(email)))
		}
		if m.EmailCleared() {
			m.ClearEmailKey()
		}
		return next.Mutate(ctx, m)
	})
}
