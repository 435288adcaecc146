package wallets

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/walletlot"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// ExpiringNoticeWindow is how long before expiry cashback.expiring is
// recorded, as points.expiring is.
const ExpiringNoticeWindow = 30 * 24 * time.Hour

// UpkeepWallets marks released the holds that lapsed (their cents count as
// available already), releases the lots whose pending period is over,
// expires those whose time has come, then records cashback.expiring for
// the lots expiring within ExpiringNoticeWindow: each lot in a transaction
// of its own, so a crash loses at most the lot in progress and a rerun
// skips what is done. Each step takes up to kernel.UpkeepBatch lots a run.
func (a *Service) UpkeepWallets(ctx context.Context, _ jobs.UpkeepWallets) error {
	if err := Rules.UpkeepWallets.Allow(ctx); err != nil {
		return err
	}
	w := a.wallets()
	if _, err := w.ReleaseLapsed(viewer.SystemContext(ctx), a.k.DB.Ent); err != nil {
		return fmt.Errorf("releasing lapsed wallet holds: %w", err)
	}
	now := a.k.Now().UTC()
	steps := []struct {
		doing string
		due   *ent.WalletLotQuery
		do    func(ctx context.Context, tx storage.Tx, lot *ent.WalletLot) error
	}{
		{"releasing", a.k.DB.Ent.WalletLot.Query().Where(walletlot.PendingUntilLTE(now)).Order(ent.Asc(walletlot.FieldPendingUntil)),
			func(ctx context.Context, tx storage.Tx, lot *ent.WalletLot) error {
				return w.Release(ctx, tx.Ent, lot.ID)
			}},
		{"expiring", a.k.DB.Ent.WalletLot.Query().
			Where(walletlot.RemainingCentsGT(0), walletlot.ExpiresAtLTE(now), walletlot.PendingUntilIsNil()).
			Order(ent.Asc(walletlot.FieldExpiresAt)),
			func(ctx context.Context, tx storage.Tx, lot *ent.WalletLot) error {
				_, err := w.Expire(ctx, tx.Ent, lot.ID)
				return err
			}},
		{"notifying", a.k.DB.Ent.WalletLot.Query().
			Where(walletlot.RemainingCentsGT(0), walletlot.ExpiringNotifiedAtIsNil(),
				walletlot.ExpiresAtGT(now), walletlot.ExpiresAtLTE(now.Add(ExpiringNoticeWindow))).
			Order(ent.Asc(walletlot.FieldExpiresAt)),
			a.notifyExpiring},
	}
	for _, s := range steps {
		lots, err := s.due.Limit(kernel.UpkeepBatch).All(viewer.SystemContext(ctx))
		if err != nil {
			return err
		}
		for _, lot := range lots {
			tctx := viewer.TenantContext(ctx, lot.TenantID)
			if err := a.k.DB.InTx(tctx, func(tx storage.Tx) error { return s.do(tctx, tx, lot) }); err != nil {
				return fmt.Errorf("%s wallet lot %s: %w", s.doing, lot.ID, err)
			}
		}
	}
	return nil
}

// notifyExpiring records the cashback.expiring event of a lot once: the
// customer locked first (the wallets' lock order), the conditional update
// claims the lot, so a concurrent run records nothing, and the notice
// tells what is left now.
func (a *Service) notifyExpiring(ctx context.Context, tx storage.Tx, lot *ent.WalletLot) error {
	if _, err := a.k.LockCustomer(ctx, tx.Ent, lot.CustomerID); err != nil {
		return err
	}
	now := a.k.Stamp()
	n, err := tx.Ent.WalletLot.Update().
		Where(walletlot.ID(lot.ID), walletlot.ExpiringNotifiedAtIsNil(), walletlot.RemainingCentsGT(0)).
		SetExpiringNotifiedAt(now).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	if lot, err = tx.Ent.WalletLot.Get(ctx, lot.ID); err != nil {
		return err
	}
	return outbox.Record(ctx, tx.Ent, now, lot.TenantID, outbox.CashbackExpiring, lot.CustomerID, map[string]any{
		"customer_id": lot.CustomerID, "lot_id": lot.ID, "wallet": string(lot.Wallet),
		"amount": wallet.Reais(lot.RemainingCents), "expires_at": lot.ExpiresAt.UTC().Format(time.RFC3339Nano),
	})
}
