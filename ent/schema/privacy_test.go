package schema_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	entschema "entgo.io/ent/dialect/sql/schema"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/migrate"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// kind is one tenant-owned entity, seen through the operations every
// isolation check needs. ids are the entity's ids; name is a mutable field of
// it (the one update changes), as a string.
type kind struct {
	table string
	// appendOnly kinds refuse every update, of any row and by any viewer;
	// their name is an immutable field, and update never changes it.
	appendOnly bool
	// immutable kinds have no mutable field and nothing refusing updates: an
	// update sets nothing. On the viewer's own rows it succeeds and changes
	// nothing; their name is an immutable field.
	immutable bool
	// ledger kinds (entries, lots) cannot be deleted by a tenant's principals.
	ledger bool
	// notNode kinds have no GraphQL type: the node resolver knows none of
	// their ids.
	notNode bool
	// value, for a kind whose mutable field is not a string, makes a fresh
	// name: the string form of a value of the field (see kind.name).
	value func() string
	// create makes a row; tenantID "" leaves tenant_id for the policy to set.
	create func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error)
	list   func(ctx context.Context, c *ent.Client) ([]string, error)
	get    func(ctx context.Context, c *ent.Client, id string) (string, error) // returns the name
	// tenantOf reads the tenant_id of a row.
	tenantOf  func(ctx context.Context, c *ent.Client, id string) (string, error)
	update    func(ctx context.Context, c *ent.Client, id, name string) error
	updateAll func(ctx context.Context, c *ent.Client, name string) (int, error)
	delete    func(ctx context.Context, c *ent.Client, id string) error
	deleteAll func(ctx context.Context, c *ent.Client) (int, error)
}

// name returns a name to give a row of k: label itself, or a fresh value of
// the field when the kind's field is not a string.
func (k kind) name(label string) string {
	if k.value != nil {
		return k.value()
	}
	return label
}

// kinds lists every tenant-owned entity. TestTenantIsolationCoverage fails
// when a table with a tenant_id column is missing here.
func kinds() []kind {
	return slices.Concat(customerAndCatalogueKinds(), ledgerAndRedemptionKinds(), saleAndImportKinds(),
		scoreReturnAndWebhookKinds(), walletKinds(), giftCardKinds())
}

func newCampaign(c *ent.Client, name string) *ent.CampaignCreate {
	start := time.Now().UTC().Truncate(time.Second)
	return c.Campaign.Create().SetName(name).SetType(campaign.TypeDiscount).
		SetStartsAt(start).SetEndsAt(start.Add(30 * 24 * time.Hour))
}

// Tables that have no tenant_id column and are covered by dedicated tests
// below, and join tables of edges between tenant-owned entities (covered by
// the cross-tenant link tests).
var (
	specialTables = map[string]string{
		"tenants":      "TestTenantIsolation/tenant",
		"signing_keys": "TestTenantIsolation/signing_key",
	}
	joinTables = map[string]string{
		"customer_segments": "TestTenantIsolation/links",
	}
)

// tenantSide holds one tenant's rows, by table.
type tenantSide struct {
	tenant string
	ids    map[string]string // table → id
	names  map[string]string // table → name given at setup
}

type fixture struct{ a, b tenantSide }

func sysCtx(t *testing.T) context.Context { return viewer.SystemContext(t.Context()) }

func viewerCtx(t *testing.T, role viewer.Role, tenantID string) context.Context {
	return viewer.NewContext(t.Context(), viewer.Viewer{Role: role, TenantID: tenantID, Subject: "test-" + string(role)})
}

// newFixture makes, as the system, tenants A and B each with one row of every
// tenant-owned entity; the campaign targets the tenant's segment, the
// customer belongs to it, the points entry and lot are the customer's, the
// sale is made at the tenant's store and credited to its customer, and the
// sale item and payment are the sale's, the webhook delivery is to the
// tenant's endpoint and the attempt is the delivery's.
// Every call makes new tenants, so parallel tests on
// one database do not see each other's rows through a tenant viewer.
func newFixture(t *testing.T, c *ent.Client) fixture {
	t.Helper()
	ctx := sysCtx(t)
	side := func(label string) tenantSide {
		tn, err := c.Tenant.Create().SetName("tenant " + label).Save(ctx)
		require.NoError(t, err)
		s := tenantSide{tenant: tn.ID, ids: map[string]string{}, names: map[string]string{}}
		for _, k := range kinds() {
			name := k.name(fmt.Sprintf("%s %s %s", k.table, label, unique()))
			id, err := k.create(ctx, c, tn.ID, name)
			require.NoError(t, err, k.table)
			s.ids[k.table], s.names[k.table] = id, name
		}
		require.NoError(t, c.Campaign.UpdateOneID(s.ids[campaign.Table]).SetSegmentID(s.ids[segment.Table]).Exec(ctx))
		require.NoError(t, c.Customer.UpdateOneID(s.ids[customer.Table]).AddSegmentIDs(s.ids[segment.Table]).Exec(ctx))
		return s
	}
	f := fixture{a: side("A"), b: side("B")}
	require.NotEqual(t, f.a.tenant, f.b.tenant)
	return f
}

// requireHidden asserts err says the row does not exist for the viewer.
func requireHidden(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.Truef(t, ent.IsNotFound(err) || errors.Is(err, privacy.Deny),
		"want not found or privacy denial, got %v", err)
}

// requireDenied asserts err is a privacy denial.
func requireDenied(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, privacy.Deny, msgAndArgs...)
}

func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		c := db.Ent
		for _, k := range kinds() {
			for _, role := range []viewer.Role{viewer.RoleAdmin, viewer.RoleClient} {
				t.Run(k.table+"/"+string(role), func(t *testing.T) {
					t.Parallel()
					testKind(t, c, k, role)
				})
			}
			t.Run(k.table+"/analyst", func(t *testing.T) {
				t.Parallel()
				testAnalyst(t, c, k)
			})
			t.Run(k.table+"/no_viewer", func(t *testing.T) {
				t.Parallel()
				testNoViewer(t, c, k)
			})
		}
		t.Run("links", func(t *testing.T) {
			t.Parallel()
			testLinks(t, c)
		})
		t.Run("tenant", func(t *testing.T) {
			t.Parallel()
			testTenant(t, c)
		})
		t.Run("signing_key", func(t *testing.T) {
			t.Parallel()
			testSigningKey(t, c)
		})
	})
}

// testKind checks that a viewer of tenant A with role can neither read nor
// change tenant B's row of kind k. Steps run in order on one fixture.
func testKind(t *testing.T, c *ent.Client, k kind, role viewer.Role) {
	f := newFixture(t, c)
	sys, asA := sysCtx(t), viewerCtx(t, role, f.a.tenant)
	aID, bID := f.a.ids[k.table], f.b.ids[k.table]
	require.NotEqual(t, aID, bID)

	// requireIntact re-reads a tenant's row as the system: same name, same
	// tenant.
	requireIntact := func(t *testing.T, s tenantSide) {
		t.Helper()
		id := s.ids[k.table]
		name, err := k.get(sys, c, id)
		require.NoError(t, err, "tenant's row %s is gone", id)
		require.Equal(t, s.names[k.table], name, "tenant's row %s was changed", id)
		tn, err := k.tenantOf(sys, c, id)
		require.NoError(t, err)
		require.Equal(t, s.tenant, tn, "tenant's row %s changed tenant", id)
	}
	requireBIntact := func(t *testing.T) { t.Helper(); requireIntact(t, f.b) }

	t.Run("list", func(t *testing.T) {
		ids, err := k.list(asA, c)
		require.NoError(t, err)
		require.Equal(t, []string{aID}, ids)
		require.NotContains(t, ids, bID)
		// The system sees both: the filter, not the data, hides B's row.
		all, err := k.list(sys, c)
		require.NoError(t, err)
		require.Subset(t, all, []string{aID, bID})
	})
	t.Run("get", func(t *testing.T) {
		name, err := k.get(asA, c, aID)
		require.NoError(t, err)
		require.Equal(t, f.a.names[k.table], name)
		_, err = k.get(asA, c, bID)
		requireHidden(t, err)
	})
	t.Run("noder", func(t *testing.T) {
		if k.notNode {
			for _, id := range []string{aID, bID} {
				_, err := c.Noder(asA, id, ent.WithNodeType(pid.NodeType))
				require.Error(t, err, "the node resolver resolved %s", id)
			}
			return
		}
		n, err := c.Noder(asA, aID, ent.WithNodeType(pid.NodeType))
		require.NoError(t, err)
		require.NotNil(t, n)
		_, err = c.Noder(asA, bID, ent.WithNodeType(pid.NodeType))
		requireHidden(t, err)
	})
	t.Run("update", func(t *testing.T) {
		if k.appendOnly {
			require.Error(t, k.update(asA, c, bID, k.name("changed by A")))
			requireBIntact(t)
			require.Error(t, k.update(asA, c, aID, k.name("changed by A")), "an append-only row was updated")
			requireIntact(t, f.a)
			return
		}
		if k.immutable {
			// ent runs no UPDATE for an update of nothing and reads the row
			// back by id alone: the policy refuses such updates, or B's row
			// would come back to A.
			requireDenied(t, k.update(asA, c, bID, k.name("changed by A")))
			requireBIntact(t)
			requireDenied(t, k.update(asA, c, aID, k.name("changed by A")), "an update of nothing must be refused")
			requireIntact(t, f.a)
			return
		}
		requireHidden(t, k.update(asA, c, bID, k.name("changed by A")))
		requireBIntact(t)
		renamed := k.name("renamed by A")
		require.NoError(t, k.update(asA, c, aID, renamed))
		name, err := k.get(sys, c, aID)
		require.NoError(t, err)
		require.Equal(t, renamed, name)
	})
	t.Run("update_all", func(t *testing.T) {
		n, err := k.updateAll(asA, c, k.name("bulk by A"))
		if k.appendOnly {
			if err == nil {
				require.Zero(t, n, "bulk update changed append-only rows")
			}
			requireIntact(t, f.a)
			requireBIntact(t)
			return
		}
		if k.immutable {
			require.NoError(t, err)
			require.Zero(t, n, "a bulk update of nothing changed rows")
			requireIntact(t, f.a)
			requireBIntact(t)
			return
		}
		require.NoError(t, err)
		require.Equal(t, 1, n, "bulk update touched rows outside tenant A")
		requireBIntact(t)
	})
	t.Run("delete", func(t *testing.T) {
		requireHidden(t, k.delete(asA, c, bID))
		requireBIntact(t)
	})
	t.Run("create_in_other_tenant", func(t *testing.T) {
		_, err := k.create(asA, c, f.b.tenant, k.name("planted by A"))
		requireDenied(t, err)
		inB, err := k.list(viewerCtx(t, viewer.RoleAdmin, f.b.tenant), c)
		require.NoError(t, err)
		require.Equal(t, []string{bID}, inB, "a row was created in tenant B")
	})
	t.Run("create_stamps_own_tenant", func(t *testing.T) {
		id, err := k.create(asA, c, "", k.name("made by A"))
		require.NoError(t, err)
		tn, err := k.tenantOf(sys, c, id)
		require.NoError(t, err)
		require.Equal(t, f.a.tenant, tn)
		ids, err := k.list(asA, c)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{aID, id}, ids)
	})
	t.Run("create_explicit_own_tenant", func(t *testing.T) {
		id, err := k.create(asA, c, f.a.tenant, k.name("made by A explicitly"))
		require.NoError(t, err)
		tn, err := k.tenantOf(sys, c, id)
		require.NoError(t, err)
		require.Equal(t, f.a.tenant, tn)
	})
	t.Run("delete_all", func(t *testing.T) {
		mine, err := k.list(asA, c)
		require.NoError(t, err)
		if k.ledger {
			requireDenied(t, k.delete(asA, c, aID), "a ledger row was deleted")
			_, err := k.deleteAll(asA, c)
			requireDenied(t, err, "ledger rows were deleted")
			left, err := k.list(asA, c)
			require.NoError(t, err)
			require.ElementsMatch(t, mine, left, "ledger rows were deleted")
			requireBIntact(t)
			return
		}
		n, err := k.deleteAll(asA, c)
		require.NoError(t, err)
		require.Equal(t, len(mine), n, "bulk delete touched rows outside tenant A")
		requireBIntact(t)
		left, err := k.list(asA, c)
		require.NoError(t, err)
		require.Empty(t, left)
	})
}

// testAnalyst checks that an analyst of A reads A's rows (not B's) and can
// change nothing, not even in A.
func testAnalyst(t *testing.T, c *ent.Client, k kind) {
	f := newFixture(t, c)
	sys, asA := sysCtx(t), viewerCtx(t, viewer.RoleAnalyst, f.a.tenant)
	aID, bID := f.a.ids[k.table], f.b.ids[k.table]

	ids, err := k.list(asA, c)
	require.NoError(t, err)
	require.Equal(t, []string{aID}, ids)
	name, err := k.get(asA, c, aID)
	require.NoError(t, err)
	require.Equal(t, f.a.names[k.table], name)
	_, err = k.get(asA, c, bID)
	requireHidden(t, err)

	requireDenied(t, k.update(asA, c, aID, k.name("changed by analyst")))
	_, err = k.updateAll(asA, c, k.name("changed by analyst"))
	requireDenied(t, err)
	requireDenied(t, k.delete(asA, c, aID))
	_, err = k.deleteAll(asA, c)
	requireDenied(t, err)
	_, err = k.create(asA, c, "", k.name("made by analyst"))
	requireDenied(t, err)

	name, err = k.get(sys, c, aID)
	require.NoError(t, err, "A's row is gone")
	require.Equal(t, f.a.names[k.table], name, "A's row was changed")
	all, err := k.list(viewerCtx(t, viewer.RoleAdmin, f.a.tenant), c)
	require.NoError(t, err)
	require.Equal(t, []string{aID}, all, "a row was created")
}

// testNoViewer checks that a context without a viewer, or with a viewer
// without a tenant, is denied everything.
func testNoViewer(t *testing.T, c *ent.Client, k kind) {
	f := newFixture(t, c)
	aID := f.a.ids[k.table]
	for name, ctx := range map[string]context.Context{
		"none":      t.Context(),
		"no_tenant": viewer.NewContext(t.Context(), viewer.Viewer{Role: viewer.RoleAdmin, Subject: "nobody"}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := k.list(ctx, c)
			requireDenied(t, err)
			_, err = k.get(ctx, c, aID)
			requireDenied(t, err)
			requireDenied(t, k.update(ctx, c, aID, k.name("changed without viewer")))
			requireDenied(t, k.delete(ctx, c, aID))
			_, err = k.create(ctx, c, f.a.tenant, k.name("made without viewer"))
			requireDenied(t, err)
		})
	}
	name, err := k.get(sysCtx(t), c, aID)
	require.NoError(t, err)
	require.Equal(t, f.a.names[k.table], name)
}

// TestTenantIsolationCoverage fails when a table of the generated schema is
// not covered by TestTenantIsolation: every table with a tenant_id column must
// be a kind, and every other table must be listed as special or join table.
func TestTenantIsolationCoverage(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, k := range kinds() {
		require.False(t, covered[k.table], "kind %s listed twice", k.table)
		covered[k.table] = true
	}
	tables := map[string]bool{}
	for _, tbl := range migrate.Tables {
		tables[tbl.Name] = true
		hasTenant := slices.ContainsFunc(tbl.Columns, func(c *entschema.Column) bool { return c.Name == "tenant_id" })
		_, special := specialTables[tbl.Name]
		_, join := joinTables[tbl.Name]
		switch {
		case hasTenant:
			require.Truef(t, covered[tbl.Name],
				"table %s has tenant_id but no kind in TestTenantIsolation: add one to kinds()", tbl.Name)
		case special || join:
		default:
			require.Failf(t, "table not covered",
				"table %s has no tenant_id and no isolation test: make it tenant-owned (TenantMixin) or test its policy and list it in specialTables", tbl.Name)
		}
		if join {
			// A join table links two tenant-owned tables; the link tests cover them.
			require.Len(t, tbl.ForeignKeys, 2, tbl.Name)
			for _, fk := range tbl.ForeignKeys {
				require.Truef(t, covered[fk.RefTable.Name], "join table %s refers to %s, not a kind", tbl.Name, fk.RefTable.Name)
			}
		}
	}
	for name := range covered {
		require.Truef(t, tables[name], "kind %s is not a table of the schema", name)
	}
	for name := range specialTables {
		require.Truef(t, tables[name], "special table %s is not a table of the schema", name)
	}
	for name := range joinTables {
		require.Truef(t, tables[name], "join table %s is not a table of the schema", name)
	}
	// Every kind's table has a tenant_id column (else it would be listed above).
	for _, tbl := range migrate.Tables {
		if covered[tbl.Name] {
			require.Truef(t, slices.ContainsFunc(tbl.Columns, func(c *entschema.Column) bool { return c.Name == "tenant_id" }),
				"kind %s has no tenant_id column", tbl.Name)
		}
	}
}

// TestNoUpsert guards a hole closed by leaving ent's upsert feature off: an
// INSERT … ON CONFLICT DO UPDATE by a tenant viewer would rewrite the
// conflicting row of another tenant, which the privacy policy sees only as a
// create of the viewer's own row.
func TestNoUpsert(t *testing.T) {
	t.Parallel()
	for _, builder := range []any{
		&ent.StoreCreate{}, &ent.APIClientCreate{}, &ent.CustomerCreate{}, &ent.SegmentCreate{}, &ent.CampaignCreate{},
		&ent.PointsEntryCreate{}, &ent.PointsLotCreate{}, &ent.EventCreate{},
		&ent.ValidationTokenCreate{}, &ent.RedemptionCreate{}, &ent.IdempotencyKeyCreate{},
		&ent.SaleCreate{}, &ent.SaleItemCreate{}, &ent.SalePaymentCreate{},
		&ent.WebhookEndpointCreate{}, &ent.WebhookDeliveryCreate{}, &ent.WebhookAttemptCreate{},
		&ent.TenantCreate{}, &ent.SigningKeyCreate{},
	} {
		_, ok := reflect.TypeOf(builder).MethodByName("OnConflict")
		require.False(t, ok, "%T has OnConflict: ent's sql/upsert feature bypasses tenant isolation", builder)
	}
	// Nor ent's sql/modifier feature: a Modify(func(u){ u.Set("tenant_id", …) })
	// sets columns the policy never sees.
	for _, builder := range []any{&ent.StoreUpdate{}, &ent.CustomerUpdateOne{}, &ent.PointsLotUpdate{}, &ent.SaleUpdateOne{},
		&ent.WebhookEndpointUpdateOne{}, &ent.WebhookDeliveryUpdate{}, &ent.WebhookAttemptUpdateOne{}} {
		_, ok := reflect.TypeOf(builder).MethodByName("Modify")
		require.False(t, ok, "%T has Modify: ent's sql/modifier feature bypasses tenant isolation", builder)
	}
}

// TestRememberVisibleKeepsTenants: a row remembered as visible in one
// tenant's operation is not visible through the memo to another tenant.
func TestRememberVisibleKeepsTenants(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		sys := viewer.SystemContext(context.Background())
		a := db.Ent.Tenant.Create().SetName("A").SaveX(sys)
		b := db.Ent.Tenant.Create().SetName("B").SaveX(sys)
		cust := db.Ent.Customer.Create().SetTenantID(a.ID).SetDocument("52998224725").SaveX(sys)

		memo := schema.RememberVisible(context.Background())
		for range 2 { // the second finds it in the memo
			_, err := db.Ent.Segment.Create().SetName("VIP").AddCustomerIDs(cust.ID).Save(viewer.TenantContext(memo, a.ID))
			require.NoError(t, err)
		}
		_, err := db.Ent.Segment.Create().SetName("VIP").AddCustomerIDs(cust.ID).Save(viewer.TenantContext(memo, b.ID))
		require.ErrorIs(t, err, privacy.Deny)
	})
}
