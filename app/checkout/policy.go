package checkout

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the checkout context.
var Rules = kernel.NamedRules(struct {
	ValidateCart, RedeemCampaign, CustomerFor, CustomerRedemptions kernel.Rule
	RedemptionConnection                                           kernel.Rule
}{
	ValidateCart:        kernel.Scope("campaigns:read"),
	RedeemCampaign:      kernel.Scope("campaigns:write"),
	CustomerFor:         kernel.Internal,
	CustomerRedemptions: kernel.Internal,

	// The GraphQL connections (connections.go).
	RedemptionConnection: kernel.Scope("campaigns:read"),
})
