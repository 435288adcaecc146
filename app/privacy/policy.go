package privacy

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the privacy context.
var Rules = kernel.NamedRules(struct {
	ExportCustomer, WriteCustomerExport, EraseCustomer, PurgeExpired kernel.Rule
}{
	ExportCustomer:      kernel.Scope(ScopePrivacyRead),
	WriteCustomerExport: kernel.Scope(ScopePrivacyRead),
	EraseCustomer:       kernel.Scope(ScopePrivacyWrite),
	PurgeExpired:        kernel.System,
})
