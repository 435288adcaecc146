// Package nodes is the context of reading any entity by its global id
// (GraphQL's node and nodes): ent's Noder reads it under ent privacy, the
// viewer's tenant's rows only, and the rule of its type (TypeRules)
// decides whether the viewer may see it.
package nodes

import "github.com/fideliza/fideliza/app/kernel"

// Service owns the operations of the nodes context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
