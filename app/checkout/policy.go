package checkout

import "github.com/fideliza/fideliza/app/kernel"

// Policy says who may call each operation of the checkout context.
var Policy = kernel.Policy{
	"ValidateCart":        kernel.Scope("campaigns:read"),
	"RedeemCampaign":      kernel.Scope("campaigns:write"),
	"CustomerFor":         kernel.Internal,
	"CustomerRedemptions": kernel.Internal,
}
