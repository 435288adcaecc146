package privacy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestExportThenErase: a customer's export gives its profile unmasked and
// its ledger; its erasure blanks the profile, gives it a pseudonymous
// document, keeps its points, takes it off the tenant's count and says so
// once (customer.erased), and touches no other customer; an erased customer
// has no export, and erasing it again announces nothing.
func TestExportThenErase(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		a, ctx := env.App, env.Ctx
		ana, bia := apptest.Customer(t, a, env.TenantID, 1), apptest.Customer(t, a, env.TenantID, 2)
		pts := int64(150)
		_, err := a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: ana, OrderID: "PED-1", Points: &pts})
		require.NoError(t, err)

		export := func(id string) (map[string][]any, error) {
			rows := map[string][]any{}
			err := a.Privacy.ExportCustomer(ctx, id, func(section string, row any) error {
				rows[section] = append(rows[section], row)
				return nil
			})
			return rows, err
		}
		rows, err := export(ana)
		require.NoError(t, err)
		require.Len(t, rows[privacy.ExportCustomerSection], 1)
		c := rows[privacy.ExportCustomerSection][0].(*ent.Customer)
		require.Equal(t, []string{"Cliente 1", "c1@example.com", apptest.CPF(1)}, []string{c.Name, *c.Email, c.Document}, "unmasked")
		require.Len(t, rows[privacy.ExportPointsSection], 1)
		require.Equal(t, pts, rows[privacy.ExportPointsSection][0].(*ent.PointsEntry).Points)

		erasures := func() int {
			n, err := db.Ent.Event.Query().Where(event.Type(outbox.CustomerErased)).Count(ctx)
			require.NoError(t, err)
			return n
		}
		customerCount := func() int64 {
			tn, err := db.Ent.Tenant.Get(ctx, env.TenantID)
			require.NoError(t, err)
			return tn.CustomerCount
		}
		require.Equal(t, int64(2), customerCount())
		require.NoError(t, a.Privacy.EraseCustomer(ctx, ana))
		erased, err := db.Ent.Customer.Get(ctx, ana)
		require.NoError(t, err)
		require.Empty(t, erased.Name)
		require.Nil(t, erased.Email)
		require.Regexp(t, `^X[A-Z]{13}$`, erased.Document, "a pseudonym, no CPF")
		require.NotNil(t, erased.ErasedAt)
		require.Equal(t, pts, erased.PointsBalance, "the points stay under the pseudonymous id")
		require.Equal(t, int64(1), customerCount())
		require.Equal(t, 1, erasures())

		_, err = export(ana)
		e, ok := apperr.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, apperr.KindNotFound, e.Kind)

		require.NoError(t, a.Privacy.EraseCustomer(ctx, ana), "erasing again scrubs again")
		require.Equal(t, 1, erasures(), "and announces nothing")
		require.Equal(t, int64(1), customerCount())
		other, err := db.Ent.Customer.Get(ctx, bia)
		require.NoError(t, err)
		require.Equal(t, []string{"Cliente 2", apptest.CPF(2)}, []string{other.Name, other.Document})
		require.Nil(t, other.ErasedAt)
	})
}
