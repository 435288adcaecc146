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

// Segment is a named group of customers that campaigns can target: static
// (members added by hand or import) or an audience (members kept by a rule).
type Segment struct{ ent.Schema }

func (Segment) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Segment)).Immutable().
			Comment("The segment's id, such as seg_01J…."),
		field.String("name").NotEmpty().Annotations(entgql.OrderField("NAME")).
			Comment("The segment's name."),
		field.String("description").Default("").
			Comment("Free text about the segment; empty when none."),
		field.Text("rule").Optional().Nillable().
			Comment("An audience's rule over its customers' facts (CEL, domain/audience): its members are kept by it. Null for a static segment, whose members are added by hand or import."),
	}
}

func (Segment) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

// Hooks record the back office's changes of segments and their members,
// and an audience's rule before and after a change.
func (Segment) Hooks() []ent.Hook { return []ent.Hook{auditedKeeping("segment", "rule")} }

func (Segment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("customers", Customer.Type).Ref("segments").
			Annotations(entgql.RelayConnection()).
			Comment("Members of the segment."),
		edge.From("campaigns", Campaign.Type).Ref("segment").
			Annotations(entgql.RelayConnection()).
			Comment("Campaigns targeting the segment."),
	}
}

func (Segment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id")}
}

func (Segment) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A named group of customers that campaigns can target."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's segments, oldest first unless ordered, with filters."),
	}
}
