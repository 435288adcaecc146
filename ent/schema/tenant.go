package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// decimalColumn keeps money exact on both databases: numeric on PostgreSQL,
// text on SQLite (whose NUMERIC affinity would turn values into floats).
var decimalColumn = map[string]string{dialect.Postgres: "numeric(20,8)", dialect.SQLite: "text"}

// Tenant is a retailer. Its id is a UUID because it appears in the POS paths.
type Tenant struct{ ent.Schema }

func (Tenant) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(uuid.NewString).Immutable().
			Match(uuidPattern).Comment("UUID of the tenant."),
		field.String("name").NotEmpty().
			Annotations(entgql.OrderField("NAME")).Comment("Display name of the retailer."),
		field.Bool("active").Default(true).
			Comment("Inactive tenants are answered 404 on the point-of-sale paths."),
		field.Bool("pre_registration").Default(false).
			Comment("Identify creates unknown customers with status PRE_REGISTER."),
		field.Bool("sale_registration").Default(true).
			Comment("Whether the point of sale may register sales."),
		field.Other("sale_tolerance", decimal.Decimal{}).SchemaType(decimalColumn).
			Default(decimal.RequireFromString("0.10")).
			Annotations(entgql.Type("Money")).
			Comment("Accepted difference in R$ in each check of a registered sale's values: the items against sale.amount, their discounts against discountAmount, amount less discounts against amountPayable, the payments against amountPayable. A sale beyond it is refused (422)."),
		field.Other("points_per_real", decimal.Decimal{}).SchemaType(decimalColumn).
			Default(decimal.NewFromInt(1)).
			Annotations(entgql.Type("Decimal")).
			Comment("Points earned per whole R$ 1 paid."),
		field.Other("points_value", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Value in R$ of one point spent as money at the till or at checkout (0.01: 100 points pay R$ 1.00), exact: it may be a fraction of a cent (0.005); none: 0.01."),
		field.Int64("points_spend_min").Default(0).NonNegative().
			Comment("The fewest points a customer may spend at once (0: any number)."),
		field.Other("points_spend_max_share", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("The largest share of a sale or order payable with points, from 0 to 1 (0.5: half); none: 0.5."),
		field.Other("points_spend_max_share_silver", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Silver customers' largest share payable with points, 0 to 1; none: the programme's."),
		field.Other("points_spend_max_share_gold", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Gold customers' largest share payable with points, 0 to 1; none: the programme's."),
		field.Other("points_spend_max_share_diamond", decimal.Decimal{}).SchemaType(decimalColumn).Optional().Nillable().
			Annotations(entgql.Type("Decimal")).
			Comment("Diamond customers' largest share payable with points, 0 to 1; none: the programme's."),
		field.Strings("points_spend_channels").Optional().
			Comment("Channels where points pay as money: pdv (the till), ecommerce (checkout); none (the default) turns spending off."),
		field.Int("points_expiry_months").Default(12).Positive().
			Comment("Months after which credited points expire, at the local midnight that ends the day they were credited on, that many months later."),
		field.String("time_zone").Default("America/Sao_Paulo").NotEmpty().
			Comment("IANA time zone of the programme: points expire at its midnights, the 12-month level window counts its days, and the dashboards' days are its days."),
		field.Int("points_pending_days").Default(0).NonNegative().
			Comment("Days after a sale or order before its earned points become spendable (0: at once); they are released at the local midnight that starts that day. A return inside the period takes back pending points first."),
		field.Bool("cashback_as_points").Default(true).
			Comment("Whether cashback campaigns credit points at points_per_real (true, the programme's behaviour before wallets) or R$ in the customer's cashback wallet (false), pending for points_pending_days and expiring after points_expiry_months."),
		field.Strings("cashback_spend_channels").Default([]string{"ecommerce", "pdv"}).
			Annotations(entsql.Default(`["ecommerce", "pdv"]`)).
			Comment("Channels where the cashback wallet pays: pdv (the till), ecommerce (checkout); both by default, none turns spending off."),
		field.Other("cashback_spend_max_share", decimal.Decimal{}).SchemaType(decimalColumn).
			Default(decimal.NewFromInt(1)).
			Annotations(entgql.Type("Decimal"), entsql.Default("1")).
			Comment("The largest share of a sale or order payable with cashback, from 0 to 1 (0.1: a tenth); 1, the whole, by default."),
		field.Other("cashback_spend_min", decimal.Decimal{}).SchemaType(decimalColumn).
			Default(decimal.Zero).
			Annotations(entgql.Type("Money"), entsql.Default("0")).
			Comment("The fewest R$ of cashback a customer may spend at once (0: any amount)."),
		field.Int("level_grace_days").Default(0).NonNegative().
			Comment("Days a customer keeps a level after the points earned in 12 months fall below its threshold (0: the level drops at once); a customer.level_will_downgrade event announces the drop when the grace begins."),
		field.Int("churn_refit_days").Default(7).Positive().
			Comment("Days between fits of the tenant's churn model; customers are scored daily with the newest model."),
		field.Int64("silver_threshold").Default(1000).NonNegative().
			Comment("Points earned in the trailing 12 months to reach silver."),
		field.Int64("gold_threshold").Default(5000).NonNegative().
			Comment("Points earned in the trailing 12 months to reach gold."),
		field.Int64("diamond_threshold").Default(20000).NonNegative().
			Comment("Points earned in the trailing 12 months to reach diamond."),
		field.Int("price_code_bronze").Default(0).NonNegative().Comment("POS price code of bronze customers."),
		field.Int("price_code_silver").Default(0).NonNegative().Comment("POS price code of silver customers."),
		field.Int("price_code_gold").Default(0).NonNegative().Comment("POS price code of gold customers."),
		field.Int("price_code_diamond").Default(0).NonNegative().Comment("POS price code of diamond customers."),
		field.String("sandbox_of_id").Optional().Nillable().Immutable().
			Comment("The production tenant this sandbox tenant belongs to."),
		// Kept by database triggers on customers (migration 0008), so a list's
		// total needs no count(*) over the tenant; never set by the code.
		field.Int64("customer_count").Default(0).
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("Number of customers of the tenant."),
		field.Int("audit_retention_days").Default(1825).Range(30, 3650).
			Comment("Days the audit trail is kept, 30 to 3650 (five years by default); older events are deleted daily."),
		field.Int("anonymize_inactive_years").Optional().Nillable().Range(1, 20).
			Comment("Customers without activity for this many years are anonymized (LGPD erasure) by an hourly job; none (the default) keeps them."),
		field.Strings("cors_origins").Optional().
			Comment("Origins of the tenant's back-office web apps (such as https://backoffice.example.com) allowed to call /graphql, /v1 and the webhooks API from a browser with a bearer token (CORS), besides the installation's."),
	}
}

func (Tenant) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Hooks record the changes of the tenant's settings (not of its customer
// count, kept by the service).
func (Tenant) Hooks() []ent.Hook { return []ent.Hook{audited("tenant_settings", "customer_count")} }

func (Tenant) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("sandboxes", Tenant.Type).
			Comment("Sandbox tenants linked to this production tenant.").
			From("sandbox_of").Field("sandbox_of_id").Unique().Immutable().
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The production tenant this sandbox tenant belongs to; none for a production tenant."),
	}
}

func (Tenant) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A retailer using Fideliza, with its loyalty settings."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The viewer's own tenant, with its loyalty settings."),
	}
}
