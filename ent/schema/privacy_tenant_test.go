package schema_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/viewer"
)

// testTenant checks the tenants table: a viewer sees and changes only its own.
func testTenant(t *testing.T, c *ent.Client) {
	f := newFixture(t, c)
	sys, asA := sysCtx(t), viewerCtx(t, viewer.RoleAdmin, f.a.tenant)
	bName := func(t *testing.T) string {
		tn, err := c.Tenant.Get(sys, f.b.tenant)
		require.NoError(t, err)
		return tn.Name
	}
	origB := bName(t)

	t.Run("list", func(t *testing.T) {
		ids, err := c.Tenant.Query().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{f.a.tenant}, ids)
		all, err := c.Tenant.Query().IDs(sys)
		require.NoError(t, err)
		require.Subset(t, all, []string{f.a.tenant, f.b.tenant})
	})
	t.Run("get", func(t *testing.T) {
		tn, err := c.Tenant.Get(asA, f.a.tenant)
		require.NoError(t, err)
		require.Equal(t, f.a.tenant, tn.ID)
		_, err = c.Tenant.Get(asA, f.b.tenant)
		requireHidden(t, err)
		_, err = c.Noder(asA, f.b.tenant, ent.WithNodeType(pid.NodeType))
		requireHidden(t, err)
	})
	t.Run("update", func(t *testing.T) {
		requireHidden(t, c.Tenant.UpdateOneID(f.b.tenant).SetName("renamed by A").Exec(asA))
		require.Equal(t, origB, bName(t))
		n, err := c.Tenant.Update().SetName("bulk by A").Save(asA)
		require.NoError(t, err)
		require.Equal(t, 1, n, "bulk update touched other tenants")
		require.Equal(t, origB, bName(t))
		require.NoError(t, c.Tenant.UpdateOneID(f.a.tenant).SetName("A renamed itself").Exec(asA))
	})
	t.Run("adopt_other_tenant_as_sandbox", func(t *testing.T) {
		err := c.Tenant.UpdateOneID(f.a.tenant).AddSandboxIDs(f.b.tenant).Exec(asA)
		tb, gerr := c.Tenant.Get(sys, f.b.tenant)
		require.NoError(t, gerr)
		require.Nil(t, tb.SandboxOfID, "tenant A's admin made tenant B a sandbox of A")
		require.Error(t, err)
	})
	t.Run("create", func(t *testing.T) {
		_, err := c.Tenant.Create().SetName("made by A").Save(asA)
		requireDenied(t, err)
	})
	t.Run("delete", func(t *testing.T) {
		requireDenied(t, c.Tenant.DeleteOneID(f.b.tenant).Exec(asA))
		requireDenied(t, c.Tenant.DeleteOneID(f.a.tenant).Exec(asA))
		_, err := c.Tenant.Get(sys, f.b.tenant)
		require.NoError(t, err)
	})
	t.Run("analyst", func(t *testing.T) {
		an := viewerCtx(t, viewer.RoleAnalyst, f.a.tenant)
		ids, err := c.Tenant.Query().IDs(an)
		require.NoError(t, err)
		require.Equal(t, []string{f.a.tenant}, ids)
		requireDenied(t, c.Tenant.UpdateOneID(f.a.tenant).SetName("renamed by analyst").Exec(an))
	})
	t.Run("no_viewer", func(t *testing.T) {
		_, err := c.Tenant.Query().IDs(t.Context())
		requireDenied(t, err)
		_, err = c.Tenant.Query().IDs(viewer.NewContext(t.Context(), viewer.Viewer{Role: viewer.RoleAdmin}))
		requireDenied(t, err)
	})
}

// testSigningKey checks that no tenant viewer reaches the service's keys.
func testSigningKey(t *testing.T, c *ent.Client) {
	f := newFixture(t, c)
	sys := sysCtx(t)
	key, err := c.SigningKey.Create().SetPrivateKey([]byte("not a real key")).Save(sys)
	require.NoError(t, err)
	n, err := c.SigningKey.Query().Count(sys)
	require.NoError(t, err)
	require.Positive(t, n)

	for _, role := range []viewer.Role{viewer.RoleAdmin, viewer.RoleClient, viewer.RoleAnalyst} {
		t.Run(string(role), func(t *testing.T) {
			ctx := viewerCtx(t, role, f.a.tenant)
			n, err := c.SigningKey.Query().Count(ctx)
			if err == nil {
				require.Zero(t, n, "a tenant viewer counted signing keys")
			}
			_, err = c.SigningKey.Get(ctx, key.ID)
			requireHidden(t, err)
			_, err = c.SigningKey.Create().SetPrivateKey([]byte("planted")).Save(ctx)
			requireDenied(t, err)
			requireHidden(t, c.SigningKey.UpdateOneID(key.ID).ClearRetiredAt().Exec(ctx))
			requireHidden(t, c.SigningKey.DeleteOneID(key.ID).Exec(ctx))
		})
	}
	_, err = c.SigningKey.Query().Count(t.Context())
	requireDenied(t, err)
	_, err = c.SigningKey.Get(sys, key.ID)
	require.NoError(t, err)
}
