package wallets

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the wallets context: reading a
// customer's wallets is reading its loyalty balances.
var Rules = kernel.NamedRules(struct {
	Wallets, Entries, CreditCampaignCashback, ReverseCampaignCashback, UpkeepWallets kernel.Rule
}{
	Wallets:                 kernel.Scope("loyalty:read"),
	Entries:                 kernel.Scope("loyalty:read"),
	CreditCampaignCashback:  kernel.Internal,
	ReverseCampaignCashback: kernel.Internal,
	UpkeepWallets:           kernel.System,
})
