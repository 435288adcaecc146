// Package schema declares the data model ent generates from: one file per
// entity, with the tenant mixin and the privacy policy every tenant-scoped
// entity shares.
package schema

import (
	"context"
	"fmt"
	"sync"

	"entgo.io/ent"
	"entgo.io/ent/entql"
	"entgo.io/ent/schema/mixin"

	gen "github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/hook"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/viewer"
)

// Policy of every tenant-owned entity: the whole of tenant isolation.
func (TenantMixin) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			allowSystem(),
			filterByTenant(),
		},
		Mutation: privacy.MutationPolicy{
			allowSystem(),
			denyReadOnly(),
			denyEmptyUpdate(),
			requireOwnTenantOnCreate(),
			requireVisibleEdges(),
			filterByTenant(),
		},
	}
}

// Policy of tenants: a tenant's principals see and change only their own
// tenant; creating and deleting tenants is the operator's.
func (Tenant) Policy() ent.Policy {
	return privacy.Policy{
		Query: privacy.QueryPolicy{
			allowSystem(),
			filterOwnTenant(),
		},
		Mutation: privacy.MutationPolicy{
			allowSystem(),
			denyReadOnly(),
			privacy.OnMutationOperation(privacy.AlwaysDenyRule(), ent.OpCreate|ent.OpDelete|ent.OpDeleteOne),
			denyEdgeChanges(),
			filterOwnTenant(),
		},
	}
}

// Policy of signing keys: the service's own secret, never a tenant's.
func (SigningKey) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{allowSystem(), privacy.AlwaysDenyRule()},
		Mutation: privacy.MutationPolicy{allowSystem(), privacy.AlwaysDenyRule()},
	}
}

// denyEmptyUpdate refuses an update that changes nothing: ent sends no
// UPDATE for it, so the tenant filter never runs, and reads the row back by
// id alone, which would hand another tenant's row to the caller.
func denyEmptyUpdate() privacy.MutationRule {
	return privacy.OnMutationOperation(privacy.MutationRuleFunc(func(ctx context.Context, m gen.Mutation) error {
		if len(m.Fields())+len(m.ClearedFields())+len(m.AddedFields())+
			len(m.AddedEdges())+len(m.RemovedEdges())+len(m.ClearedEdges()) == 0 {
			return privacy.Denyf("an update must change something")
		}
		return privacy.Skip
	}), ent.OpUpdateOne)
}

// denyEdgeChanges keeps tenant principals from linking tenants: a sandbox
// edge update would write the other tenant's row, which filterOwnTenant does
// not narrow. Sandboxes are linked by the operator.
func denyEdgeChanges() privacy.MutationRule {
	return privacy.MutationRuleFunc(func(ctx context.Context, m gen.Mutation) error {
		if len(m.AddedEdges())+len(m.RemovedEdges())+len(m.ClearedEdges()) > 0 {
			return privacy.Denyf("only the operator links tenants")
		}
		return privacy.Skip
	})
}

// AppendOnlyMixin keeps a tenant's records as they were written (the points
// ledger, the consent history, the audit trail): a hook rejects every
// update, whoever the viewer, and the policy keeps tenant principals from
// deleting them (the service may, for retention). List it after
// TenantMixin, whose policy runs first.
type AppendOnlyMixin struct{ mixin.Schema }

// Policy: the records are never deleted by a tenant's principals.
func (AppendOnlyMixin) Policy() ent.Policy { return ledgerPolicy() }

// Hooks reject updates.
func (AppendOnlyMixin) Hooks() []ent.Hook {
	return []ent.Hook{hook.Reject(ent.OpUpdate | ent.OpUpdateOne)}
}

// ledgerPolicy is evaluated after TenantMixin's, which has already allowed
// the service itself: it keeps tenant principals from deleting the ledger.
func ledgerPolicy() ent.Policy {
	return privacy.Policy{
		Mutation: privacy.MutationPolicy{
			privacy.OnMutationOperation(privacy.AlwaysDenyRule(), ent.OpDelete|ent.OpDeleteOne),
		},
	}
}

// visibleMemoKey keys the rows an operation has already found visible.
type visibleMemoKey struct{}

// RememberVisible returns a context in which a linked row found visible is
// not looked up again: an operation that writes several rows linked to the
// same parents (a sale's items and payments) checks each parent once. A
// row's visibility cannot change within an operation, and the memo is keyed
// by the viewer's tenant as well, so a context derived with another viewer
// learns nothing from it.
func RememberVisible(ctx context.Context) context.Context {
	return context.WithValue(ctx, visibleMemoKey{}, &sync.Map{})
}

// RememberRead returns a context like RememberVisible's in which ids are
// already known visible: the caller has just read them under the same
// viewer, through the privacy policies, for a bulk write linked to them
// (the churn scores of a page of customers), which would otherwise look up
// each one again.
func RememberRead(ctx context.Context, ids []string) context.Context {
	memo := &sync.Map{}
	v, _ := viewer.FromContext(ctx)
	for _, id := range ids {
		memo.Store(v.TenantID+"/"+id, struct{}{})
	}
	return context.WithValue(ctx, visibleMemoKey{}, memo)
}

// RememberSeen adds ids to the rows known visible in ctx (a context of
// RememberVisible; others are left as they are): the caller read them under
// the same viewer through the privacy policies, earlier (a tenant's
// campaigns kept in memory), and links a row to them.
func RememberSeen(ctx context.Context, ids ...string) {
	memo, _ := ctx.Value(visibleMemoKey{}).(*sync.Map)
	if memo == nil {
		return
	}
	v, _ := viewer.FromContext(ctx)
	for _, id := range ids {
		memo.Store(v.TenantID+"/"+id, struct{}{})
	}
}

// visible finds a row by id through the privacy policies: GraphQL node types
// through the node resolver, the others by their prefix.
func visible(ctx context.Context, c *gen.Client, id string) error {
	memo, _ := ctx.Value(visibleMemoKey{}).(*sync.Map)
	v, _ := viewer.FromContext(ctx)
	key := v.TenantID + "/" + id
	if memo != nil {
		if _, ok := memo.Load(key); ok {
			return nil
		}
	}
	var exists bool
	var err error
	switch pid.Prefix(id) {
	case pid.Validation:
		exists, err = c.ValidationToken.Query().Where(validationtoken.ID(id)).Exist(ctx)
	case pid.PointsLot:
		exists, err = c.PointsLot.Query().Where(pointslot.ID(id)).Exist(ctx)
	case pid.CustomerImport:
		exists, err = c.CustomerImport.Query().Where(customerimport.ID(id)).Exist(ctx)
	default:
		_, err = c.Noder(ctx, id, gen.WithNodeType(pid.NodeType))
		exists = err == nil
	}
	if err == nil && !exists {
		err = fmt.Errorf("no %s %q", pid.Prefix(id), id)
	}
	if err == nil && memo != nil {
		memo.Store(key, struct{}{})
	}
	return err
}

// tenantViewer returns the viewer of ctx, denying when it has no tenant.
func tenantViewer(ctx context.Context) (viewer.Viewer, error) {
	v, ok := viewer.FromContext(ctx)
	if !ok {
		return v, privacy.Denyf("no viewer in context")
	}
	if v.TenantID == "" {
		return v, privacy.Denyf("viewer %q has no tenant", v.Subject)
	}
	return v, nil
}

func allowSystem() privacy.QueryMutationRule {
	return privacy.ContextQueryMutationRule(func(ctx context.Context) error {
		if v, ok := viewer.FromContext(ctx); ok && v.IsSystem() {
			return privacy.Allow
		}
		return privacy.Skip
	})
}

func denyReadOnly() privacy.MutationRule {
	return privacy.ContextQueryMutationRule(func(ctx context.Context) error {
		if v, ok := viewer.FromContext(ctx); ok && v.ReadOnly() {
			return privacy.Denyf("viewer %q may only read", v.Subject)
		}
		return privacy.Skip
	})
}

// filterByTenant narrows queries, updates and deletes to the viewer's tenant.
func filterByTenant() privacy.QueryMutationRule {
	type tenantFilter interface{ WhereTenantID(entql.StringP) }
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		v, err := tenantViewer(ctx)
		if err != nil {
			return err
		}
		tf, ok := f.(tenantFilter)
		if !ok {
			return privacy.Denyf("%T is not tenant-owned", f)
		}
		tf.WhereTenantID(entql.StringEQ(v.TenantID))
		return privacy.Skip
	})
}

// filterOwnTenant narrows tenant queries and updates to the viewer's tenant.
func filterOwnTenant() privacy.QueryMutationRule {
	type idFilter interface{ WhereID(entql.StringP) }
	return privacy.FilterFunc(func(ctx context.Context, f privacy.Filter) error {
		v, err := tenantViewer(ctx)
		if err != nil {
			return err
		}
		idf, ok := f.(idFilter)
		if !ok {
			return privacy.Denyf("%T is not a tenant filter", f)
		}
		idf.WhereID(entql.StringEQ(v.TenantID))
		return privacy.Skip
	})
}

// requireOwnTenantOnCreate stamps new rows with the viewer's tenant and
// refuses rows of another tenant. Filters do not apply to creates.
func requireOwnTenantOnCreate() privacy.MutationRule {
	type tenantSetter interface {
		TenantID() (string, bool)
		SetTenantID(string)
	}
	return privacy.OnMutationOperation(privacy.MutationRuleFunc(func(ctx context.Context, m gen.Mutation) error {
		v, err := tenantViewer(ctx)
		if err != nil {
			return err
		}
		ts, ok := m.(tenantSetter)
		if !ok {
			return privacy.Denyf("%T is not tenant-owned", m)
		}
		switch id, set := ts.TenantID(); {
		case !set:
			ts.SetTenantID(v.TenantID)
		case id != v.TenantID:
			return privacy.Denyf("row of tenant %s created by a viewer of tenant %s", id, v.TenantID)
		}
		return privacy.Skip
	}), ent.OpCreate)
}

// requireVisibleEdges refuses a mutation that links a row to a row the viewer
// cannot see (another tenant's segment, say). It asks the node resolver, whose
// queries go through the same policies.
func requireVisibleEdges() privacy.MutationRule {
	type clienter interface{ Client() *gen.Client }
	return privacy.MutationRuleFunc(func(ctx context.Context, m gen.Mutation) error {
		c, ok := m.(clienter)
		if !ok {
			return privacy.Denyf("%T has no client", m)
		}
		for _, name := range m.AddedEdges() {
			if name == "tenant" { // checked by requireOwnTenantOnCreate; immutable after
				continue
			}
			for _, id := range m.AddedIDs(name) {
				s, _ := id.(string)
				if err := visible(ctx, c.Client(), s); err != nil {
					return privacy.Denyf("linked %s %q not found: %v", name, s, err)
				}
			}
		}
		return privacy.Skip
	})
}
