// Package privacy is the privacy context: the data subject's rights (LGPD),
// the unmasked export and the erasure of a customer.
package privacy

import "github.com/fideliza/fideliza/app/kernel"

// Service owns the operations of the privacy context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
