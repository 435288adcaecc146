package nodes

import (
	"context"
	"fmt"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/schema/pid"
)

// Node reads the entity whose global id is id, when the viewer may read
// its type.
func (a *Service) Node(ctx context.Context, id string) (ent.Noder, error) {
	if err := Rules.Node.Allow(ctx); err != nil {
		return nil, err
	}
	n, err := a.k.DB.Ent.Noder(ctx, id, ent.WithNodeType(pid.NodeType))
	if err != nil {
		return nil, err
	}
	if err := allowType(ctx, n); err != nil {
		return nil, err
	}
	return n, nil
}

// Nodes reads the entities of ids, in their order, nil for an id that
// names none; it refuses them all when the viewer may not read the type of
// one.
func (a *Service) Nodes(ctx context.Context, ids []string) ([]ent.Noder, error) {
	if err := Rules.Nodes.Allow(ctx); err != nil {
		return nil, err
	}
	nodes, err := a.k.DB.Ent.Noders(ctx, ids, ent.WithNodeType(pid.NodeType))
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		if err := allowType(ctx, n); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// allowType checks the viewer of ctx against the rule of n's type.
func allowType(ctx context.Context, n ent.Noder) error {
	rule, ok := TypeRules[strings.TrimPrefix(fmt.Sprintf("%T", n), "*ent.")]
	if !ok {
		return kernel.Authorize(ctx, kernel.ScopeBackofficeWrite) // an entity nobody listed: operators only
	}
	return rule.Allow(ctx)
}
