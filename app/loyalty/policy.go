package loyalty

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the loyalty context.
var Rules = kernel.NamedRules(struct {
	CreditPoints, DebitPoints, ReversePoints, Balance, Statement, PointsLiability, ByLevel, AdjustPoints kernel.Rule
	RollbackRedemption, HoldOrderPoints, CaptureOrderPoints, RollbackOrderPoints, CreditBonus, Offer     kernel.Rule
	HoldPoints, ReleaseHold, ExpirePoints, ReleasePendingPoints, NotifyExpiringPoints, RecomputeLevels   kernel.Rule
	CreditCashback                                                                                       kernel.Rule
	CreditSale, CreditSaleBonus, TakeHoldForSale, SpendSaleHold, ReverseReturnPoints, RefundReturnPoints kernel.Rule
	PointsEntryConnection                                                                                kernel.Rule
}{
	CreditPoints:         kernel.Scope("loyalty:write"),
	DebitPoints:          kernel.Scope("loyalty:write"),
	ReversePoints:        kernel.Scope("loyalty:write"),
	Balance:              kernel.Scope("loyalty:read"),
	Statement:            kernel.Scope("loyalty:read"),
	PointsLiability:      kernel.Scope("loyalty:read"),
	ByLevel:              kernel.Scope("customers:read"),
	AdjustPoints:         kernel.Scope(kernel.ScopeBackofficeWrite),
	RollbackRedemption:   kernel.Scope("campaigns:write"),
	HoldOrderPoints:      kernel.Scope("loyalty:write"),
	CaptureOrderPoints:   kernel.Scope("loyalty:write"),
	RollbackOrderPoints:  kernel.Scope("loyalty:write"),
	CreditBonus:          kernel.Internal,
	Offer:                kernel.Internal,
	HoldPoints:           kernel.Internal,
	ReleaseHold:          kernel.Internal,
	CreditSale:           kernel.Internal,
	CreditSaleBonus:      kernel.Internal,
	TakeHoldForSale:      kernel.Internal,
	SpendSaleHold:        kernel.Internal,
	ReverseReturnPoints:  kernel.Internal,
	RefundReturnPoints:   kernel.Internal,
	ExpirePoints:         kernel.System,
	ReleasePendingPoints: kernel.System,
	NotifyExpiringPoints: kernel.System,
	RecomputeLevels:      kernel.System,
	CreditCashback:       kernel.System,

	// The GraphQL connections (connections.go).
	PointsEntryConnection: kernel.Scope("loyalty:read"),
})
