package scoring

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the scoring context.
var Rules = kernel.NamedRules(struct {
	CustomerChurn, PredictiveSegments, RefreshChurnScores kernel.Rule
	FitChurnModel, RunCustomerScoring, ScoreCustomers     kernel.Rule
	PredictiveMembers                                     kernel.Rule
}{
	CustomerChurn:      kernel.Scope("customers:read"),
	PredictiveSegments: kernel.Scope("customers:read"),
	RefreshChurnScores: kernel.Scope("customers:write"),
	FitChurnModel:      kernel.System,
	RunCustomerScoring: kernel.System,
	ScoreCustomers:     kernel.System,
	PredictiveMembers:  kernel.Internal,
})
