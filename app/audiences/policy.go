package audiences

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the audiences context.
var Rules = kernel.NamedRules(struct {
	PreviewAudience, RecomputeAudiences, Refresh, Check, RecomputeAudience, RecomputeTenant kernel.Rule
}{
	PreviewAudience:    kernel.Scope("customers:read"),
	RecomputeAudiences: kernel.System, // the periodic job
	Refresh:            kernel.Internal,
	Check:              kernel.Internal,
	RecomputeAudience:  kernel.Internal,
	RecomputeTenant:    kernel.Internal,
})
