//go:build ignore

package main

import (
	"log"

	"github.com/vektah/gqlparser/v2/ast"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ext, err := entgql.NewExtension(
		entgql.WithConfigPath("../gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("../schema/ent.graphql"),
		entgql.WithWhereInputs(true),
		entgql.WithNodeDescriptor(false),
		entgql.WithSchemaHook(describeTypes),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./schema", &gen.Config{
		Features: []gen.Feature{
			gen.FeaturePrivacy,
			gen.FeatureEntQL,
			gen.FeatureLock,
			gen.FeatureIntercept,
			gen.FeatureExecQuery,
		},
	}, entc.Extensions(ext))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// describeTypes gives each GraphQL type the text of its ent schema's
// schema.Comment annotation, each connection edge its edge's comment, and
// Query its own: analysts read them in the playground.
func describeTypes(g *gen.Graph, s *ast.Schema) error {
	if q := s.Types["Query"]; q != nil {
		q.Description = "What back-office apps and analysts read: every entity as a connection with filters " +
			"and ordering, lookup by id, and dashboard aggregates. Data is always the viewer's tenant's."
	}
	camel := gen.Funcs["camel"].(func(string) string)
	for _, n := range g.Nodes {
		def := s.Types[n.Name]
		if def == nil {
			continue
		}
		if c, ok := n.Annotations["Comment"].(map[string]any); ok && def.Description == "" {
			def.Description, _ = c["Text"].(string)
		}
		// entgql drops the comment of an edge it turns into a connection.
		for _, e := range n.Edges {
			if f := def.Fields.ForName(camel(e.Name)); f != nil && f.Description == "" {
				f.Description = e.Comment()
			}
		}
	}
	return nil
}
