package schema

import (
	"context"
	"reflect"
	"slices"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	gen "github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/viewer"
)

// AuditEvent is a back-office change, export or erasure: who did what to
// which record, and which fields it changed; their values only for the few
// fields that hold no personal data and by which a change is judged (an
// audience's rule).
type AuditEvent struct{ ent.Schema }

func (AuditEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").DefaultFunc(pid.Generator(pid.Audit)).Immutable().
			Comment("The audit event's id, such as aud_01J…."),
		field.Time("created_at").Default(now).Immutable().Annotations(entgql.OrderField("CREATED_AT")).
			Comment("When it happened."),
		field.String("actor").NotEmpty().MaxLen(200).Immutable().
			Comment("Who did it: the API client's id, the back-office user's subject (SSO), or operator:<name> for the admin CLI."),
		field.String("actor_kind").NotEmpty().MaxLen(10).Immutable().
			Comment("Whether the actor is an API client (client), a back-office user (user) or the operator at the admin CLI (operator)."),
		field.String("action").NotEmpty().MaxLen(100).Immutable().
			Comment("What was done: <record>.<created|updated|deleted>, customer.exported, customer.erased, sandbox.reset."),
		field.String("target_type").NotEmpty().MaxLen(100).Immutable().
			Comment("The kind of record: campaign, tenant_settings, api_client, segment, store, webhook_endpoint, points_adjustment, customer, sandbox."),
		field.String("target_id").Default("").MaxLen(100).Immutable().
			Comment("The record's id; empty for a change of several records."),
		field.Strings("fields").Optional().Immutable().
			Comment("The fields and edges the change set or cleared, by name (their values are not kept, but in changes)."),
		field.JSON("changes", map[string]any{}).Optional().Immutable().
			Annotations(entgql.Type("Map")).
			Comment(`The values before and after the change of the fields whose values are kept, which hold no personal data: an audience's rule, as {"rule": {"old": "…", "new": "…"}} (old null on create). Absent for the other fields.`),
	}
}

func (AuditEvent) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, AppendOnlyMixin{}} }

func (AuditEvent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "id"), index.Fields("tenant_id", "created_at")}
}

func (AuditEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{
		schema.Comment("A back-office change, export or erasure of the tenant: actor, instant, action, target and the fields changed. Never changed."),
		entgql.RelayConnection(),
		entgql.QueryField().Description("The tenant's audit trail, oldest first unless ordered, with filters (administrators)."),
	}
}

// audited records in the audit trail the changes a tenant's principal (an
// API client or a back-office user, not the service itself) makes to
// records of targetType, with the mutation's client (its transaction, when
// it has one). A change of ignored fields only is not recorded (the
// counters a campaign's redemptions move, the tenant's customer count).
func audited(targetType string, ignored ...string) ent.Hook {
	return auditHook(targetType, ignored, nil)
}

// auditedKeeping is audited that also keeps the values, before and after,
// of the fields kept: string fields that hold no personal data.
func auditedKeeping(targetType string, kept ...string) ent.Hook {
	return auditHook(targetType, nil, kept)
}

func auditHook(targetType string, ignored, kept []string) ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			// The old values are read before the change is written.
			changes, err := keptValues(ctx, m, kept)
			if err != nil {
				return nil, err
			}
			v, err := next.Mutate(ctx, m)
			if err != nil {
				return v, err
			}
			return v, recordAudit(ctx, m, v, targetType, ignored, changes)
		})
	}
}

// keptValues are the old and new values of the kept fields m sets or
// clears: {"field": {"old": …, "new": …}}, null for none (a create's old).
func keptValues(ctx context.Context, m ent.Mutation, kept []string) (map[string]any, error) {
	changes := map[string]any{}
	for _, f := range kept {
		newValue, set := m.Field(f)
		if !set && !m.FieldCleared(f) {
			continue
		}
		var oldValue ent.Value
		if m.Op().Is(ent.OpUpdateOne) {
			old, err := m.OldField(ctx, f)
			if err != nil {
				return nil, err
			}
			oldValue = old
		}
		changes[f] = map[string]any{"old": derefString(oldValue), "new": derefString(newValue)}
	}
	if len(changes) == 0 {
		return nil, nil
	}
	return changes, nil
}

// derefString is a string field's value, nil for none.
func derefString(v ent.Value) any {
	if p, ok := v.(*string); ok {
		if p == nil {
			return nil
		}
		return *p
	}
	return v
}

func recordAudit(ctx context.Context, m ent.Mutation, v ent.Value, targetType string, ignored []string, changes map[string]any) error {
	changed := slices.Concat(m.Fields(), m.ClearedFields(), m.AddedFields(), m.AddedEdges(), m.RemovedEdges(), m.ClearedEdges())
	slices.Sort(changed)
	changed = slices.DeleteFunc(slices.Compact(changed), func(f string) bool { return f == "updated_at" || f == "tenant_id" })
	if !m.Op().Is(ent.OpCreate) && !slices.ContainsFunc(changed, func(f string) bool { return !slices.Contains(ignored, f) }) {
		return nil
	}
	action := targetType + ".updated"
	switch {
	case m.Op().Is(ent.OpCreate):
		action = targetType + ".created"
	case m.Op().Is(ent.OpDelete | ent.OpDeleteOne):
		action = targetType + ".deleted"
	}
	target := ""
	if withID, ok := m.(interface{ ID() (string, bool) }); ok {
		target, _ = withID.ID()
	}
	c, ok := m.(interface{ Client() *gen.Client })
	if !ok {
		return nil
	}
	return audit(ctx, c.Client(), tenantOf(m, v, target), action, targetType, target, changed, changes)
}

// tenantOf is the tenant of the record a mutation changed, for the
// operator, who acts in no tenant of its own: the tenant itself, else the
// tenant_id a create sets or the record an update returns holds; "" for a
// bulk change.
func tenantOf(m ent.Mutation, v ent.Value, target string) string {
	if m.Type() == "Tenant" {
		return target
	}
	if id, ok := m.Field("tenant_id"); ok {
		return id.(string)
	}
	if rv := reflect.Indirect(reflect.ValueOf(v)); rv.Kind() == reflect.Struct {
		if f := rv.FieldByName("TenantID"); f.Kind() == reflect.String {
			return f.String()
		}
	}
	return ""
}

// Audit records an action of the viewer of ctx in the audit trail through
// c: when the viewer is a tenant's principal (an API client or a
// back-office user); the service's own work is not audited.
func Audit(ctx context.Context, c *gen.Client, action, targetType, targetID string, fields []string) error {
	return audit(ctx, c, "", action, targetType, targetID, fields, nil)
}

// audit is Audit of a change in tenant, which the operator at the admin CLI
// (who acts in every tenant) is audited in; a tenant's principal is audited
// in its own.
func audit(ctx context.Context, c *gen.Client, tenant, action, targetType, targetID string, fields []string, changes map[string]any) error {
	who, ok := viewer.FromContext(ctx)
	if !ok || who.Subject == "" || (who.IsService() && !who.IsOperator()) {
		return nil
	}
	var kind string
	switch {
	case who.IsOperator():
		kind = "operator"
	case who.TenantID == "":
		return nil
	case who.Role == viewer.RoleClient:
		kind, tenant = "client", who.TenantID
	case who.Role == viewer.RoleAdmin, who.Role == viewer.RoleAnalyst:
		kind, tenant = "user", who.TenantID
	default:
		return nil
	}
	if tenant == "" {
		return nil
	}
	// The trail records reads too (lookups, exports), of read-only viewers
	// as well: the entry is the service's own write, in the tenant chosen
	// above.
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	return c.AuditEvent.Create().SetTenantID(tenant).SetActor(who.Subject).SetActorKind(kind).
		SetAction(action).SetTargetType(targetType).SetTargetID(targetID).SetFields(fields).SetChanges(changes).Exec(ctx)
}
