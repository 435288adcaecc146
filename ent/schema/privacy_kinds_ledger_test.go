package schema_test

import (
	"context"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/validationtoken"
)

// ledgerAndRedemptionKinds are the kinds of the points ledger, consents,
// audit, events and redemptions.
func ledgerAndRedemptionKinds() []kind {
	return []kind{
		{
			// After customers: an entry needs a customer of its tenant.
			table:      pointsentry.Table,
			appendOnly: true,
			ledger:     true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.PointsEntry.Create().SetCustomerID(cu).
					SetKind(pointsentry.KindCredit).SetPoints(10).SetBalanceAfter(10).
					SetSourceKind(pointsentry.SourceKindOrder).SetSourceID(unique()).SetReason(name)
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
				return c.PointsEntry.Query().Where(ordersOnly).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Reason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing, and must
			// still be refused.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.PointsEntry.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.PointsEntry.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.PointsEntry.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.PointsEntry.Delete().Exec(ctx) },
		},
		{
			// After customers: a consent change is of a customer of its
			// tenant. The name is its source.
			table:      consentchange.Table,
			appendOnly: true,
			ledger:     true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.ConsentChange.Create().SetCustomerID(cu).SetPurpose(consentchange.PurposeMarketingEmail).
					SetGranted(true).SetChannel(consentchange.ChannelAPI).SetSource(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.ConsentChange.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ConsentChange.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Source, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ConsentChange.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing, and must
			// still be refused.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.ConsentChange.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.ConsentChange.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.ConsentChange.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.ConsentChange.Delete().Exec(ctx) },
		},
		{
			// The name is the actor.
			table:      auditevent.Table,
			appendOnly: true,
			ledger:     true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.AuditEvent.Create().SetActor(name).SetActorKind("user").SetAction("store.created").SetTargetType("store")
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.AuditEvent.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.AuditEvent.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Actor, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.AuditEvent.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing, and must
			// still be refused.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.AuditEvent.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.AuditEvent.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.AuditEvent.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.AuditEvent.Delete().Exec(ctx) },
		},
		{
			// The name is the remaining points.
			table:   pointslot.Table,
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
				entry, err := entryFor(ctx, c, cu)
				if err != nil {
					return "", err
				}
				m := c.PointsLot.Create().SetCustomerID(cu).SetEntryID(entry).
					SetPoints(lotPoints).SetRemaining(remaining).SetExpiresAt(time.Now().UTC().Add(365 * 24 * time.Hour))
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.PointsLot.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsLot.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.FormatInt(r.Remaining, 10), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsLot.Get(ctx, id)
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
				return c.PointsLot.UpdateOneID(id).SetRemaining(remaining).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				remaining, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return 0, err
				}
				return c.PointsLot.Update().SetRemaining(remaining).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.PointsLot.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.PointsLot.Delete().Exec(ctx) },
		},
		{
			// The name is the order that took the hold.
			table:   pointshold.Table,
			ledger:  true,
			notNode: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.PointsHold.Create().SetCustomerID(cu).SetChannel(pointshold.ChannelPdv).SetSession(unique()).
					SetPoints(100).SetAmount(decimal.NewFromInt(1)).SetExpiresAt(time.Now().UTC().Add(15 * time.Minute)).
					SetOrderID(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.PointsHold.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsHold.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return *r.OrderID, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.PointsHold.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.PointsHold.UpdateOneID(id).SetOrderID(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.PointsHold.Update().SetOrderID(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.PointsHold.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.PointsHold.Delete().Exec(ctx) },
		},
		{
			// The name is the publication time. The events eventFor makes
			// for deliveries are left out of lists and bulk changes.
			table: event.Table,
			value: uniquePublishedAt,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				at, err := time.Parse(time.RFC3339, name)
				if err != nil {
					return "", err
				}
				m := c.Event.Create().SetType("test.happened").SetSubjectID(unique()).
					SetData(map[string]any{"n": 1}).SetPublishedAt(at)
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
				return c.Event.Query().Where(notForDeliveries).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Event.Get(ctx, id)
				if err != nil || r.PublishedAt == nil {
					return "", err
				}
				return r.PublishedAt.UTC().Format(time.RFC3339), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Event.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				at, err := time.Parse(time.RFC3339, name)
				if err != nil {
					return err
				}
				return c.Event.UpdateOneID(id).SetPublishedAt(at).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				at, err := time.Parse(time.RFC3339, name)
				if err != nil {
					return 0, err
				}
				return c.Event.Update().Where(notForDeliveries).SetPublishedAt(at).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Event.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.Event.Delete().Where(notForDeliveries).Exec(ctx)
			},
		},
		{
			// After customers: a token needs a customer of its tenant. The
			// name is the order, the only mutable field. The tokens tokenFor
			// makes for redemptions are left out of lists and bulk changes.
			table:   validationtoken.Table,
			notNode: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newValidationToken(c, cu).SetOrderID(name)
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
				return c.ValidationToken.Query().Where(notForRedemptions).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ValidationToken.Get(ctx, id)
				if err != nil || r.OrderID == nil {
					return "", err
				}
				return *r.OrderID, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ValidationToken.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.ValidationToken.UpdateOneID(id).SetOrderID(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.ValidationToken.Update().Where(notForRedemptions).SetOrderID(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.ValidationToken.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.ValidationToken.Delete().Where(notForRedemptions).Exec(ctx)
			},
		},
		{
			// After campaigns and customers: a redemption needs both of its
			// tenant, and a fresh validation token (tokenFor). The name is
			// the order, an immutable field.
			table:     redemption.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cm, err := campaignOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				tk, err := tokenFor(ctx, c, cu)
				if err != nil {
					return "", err
				}
				m := newRedemption(c, cm, cu, tk, name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Redemption.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Redemption.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.OrderID, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Redemption.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.Redemption.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.Redemption.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.Redemption.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Redemption.Delete().Exec(ctx) },
		},
		{
			// The name is the key, an immutable field.
			table:     idempotencykey.Table,
			immutable: true,
			notNode:   true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.IdempotencyKey.Create().SetClientID("cli_" + unique()).SetKey(name).
					SetRequestHash("hash-" + unique()).SetResponseStatus(201).SetResponseBody([]byte(`{"ok":true}`)).
					SetExpiresAt(time.Now().UTC().Add(24 * time.Hour))
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.IdempotencyKey.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.IdempotencyKey.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Key, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.IdempotencyKey.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.IdempotencyKey.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.IdempotencyKey.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.IdempotencyKey.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.IdempotencyKey.Delete().Exec(ctx) },
		},
	}
}
