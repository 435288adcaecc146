package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// CustomerImport is a bulk customer import sent to the API: the file is
// kept in chunks until a worker has loaded it, then dropped; the counts,
// the resume point and the refused rows stay.
type CustomerImport struct{ ent.Schema }

func (CustomerImport) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.CustomerImport)).Immutable(),
		field.Time("created_at").Default(now).Immutable(),
		field.Time("updated_at").Default(now).UpdateDefault(now),
		field.Enum("format").Values("csv", "jsonl").Immutable(),
		field.Bool("dry_run").Default(false).Immutable(),
		field.Enum("status").Values("uploading", "queued", "running", "succeeded", "failed").Default("uploading").
			Comment("uploading until the whole file is stored; queued for a worker; then running and finished."),
		field.Int64("bytes").Default(0).NonNegative().Comment("The file's size."),
		field.String("requested_by").Default("").MaxLen(200).Immutable().Comment("The client id or user who sent it."),
		field.Int("rows").Default(0).NonNegative(),
		field.Int("created").Default(0).NonNegative(),
		field.Int("updated").Default(0).NonNegative(),
		field.Int("refused").Default(0).NonNegative(),
		field.Int("done_line").Default(0).NonNegative().
			Comment("The file's last line whose batch is committed: a worker that takes the job over resumes after it."),
		field.String("error").Default("").MaxLen(1000).Comment("Why the import failed as a whole (a bad header)."),
		field.Time("started_at").Optional().Nillable(),
		field.Time("finished_at").Optional().Nillable(),
	}
}

func (CustomerImport) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (CustomerImport) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("chunks", CustomerImportChunk.Type),
		edge.To("problems", CustomerImportProblem.Type),
	}
}

func (CustomerImport) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "created_at")}
}

func (CustomerImport) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// CustomerImportChunk is a piece of an import's file, in upload order.
type CustomerImportChunk struct{ ent.Schema }

func (CustomerImportChunk) Fields() []ent.Field {
	return []ent.Field{
		field.String("import_id").NotEmpty().Immutable(),
		field.Int("seq").NonNegative().Immutable(),
		field.Bytes("data").ValueScanner(sealed.Bytes), // sealed: it holds CPFs; mutable: an erasure removes a customer's lines
	}
}

func (CustomerImportChunk) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (CustomerImportChunk) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("import", CustomerImport.Type).Ref("chunks").Field("import_id").Unique().Required().Immutable(),
	}
}

func (CustomerImportChunk) Indexes() []ent.Index {
	return []ent.Index{index.Fields("import_id", "seq").Unique()}
}

func (CustomerImportChunk) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// CustomerImportProblem is a row an import refused: its line, the field at
// fault and why, never the row's values.
type CustomerImportProblem struct{ ent.Schema }

func (CustomerImportProblem) Fields() []ent.Field {
	return []ent.Field{
		field.String("import_id").NotEmpty().Immutable(),
		field.Int("line").NonNegative().Immutable(),
		field.String("field").Default("").Immutable(),
		field.String("message").Immutable(),
	}
}

func (CustomerImportProblem) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (CustomerImportProblem) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("import", CustomerImport.Type).Ref("problems").Field("import_id").Unique().Required().Immutable(),
	}
}

func (CustomerImportProblem) Indexes() []ent.Index {
	return []ent.Index{index.Fields("import_id", "line")}
}

func (CustomerImportProblem) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
