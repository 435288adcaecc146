package wallets

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the wallets context: reading a
// customer's wallets is reading its loyalty balances, paying with them
// online is writing them.
var Rules = kernel.NamedRules(struct {
	Wallets, Entries, CreditCampaignCashback, ReverseCampaignCashback, UpkeepWallets kernel.Rule
	HoldCashback, CaptureHold, RollbackHold, PlaceCashbackHold, CashbackOffer        kernel.Rule
	TakeSaleHold, SpendSaleHold, ReleaseTillHold, GiveBackSale                       kernel.Rule
}{
	Wallets:                 kernel.Scope("loyalty:read"),
	Entries:                 kernel.Scope("loyalty:read"),
	CreditCampaignCashback:  kernel.Internal,
	ReverseCampaignCashback: kernel.Internal,
	UpkeepWallets:           kernel.System,
	HoldCashback:            kernel.Scope("loyalty:write"),
	CaptureHold:             kernel.Scope("loyalty:write"),
	RollbackHold:            kernel.Scope("loyalty:write"),
	PlaceCashbackHold:       kernel.Internal,
	CashbackOffer:           kernel.Internal,
	TakeSaleHold:            kernel.Internal,
	SpendSaleHold:           kernel.Internal,
	ReleaseTillHold:         kernel.Internal,
	GiveBackSale:            kernel.Internal,
})
