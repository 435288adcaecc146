package campaigns

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the campaigns context.
var Rules = kernel.NamedRules(struct {
	ListCampaigns, Campaign, HoldsOut, CreateCampaign, EndCampaign, PauseCampaign, ResumeCampaign kernel.Rule
	ImportProducts, AddCoupons, ListCoupons, EachCoupon, WithStatus, SpendBudget, GiveBackBudget  kernel.Rule
	RollBack, EnrichFromCatalogue, CouponOf, RunCampaignLifecycle                                 kernel.Rule
	CampaignConnection, ProductConnection, CampaignsByID                                          kernel.Rule
}{
	ListCampaigns:        kernel.Scope("campaigns:read"),
	Campaign:             kernel.Scope("campaigns:read"),
	HoldsOut:             kernel.Scope("campaigns:read"),
	CreateCampaign:       kernel.Scope("campaigns:write"),
	EndCampaign:          kernel.Scope("campaigns:write"),
	PauseCampaign:        kernel.Scope("campaigns:write"),
	ResumeCampaign:       kernel.Scope("campaigns:write"),
	ImportProducts:       kernel.Scope("campaigns:write"),
	AddCoupons:           kernel.Scope("campaigns:write"),
	ListCoupons:          kernel.Scope("campaigns:read"),
	EachCoupon:           kernel.Scope("campaigns:read"),
	WithStatus:           kernel.Internal, // a campaign already read, with its status now
	SpendBudget:          kernel.Internal,
	GiveBackBudget:       kernel.Internal,
	RollBack:             kernel.Internal,
	EnrichFromCatalogue:  kernel.Internal,
	CouponOf:             kernel.Internal,
	RunCampaignLifecycle: kernel.System,

	// The GraphQL connections (connections.go).
	CampaignConnection: kernel.Scope("campaigns:read"),
	ProductConnection:  kernel.Scope("campaigns:read"),

	CampaignsByID: kernel.Scope("campaigns:read"), // the campaigns a cart validation names
})
