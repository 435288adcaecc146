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

// WebhookEndpoint is a URL of a tenant's system that receives its events.
type WebhookEndpoint struct{ ent.Schema }

func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Webhook)).Immutable().
			Comment("The endpoint's id, such as whk_01J…."),
		field.String("url").NotEmpty().MaxLen(2048).
			Comment("Where events are POSTed: an https URL (http on loopback only when the operator allows it)."),
		field.Strings("event_types").
			Comment("The event types delivered, such as sale.processed."),
		field.String("description").Default("").MaxLen(500).
			Comment("What the endpoint is for, for people."),
		field.Bool("active").Default(true).
			Comment("An inactive endpoint receives nothing; its pending deliveries fail."),
		field.String("secret").Sensitive().NotEmpty().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The signing secret, whsec_…; kept because every delivery is signed with it."),
		field.String("previous_secret").Sensitive().Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("The secret before the last rotation; deliveries are signed with it too until it expires."),
		field.Time("previous_secret_expires_at").Optional().Nillable().
			Comment("Until when deliveries also carry a signature with the previous secret (UTC)."),
	}
}

func (WebhookEndpoint) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

// Hooks record the changes of webhook endpoints and their secrets.
func (WebhookEndpoint) Hooks() []ent.Hook { return []ent.Hook{audited("webhook_endpoint")} }

func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", WebhookDelivery.Type).
			Annotations(entgql.RelayConnection(), entsql.OnDelete(entsql.Cascade)).
			Comment("Deliveries of events to the endpoint, each with its attempts."),
	}
}

func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "active")}
}

func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A URL of the tenant's systems that receives its events, signed in the Standard Webhooks style."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's webhook endpoints, with filters."),
	}
}

// WebhookDelivery is one event sent to one endpoint, over one or more
// attempts.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Delivery)).Immutable().
			Comment("The delivery's id, such as dlv_01J…."),
		field.String("endpoint_id").NotEmpty().Immutable().Comment("The endpoint delivered to."),
		field.String("event_id").NotEmpty().Immutable().Comment("The event delivered; also the webhook-id header."),
		field.String("event_type").NotEmpty().Immutable().Comment("The event's type."),
		field.Enum("status").Values("pending", "succeeded", "failed").Default("pending").
			Annotations(entgql.OrderField("STATUS")).
			Comment("pending while attempts remain; succeeded on a 2xx answer; failed after the last attempt."),
		field.Int("attempts").Default(0).NonNegative().Comment("Attempts made so far."),
		field.Int("last_status_code").Optional().Nillable().Comment("HTTP status of the last attempt, if an answer came."),
		field.String("last_error").Optional().Nillable().Comment("Why the last attempt failed, when it did."),
		field.Time("next_attempt_at").Optional().Nillable().Comment("When the next attempt is due, while pending (UTC)."),
		field.Time("completed_at").Optional().Nillable().Comment("When it succeeded or failed for good (UTC)."),
	}
}

func (WebhookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (WebhookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).Ref("deliveries").Field("endpoint_id").
			Unique().Required().Immutable().Comment("The endpoint delivered to."),
		edge.To("event", Event.Type).Field("event_id").Unique().Required().Immutable().
			Annotations(entsql.OnDelete(entsql.Cascade)).Comment("The event delivered."),
		edge.To("attempt_log", WebhookAttempt.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)).Comment("Every attempt, oldest first."),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		// An event reaches an endpoint through one delivery, however many
		// dispatchers run.
		index.Fields("endpoint_id", "event_id").Unique(),
		index.Fields("tenant_id", "created_at"),
	}
}

func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One event sent to one webhook endpoint, over one or more attempts."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's webhook deliveries, newest first unless ordered, with filters."),
	}
}

// WebhookAttempt is one HTTP request of a delivery.
type WebhookAttempt struct{ ent.Schema }

func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Attempt)).Immutable().
			Comment("The attempt's id, such as att_01J…."),
		field.String("delivery_id").NotEmpty().Immutable().Comment("The delivery it belongs to."),
		field.Time("attempted_at").Default(now).Immutable().Comment("When the request was sent (UTC)."),
		field.Int("status_code").Optional().Nillable().Immutable().Comment("The HTTP status answered, if any."),
		field.Int64("latency_ms").Default(0).Immutable().Comment("Milliseconds until the answer or the failure."),
		field.String("error").Optional().Nillable().Immutable().Comment("Why no acceptable answer came, when none did."),
		field.String("response_excerpt").Default("").Comment("The first 1,024 bytes of the answer's body."),
	}
}

func (WebhookAttempt) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WebhookAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", WebhookDelivery.Type).Ref("attempt_log").Field("delivery_id").
			Unique().Required().Immutable().Comment("The delivery it belongs to."),
	}
}

func (WebhookAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("One HTTP request of a webhook delivery."),
	}
}
