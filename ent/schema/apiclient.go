package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
)

// APIClient is a credential of a tenant's integration: an OAuth client (client
// credentials grant, for /v1, /points and GraphQL) or a POS client (HTTP Basic,
// for the tenant point-of-sale paths). Its id is the public client id.
type APIClient struct{ ent.Schema }

func (APIClient) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Client)).Immutable().
			Comment("The public client id."),
		field.Enum("kind").Values("oauth", "pos").Immutable().
			Comment("oauth: bearer tokens from /auth/token; pos: HTTP Basic on the POS paths."),
		field.String("name").Default("").Comment("A label for people."),
		field.String("secret_hash").Sensitive().NotEmpty().
			Annotations(entgql.Skip(entgql.SkipAll)).
			Comment("SHA-256 of the secret; the secret itself is never stored."),
		field.Strings("scopes").Optional().
			Comment("OAuth scopes the client may be granted."),
		field.Bool("revoked").Default(false).
			Comment("A revoked client authenticates no more."),
	}
}

func (APIClient) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

// Hooks record the back office's changes of clients and secrets.
func (APIClient) Hooks() []ent.Hook { return []ent.Hook{audited("api_client")} }

func (APIClient) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id")}
}

func (APIClient) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A credential of an integration: an OAuth client or a point-of-sale client. Its secret is never shown again after creation or rotation."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's API clients, oldest first unless ordered, with filters; secrets are never shown."),
	}
}
