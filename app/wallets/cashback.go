package wallets

import (
	"context"

	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/storage"
)

// CreditCampaignCashback credits a redemption's cashback, in R$ rounded to
// the cent, to the customer's cashback wallet, inside the caller's
// transaction (the loyalty context's cashback job, for a programme whose
// cashback stays in R$). A redemption is credited once: a rerun finds the
// first credit (Replayed). Nil when the cashback rounds to no cent.
func (a *Service) CreditCampaignCashback(ctx context.Context, tx storage.Tx, red *ent.Redemption, campaignName string) (*wallet.Result, error) {
	cents := wallet.Cents(red.CashbackAmount)
	if cents <= 0 {
		return nil, nil
	}
	return a.wallets().Credit(ctx, tx.Ent, wallet.Move{
		CustomerID: red.CustomerID, Unit: wallet.Cashback, Cents: cents,
		SourceKind: walletentry.SourceKindRedemption, SourceID: &red.ID, StoreCode: red.StoreCode,
		Reason: "cashback of " + campaignName,
	})
}

// ReverseCampaignCashback takes back the cashback a redemption credited to
// the wallet, inside the caller's transaction (a redemption rolled back):
// from the balance as far as it goes, the rest owed as a debt. Nil when
// the redemption credited nothing to the wallet (its cashback was not due
// yet, or went to points).
func (a *Service) ReverseCampaignCashback(ctx context.Context, tx storage.Tx, red *ent.Redemption, reason string) (*wallet.Result, error) {
	credit, err := tx.Ent.WalletEntry.Query().Where(walletentry.CustomerID(red.CustomerID),
		walletentry.WalletEQ(walletentry.WalletCashback), walletentry.KindEQ(walletentry.KindCredit),
		walletentry.SourceKindEQ(walletentry.SourceKindRedemption), walletentry.SourceID(red.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return a.wallets().Reverse(ctx, tx.Ent, wallet.Move{
		CustomerID: red.CustomerID, Unit: wallet.Cashback, Cents: credit.AmountCents,
		SourceKind: walletentry.SourceKindRedemption, SourceID: &red.ID, StoreCode: red.StoreCode,
		Reason: "redemption rolled back: " + reason,
	})
}
