package schema

import (
	"context"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/hook"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/tracing"
)

// Event is an entry of the outbox: written in the transaction of the change
// it reports, delivered to webhooks afterwards.
type Event struct{ ent.Schema }

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Event)).Immutable().
			Comment("The event's id, such as evt_01J…; ids sort in order of creation."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When the event happened (UTC)."),
		field.String("type").NotEmpty().Immutable().
			Comment("customer.level_changed, points.expiring, campaign.activated, sale.processed, …"),
		field.String("subject_id").Default("").Immutable().
			Comment("The resource the event is about (a customer id, a campaign id)."),
		field.JSON("data", map[string]any{}).
			Annotations(entgql.Type("Map"), entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField, entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)).
			Comment("The event's data, as delivered."),
		field.Time("published_at").Optional().Nillable().
			Comment("When the event was handed to delivery."),
		field.String("trace_parent").Optional().Immutable().Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The W3C traceparent of the span that recorded the event, when traced: its webhook deliveries join that trace."),
	}
}

// Hooks keep the trace of the change an event reports (docs/observability.md).
func (Event) Hooks() []ent.Hook {
	return []ent.Hook{hook.On(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if parent := tracing.Parent(ctx); parent != "" {
				if err := m.SetField("trace_parent", parent); err != nil {
					return nil, err
				}
			}
			return next.Mutate(ctx, m)
		})
	}, ent.OpCreate)}
}

func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "type", "id"),
		index.Fields("published_at"),
	}
}

func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("Something that happened in the tenant (a level change, a sale processed…), kept in the outbox in order of creation."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's events, oldest first unless ordered, with filters."),
	}
}
