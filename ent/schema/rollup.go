package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"

	"github.com/fideliza/fideliza/ent/privacy"
)

// The dashboards' rollups (migration 0027): tables the database's triggers
// keep in the statement that writes the rows they summarise, so ent only
// reads them, as views. Their tenant_id is filtered by the same privacy
// rule as every tenant-owned entity's; nothing reads them by hand-written
// SQL. Money is whole cents plus the part below the cent in 10^-8 R$.

// RollupMixin is TenantMixin for a rollup: the tenant's field and the
// tenant filter on every read (a view has no mutations and no edges).
type RollupMixin struct{ mixin.Schema }

func (RollupMixin) Fields() []ent.Field {
	return []ent.Field{field.String("tenant_id").Comment("The tenant the rollup counts.")}
}

// Policy of the rollups: a tenant's principals read their own tenant's.
func (RollupMixin) Policy() ent.Policy {
	return privacy.Policy{Query: privacy.QueryPolicy{allowSystem(), filterByTenant()}}
}

// rollupView names the table a rollup reads and keeps it out of GraphQL.
func rollupView(table string) []schema.Annotation {
	return []schema.Annotation{entsql.Table(table), entgql.Skip(entgql.SkipAll)}
}

// money is a rollup's amount in two columns, name_cents and name_sub.
func money(name string) []ent.Field {
	return []ent.Field{field.Int64(name + "_cents"), field.Int64(name + "_sub")}
}

// RollupSalesDay is the sales of a store on a local day.
type RollupSalesDay struct{ ent.View }

func (RollupSalesDay) Annotations() []schema.Annotation { return rollupView("rollup_sales_days") }
func (RollupSalesDay) Mixin() []ent.Mixin               { return []ent.Mixin{RollupMixin{}} }
func (RollupSalesDay) Fields() []ent.Field {
	fs := []ent.Field{field.String("day"), field.String("store_id"), field.Int64("sales")}
	for _, m := range []string{"amount", "discount", "payable"} {
		fs = append(fs, money(m)...)
	}
	return fs
}

// RollupCampaignDay is a campaign's redemptions on a local day.
type RollupCampaignDay struct{ ent.View }

func (RollupCampaignDay) Annotations() []schema.Annotation { return rollupView("rollup_campaign_days") }
func (RollupCampaignDay) Mixin() []ent.Mixin               { return []ent.Mixin{RollupMixin{}} }
func (RollupCampaignDay) Fields() []ent.Field {
	fs := []ent.Field{field.String("campaign_id"), field.String("day"), field.Int64("redemptions")}
	for _, m := range []string{"discount", "cashback", "paid"} {
		fs = append(fs, money(m)...)
	}
	return fs
}

// RollupPointsDay is the ledger's movements on a local day.
type RollupPointsDay struct{ ent.View }

func (RollupPointsDay) Annotations() []schema.Annotation { return rollupView("rollup_points_days") }
func (RollupPointsDay) Mixin() []ent.Mixin               { return []ent.Mixin{RollupMixin{}} }
func (RollupPointsDay) Fields() []ent.Field {
	return []ent.Field{field.String("day"), field.Int64("net")}
}

// RollupCustomerDay is a customer's active local day.
type RollupCustomerDay struct{ ent.View }

func (RollupCustomerDay) Annotations() []schema.Annotation { return rollupView("rollup_customer_days") }
func (RollupCustomerDay) Mixin() []ent.Mixin               { return []ent.Mixin{RollupMixin{}} }
func (RollupCustomerDay) Fields() []ent.Field {
	return []ent.Field{field.String("customer_id"), field.String("day"), field.Int64("events")}
}

// RollupCampaignCustomer is what a customer paid within the period of a
// campaign with a holdout: their sales not cancelled, how many and the
// amount payable (migration 0045).
type RollupCampaignCustomer struct{ ent.View }

func (RollupCampaignCustomer) Annotations() []schema.Annotation {
	return rollupView("rollup_campaign_customers")
}
func (RollupCampaignCustomer) Mixin() []ent.Mixin { return []ent.Mixin{RollupMixin{}} }
func (RollupCampaignCustomer) Fields() []ent.Field {
	return append([]ent.Field{field.String("campaign_id"), field.String("customer_id"), field.Int64("sales")}, money("paid")...)
}

// RollupActivePair counts the customers active on day whose previous
// active day was prev_day ("" for none): the customers active within
// [d1, d2] are those of the pairs with d1 <= day <= d2 and prev_day < d1.
type RollupActivePair struct{ ent.View }

func (RollupActivePair) Annotations() []schema.Annotation { return rollupView("rollup_active_pairs") }
func (RollupActivePair) Mixin() []ent.Mixin               { return []ent.Mixin{RollupMixin{}} }
func (RollupActivePair) Fields() []ent.Field {
	return []ent.Field{field.String("day"), field.String("prev_day"), field.Int64("customers")}
}

// RollupCustomerStore is a customer's processed sales in a store (a sale
// returned or cancelled whole is none): how many, and the latest sold_at
// (migration 0037), the purchase facts of the audiences' rules.
type RollupCustomerStore struct{ ent.View }

func (RollupCustomerStore) Annotations() []schema.Annotation {
	return rollupView("rollup_customer_stores")
}
func (RollupCustomerStore) Mixin() []ent.Mixin { return []ent.Mixin{RollupMixin{}} }
func (RollupCustomerStore) Fields() []ent.Field {
	return []ent.Field{field.String("customer_id"), field.String("store_id"), field.Int64("purchases"),
		field.Time("last_sold_at")}
}
