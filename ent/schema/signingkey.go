package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// SigningKey is a key the token service signs access tokens with. Only the
// service itself reads it; its public half is published in the JWKS. Its
// private half is sealed as documents are.
type SigningKey struct{ ent.Schema }

func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.SigningKey)).Immutable().
			Comment("The key id (kid) of the JWS header."),
		field.String("algorithm").Default("ES256").Immutable(),
		field.Bytes("private_key").Sensitive().Immutable().ValueScanner(sealed.Bytes).
			Comment("PKCS #8 DER private key, sealed with the data key: a backup alone signs no token."),
		field.Time("created_at").Default(now).Immutable(),
		field.Time("retired_at").Optional().Nillable().
			Comment("When a newer key took over signing; published until its last token expires."),
	}
}

func (SigningKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
