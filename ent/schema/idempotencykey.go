package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// IdempotencyKey remembers the answer to a request sent with an
// Idempotency-Key header, so a retry gets the same answer.
type IdempotencyKey struct{ ent.Schema }

func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.IdemKey)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.String("client_id").NotEmpty().Immutable().Comment("The principal that sent the key."),
		field.String("key").NotEmpty().MaxLen(255).Immutable(),
		field.String("request_hash").NotEmpty().Immutable().Comment("SHA-256 of the method, path and body."),
		field.Int("response_status").Immutable(),
		field.Bytes("response_body").Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

func (IdempotencyKey) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("tenant_id", "client_id", "key").Unique(),
		index.Fields("expires_at"),
	}
}

func (IdempotencyKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
