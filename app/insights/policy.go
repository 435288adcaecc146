package insights

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the insights context.
var Rules = kernel.NamedRules(struct {
	CustomerChurn, PredictiveSegments, RefreshChurnScores, ActiveCustomers, CampaignsPerformance           kernel.Rule
	CampaignLift, SalesByStoreDay, PointsLiabilityByDay, FitChurnModel, RunCustomerScoring, ScoreCustomers kernel.Rule
	PredictiveMembers, RebuildRollups, PointsSpentByStoreDay, TopCustomers                                 kernel.Rule
}{
	CustomerChurn:        kernel.Scope("customers:read"),
	PredictiveSegments:   kernel.Scope("customers:read"),
	RefreshChurnScores:   kernel.Scope("customers:write"),
	ActiveCustomers:      kernel.Scope("customers:read"),
	CampaignsPerformance: kernel.Scope("campaigns:read"),
	CampaignLift:         kernel.Scope("campaigns:read"),
	SalesByStoreDay:      kernel.Scope(kernel.ScopeBackoffice),
	PointsLiabilityByDay: kernel.Scope("loyalty:read"),
	FitChurnModel:        kernel.System,
	RunCustomerScoring:   kernel.System,
	ScoreCustomers:       kernel.System,
	PredictiveMembers:    kernel.Internal,
	RebuildRollups:       kernel.System,

	// Issue 36: points spent as money, per store and day.
	PointsSpentByStoreDay: kernel.Scope(kernel.ScopeBackoffice),

	// Issue 52: the customers who paid most, or bought most often, in a period
	// (customer data, as their lifetime value).
	TopCustomers: kernel.Scope("customers:read"),
})
