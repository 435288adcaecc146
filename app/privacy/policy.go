package privacy

import "github.com/fideliza/fideliza/app/kernel"

// Policy says who may call each operation of the privacy context.
var Policy = kernel.Policy{
	"ExportCustomer":      kernel.Scope(ScopePrivacyRead),
	"WriteCustomerExport": kernel.Scope(ScopePrivacyRead),
	"EraseCustomer":       kernel.Scope(ScopePrivacyWrite),
	"PurgeExpired":        kernel.System,
}
