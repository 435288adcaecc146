package schema_test

import (
	"context"
	"strconv"
	"time"

	"github.com/fideliza/fideliza/ent"
	entwallet "github.com/fideliza/fideliza/ent/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/ent/walletlot"
	"github.com/fideliza/fideliza/viewer"
)

// walletKinds are the kinds of the money wallets: wallets, their entries,
// lots and holds.
func walletKinds() []kind {
	return []kind{
		{
			// After customers. The name is the entry's reason; entries of
			// lots (walletEntryFor) are left out of lists (redemptionsOnly).
			table:      walletentry.Table,
			appendOnly: true,
			ledger:     true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.WalletEntry.Create().SetCustomerID(cu).SetWallet(walletentry.WalletCashback).
					SetKind(walletentry.KindCredit).SetAmountCents(10).SetBalanceAfterCents(10).
					SetSourceKind(walletentry.SourceKindRedemption).SetSourceID(unique()).SetReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				return c.WalletEntry.Query().Where(redemptionsOnly).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Reason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.WalletEntry.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.WalletEntry.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WalletEntry.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WalletEntry.Delete().Exec(ctx) },
		},
		{
			// The name is the remaining cents.
			table:   walletlot.Table,
			ledger:  true,
			notNode: true,
			value:   uniqueRemaining,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				remaining, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return "", err
				}
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				entry, err := walletEntryFor(ctx, c, cu)
				if err != nil {
					return "", err
				}
				m := c.WalletLot.Create().SetCustomerID(cu).SetWallet(walletlot.WalletCashback).SetEntryID(entry).
					SetAmountCents(lotPoints).SetRemainingCents(remaining).SetExpiresAt(time.Now().UTC().Add(365 * 24 * time.Hour))
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.WalletLot.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletLot.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.FormatInt(r.RemainingCents, 10), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletLot.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				remaining, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return err
				}
				return c.WalletLot.UpdateOneID(id).SetRemainingCents(remaining).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				remaining, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return 0, err
				}
				return c.WalletLot.Update().SetRemainingCents(remaining).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WalletLot.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WalletLot.Delete().Exec(ctx) },
		},
		{
			// One wallet of a kind per customer: each row's customer is a
			// fresh holder (as the scores kind's). The name is the balance.
			table:   entwallet.Table,
			ledger:  true,
			notNode: true,
			value:   uniqueRemaining,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return "", err
				}
				cu, err := c.Customer.Create().SetTenantID(tenantOr(ctx, tenantID)).SetDocument(unique()).SetName(scoreHolderName).
					Save(viewer.SystemContext(ctx))
				if err != nil {
					return "", err
				}
				m := c.Wallet.Create().SetCustomerID(cu.ID).SetKind(entwallet.KindCashback).SetBalanceCents(balance)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Wallet.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Wallet.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.FormatInt(r.BalanceCents, 10), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Wallet.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return err
				}
				return c.Wallet.UpdateOneID(id).SetBalanceCents(balance).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return 0, err
				}
				return c.Wallet.Update().SetBalanceCents(balance).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.Wallet.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Wallet.Delete().Exec(ctx) },
		},
		{
			// The name is the order that took the hold.
			table:   wallethold.Table,
			ledger:  true,
			notNode: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.WalletHold.Create().SetCustomerID(cu).SetWallet(wallethold.WalletCashback).SetChannel(wallethold.ChannelPdv).
					SetSession(unique()).SetCents(100).SetExpiresAt(time.Now().UTC().Add(15 * time.Minute)).SetOrderID(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.WalletHold.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletHold.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return *r.OrderID, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WalletHold.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.WalletHold.UpdateOneID(id).SetOrderID(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.WalletHold.Update().SetOrderID(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WalletHold.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WalletHold.Delete().Exec(ctx) },
		},
	}
}

// redemptionsOnly leaves out the wallet entries walletEntryFor makes for
// lots, so lots do not add rows to the entries' kind.
var redemptionsOnly = walletentry.SourceKindEQ(walletentry.SourceKindRedemption)

// walletEntryFor makes, as the service, a fresh credit entry of the
// customer's cashback wallet for a lot to refer to, in the customer's
// tenant; its source is a sale (see redemptionsOnly).
func walletEntryFor(ctx context.Context, c *ent.Client, customerID string) (string, error) {
	sys := viewer.SystemContext(ctx)
	cu, err := c.Customer.Get(sys, customerID)
	if err != nil {
		return "", err
	}
	e, err := c.WalletEntry.Create().SetTenantID(cu.TenantID).SetCustomerID(cu.ID).SetWallet(walletentry.WalletCashback).
		SetKind(walletentry.KindCredit).SetAmountCents(1).SetBalanceAfterCents(1).
		SetSourceKind(walletentry.SourceKindSale).SetSourceID(unique()).
		Save(sys)
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// deleteWallets deletes, as the service, the wallets' rows of a tenant,
// their holds too: they refer to its customers (no cascade).
func deleteWallets(sys context.Context, c *ent.Client, tenantID string) error {
	if _, err := c.WalletHold.Delete().Where(wallethold.TenantID(tenantID)).Exec(sys); err != nil {
		return err
	}
	if _, err := c.WalletLot.Delete().Where(walletlot.TenantID(tenantID)).Exec(sys); err != nil {
		return err
	}
	if _, err := c.WalletEntry.Delete().Where(walletentry.TenantID(tenantID)).Exec(sys); err != nil {
		return err
	}
	_, err := c.Wallet.Delete().Where(entwallet.TenantID(tenantID)).Exec(sys)
	return err
}
