package schema

import (
	"context"

	"entgo.io/ent"

	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// keepBlindIndex derives the blind index of a sealed field, by which lookups
// and unique indexes find it, whenever a mutation sets the field.
func keepBlindIndex(sealedField, indexField string) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			if v, ok := m.Field(sealedField); ok {
				idx, err := sealed.Index(v.(string))
				if err != nil {
					return nil, err
				}
				if err := m.SetField(indexField, idx); err != nil {
					return nil, err
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}
