package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// Product is an item of a tenant's catalogue: cart items are enriched with
// its category and brand by GTIN or SKU.
type Product struct{ ent.Schema }

func (Product) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Product)).Immutable().
			Comment("The product's id, such as prd_01J…."),
		field.String("gtin").Optional().Nillable().MaxLen(64).
			Comment("The product's GTIN (EAN barcode); absent when it has none."),
		field.String("sku").Optional().Nillable().MaxLen(128).
			Comment("The product's SKU in the retailer's systems; absent when it has none."),
		field.String("name").NotEmpty().MaxLen(300).Annotations(entgql.OrderField("NAME")).
			Comment("The product's name."),
		field.String("category").Default("").MaxLen(500).
			Comment(`The product's category path, levels separated by " > " (Bebidas > Cervejas); empty when none.`),
		field.String("brand").Default("").MaxLen(200).
			Comment("The product's brand; empty when none."),
	}
}

func (Product) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Product) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "gtin").Unique(),
		index.Fields("tenant_id", "sku").Unique(),
	}
}

func (Product) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A product of the tenant's catalogue: what category and brand campaigns see of a cart item."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's catalogue, oldest first unless ordered."),
	}
}
