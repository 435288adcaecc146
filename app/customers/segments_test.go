package customers_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestSegmentMembershipConcurrent: many overlapping adds and imports of the
// same segment at once leave exactly the union as members, without errors.
func TestSegmentMembershipConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		a, ctx := env.App, env.Ctx
		const n = 30
		ids, cpfs := make([]string, n), make([]string, n)
		for i := range n {
			cpfs[i] = document.CPFOf(100000001 + i)
			c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{
				Name: opt.Of("C"), Email: opt.Of(fmt.Sprintf("c%d@x.example", i)), CPF: opt.Of(cpfs[i]),
			})
			require.NoError(t, err)
			ids[i] = c.ID
		}
		seg, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: opt.Of("VIP").Ptr()})
		require.NoError(t, err)

		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Add(2)
			go func() { // customers i..i+4, overlapping their neighbours
				defer wg.Done()
				_, err := a.Customers.AddSegmentCustomers(ctx, seg.ID, ids[i:min(i+5, n)])
				errs <- err
			}()
			go func() {
				defer wg.Done()
				_, err := a.Customers.ImportSegmentCPFs(ctx, seg.ID, cpfs[max(0, i-3):i+1])
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		members, err := seg.QueryCustomers().IDs(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, ids, members)

		res, err := a.Customers.ImportSegmentCPFs(ctx, seg.ID, []string{cpfs[0], "529.982.247-25", "123", cpfs[1]})
		require.NoError(t, err)
		require.Equal(t, 0, res.Added)
		require.Equal(t, 2, res.AlreadyMembers)
		require.Equal(t, []string{"529.982.247-25"}, res.NotFound)
		require.Equal(t, []string{"123"}, res.Invalid)

		_, err = a.Customers.RemoveSegmentCustomers(ctx, seg.ID, ids[:10])
		require.NoError(t, err)
		_, err = a.Customers.AddSegmentCustomers(ctx, seg.ID, []string{ids[0], "cus_00000000000000000000000000"})
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, apperr.KindNotFound, e.Kind)
		count, err := seg.QueryCustomers().Count(ctx)
		require.NoError(t, err)
		require.Equal(t, n-10, count, "a refused change changes nothing")
	})
}
