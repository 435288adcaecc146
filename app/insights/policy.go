package insights

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the insights context.
var Rules = kernel.NamedRules(struct {
	ActiveCustomers, CampaignsPerformance, CampaignLift, SalesByStoreDay kernel.Rule
	PointsLiabilityByDay, RebuildRollups                                 kernel.Rule
	PointsSpentByStoreDay, TopCustomers                                  kernel.Rule
}{
	ActiveCustomers:      kernel.Scope("customers:read"),
	CampaignsPerformance: kernel.Scope("campaigns:read"),
	CampaignLift:         kernel.Scope("campaigns:read"),
	SalesByStoreDay:      kernel.Scope(kernel.ScopeBackoffice),
	PointsLiabilityByDay: kernel.Scope("loyalty:read"),
	RebuildRollups:       kernel.System,

	// Issue 36: points spent as money, per store and day.
	PointsSpentByStoreDay: kernel.Scope(kernel.ScopeBackoffice),

	// Issue 52: the customers who paid most, or bought most often, in a period
	// (customer data, as their lifetime value).
	TopCustomers: kernel.Scope("customers:read"),
})
