package wallets_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestWalletsOfANewCustomer: a customer whose wallets never moved holds
// every wallet at zero, with nothing expiring; another tenant's viewer does
// not find the customer.
func TestWalletsOfANewCustomer(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Mercado Carteira"))
		other := apptest.New(t, db, apptest.WithTenant("Mercado Vizinho"))
		c, err := env.App.Customers.CreateCustomer(env.Ctx, customers.CustomerInput{Name: opt.Of("Ana"),
			Email: opt.Of("ana@carteira.example"), CPF: opt.Of(document.CPFOf(730_000_001))})
		require.NoError(t, err)

		got, err := env.App.Wallets.Wallets(env.Ctx, c.ID)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, wallet.Cashback, got[0].Unit)
		require.Zero(t, got[0].Balance+got[0].Pending+got[0].Debt+got[0].Spendable)
		require.Nil(t, got[0].Expiring)

		_, err = other.App.Wallets.Wallets(other.Ctx, c.ID)
		var e *apperr.Error
		require.ErrorAs(t, err, &e, "another tenant's customer")
		require.Equal(t, apperr.KindNotFound, e.Kind)
	})
}
