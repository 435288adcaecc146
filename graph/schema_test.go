package graph

import (
	"strings"
	"testing"

	"github.com/fideliza/fideliza/graph/generated"
)

// TestSchemaIsDescribed: analysts read the schema in the playground, so
// every type and every field of an object or input carries a description. Generated filter inputs
// (…WhereInput) describe only their groups of predicates.
func TestSchemaIsDescribed(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	builtin := map[string]bool{"String": true, "Int": true, "Float": true, "Boolean": true, "ID": true}
	var missing []string
	for name, def := range schema.Types {
		if strings.HasPrefix(name, "__") || builtin[name] || def.BuiltIn {
			continue
		}
		if def.Description == "" {
			missing = append(missing, name)
		}
		if strings.HasSuffix(name, "WhereInput") {
			continue
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			if f.Description == "" {
				missing = append(missing, name+"."+f.Name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d types and fields have no description:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
