package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestCustomerCountKeptByTheDatabase: the tenant's customer count (the
// total of an unfiltered list) follows every insert, bulk insert, rollback
// and delete, under concurrency, on both databases.
func TestCustomerCountKeptByTheDatabase(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := viewer.SystemContext(context.Background())
		tenants := make([]string, 2)
		for i := range tenants {
			tenants[i] = db.Ent.Tenant.Create().SetName(fmt.Sprint("Loja ", i)).SaveX(ctx).ID
		}
		var doc sync.Mutex
		next := 0
		newCustomer := func(c *ent.Client, tenantID string) *ent.CustomerCreate {
			doc.Lock()
			defer doc.Unlock()
			next++
			return c.Customer.Create().SetTenantID(tenantID).SetName("Cliente").
				SetDocumentType(customer.DocumentTypeCPF).SetDocument(fmt.Sprintf("%011d", next))
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					newCustomer(db.Ent, tenants[g%2]).ExecX(ctx)
				}
			}()
		}
		wg.Wait()
		bulk := func(n int) []*ent.CustomerCreate {
			b := make([]*ent.CustomerCreate, n)
			for i := range b {
				b[i] = newCustomer(db.Ent, tenants[0])
			}
			return b
		}
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error { return tx.Ent.Customer.CreateBulk(bulk(30)...).Exec(ctx) }))
		rolledBack := errors.New("rolled back")
		require.ErrorIs(t, db.InTx(ctx, func(tx storage.Tx) error {
			if err := tx.Ent.Customer.CreateBulk(bulk(20)...).Exec(ctx); err != nil {
				return err
			}
			return rolledBack
		}), rolledBack)
		gone := db.Ent.Customer.Query().Where(customer.TenantID(tenants[1])).Limit(5).IDsX(ctx)
		require.Equal(t, 5, db.Ent.Customer.Delete().Where(customer.IDIn(gone...)).ExecX(ctx))

		for i, want := range []int{40 + 30, 40 - 5} {
			require.Equal(t, want, db.Ent.Customer.Query().Where(customer.TenantID(tenants[i])).CountX(ctx))
			require.EqualValues(t, want, db.Ent.Tenant.GetX(ctx, tenants[i]).CustomerCount, "tenant %d", i)
		}
	})
}
