// Package privacy is the privacy context: the data subject's rights (LGPD),
// the unmasked export and the erasure of a customer.
package privacy

import "github.com/fideliza/fideliza/app/kernel"

// Service owns the operations of the privacy context.
type Service struct {
	*kernel.Kernel
}
