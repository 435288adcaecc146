package nodes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestNodeByItsTypesRule: an entity read by its global id answers a viewer
// whose scopes its type's rule grants, is forbidden to one they do not
// grant, and is not found in another tenant; a list with one such entity
// is refused whole. (An id that names nothing is GraphQL's to report:
// entgql's Noders adds its error to the GraphQL response, so that case is
// rest's graph tests'.)
func TestNodeByItsTypesRule(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		other := env.Tenant(t, "Outra")
		c, err := env.App.Customers.CreateCustomer(env.Ctx, customers.CustomerInput{Name: opt.Of("Ana"),
			Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725")})
		require.NoError(t, err)
		client := func(tenantID string, scopes ...string) context.Context {
			return viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleClient, TenantID: tenantID,
				Subject: "cli_test", Scopes: scopes})
		}
		forbidden := func(t *testing.T, err error) {
			t.Helper()
			var e *apperr.Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, apperr.KindForbidden, e.Kind)
		}

		n, err := env.App.Nodes.Node(client(env.TenantID, "customers:read"), c.ID)
		require.NoError(t, err)
		require.Equal(t, c.ID, n.(*ent.Customer).ID)

		_, err = env.App.Nodes.Node(client(env.TenantID, "campaigns:read"), c.ID)
		forbidden(t, err)
		_, err = env.App.Nodes.Node(client(other.TenantID, "customers:read"), c.ID)
		require.True(t, ent.IsNotFound(err), "another tenant's customer: %v", err)

		got, err := env.App.Nodes.Nodes(client(env.TenantID, "customers:read"), []string{c.ID})
		require.NoError(t, err)
		require.Len(t, got, 1)
		_, err = env.App.Nodes.Nodes(client(env.TenantID, "campaigns:read"), []string{c.ID})
		forbidden(t, err)
	})
}
