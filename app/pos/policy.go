package pos

import (
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/auth"
)

// Rules says who may call each operation of the point of sale's context:
// the tills (a POS client's credentials) and the service's own jobs.
var Rules = kernel.NamedRules(struct {
	IdentifyCustomer, AuthorizeDiscounts, RegisterSale, HoldPoints, ReleasePointsHold, SaleOutcome kernel.Rule
	RegisterSaleReturn, ProcessSale, ProcessSales, ProcessSaleReturn                               kernel.Rule
	SaleConnection, HoldWallet, ReleaseWalletHold                                                  kernel.Rule
}{
	IdentifyCustomer:   kernel.Scope(auth.ScopePOS),
	AuthorizeDiscounts: kernel.Scope(auth.ScopePOS),
	RegisterSale:       kernel.Scope(auth.ScopePOS),
	HoldPoints:         kernel.Scope(auth.ScopePOS),
	ReleasePointsHold:  kernel.Scope(auth.ScopePOS),
	HoldWallet:         kernel.Scope(auth.ScopePOS),
	ReleaseWalletHold:  kernel.Scope(auth.ScopePOS),
	SaleOutcome:        kernel.Scope(auth.ScopePOS),
	RegisterSaleReturn: kernel.Scope(auth.ScopePOS),
	ProcessSale:        kernel.System,
	ProcessSales:       kernel.System,
	ProcessSaleReturn:  kernel.System,

	// The GraphQL connections (connections.go).
	SaleConnection: kernel.Scope(kernel.ScopeBackoffice),
})
