package schema_test

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/viewer"
)

// scoreReturnAndWebhookKinds are the kinds of scores, sale returns and webhooks.
func scoreReturnAndWebhookKinds() []kind {
	return []kind{
		{
			// A score is of a customer of its tenant, one each: each row
			// gets a customer of its own, made by the service. The name is
			// the reason, a mutable string.
			table: customerscore.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				cu, err := c.Customer.Create().SetTenantID(tenantOr(ctx, tenantID)).SetDocument(unique()).SetName(scoreHolderName).
					Save(viewer.SystemContext(ctx))
				if err != nil {
					return "", err
				}
				m := c.CustomerScore.Create().SetCustomerID(cu.ID).SetScoredAt(time.Now().UTC()).SetRisk("unknown").SetReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.CustomerScore.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerScore.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Reason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerScore.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.CustomerScore.UpdateOneID(id).SetReason(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.CustomerScore.Update().SetReason(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerScore.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.CustomerScore.Delete().Exec(ctx) },
		},
		{
			// After sales: a return is of a sale of its tenant. The name is
			// the reason, an immutable field.
			table:     salereturn.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				sa, err := saleOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSaleReturn(c, sa).SetReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.SaleReturn.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleReturn.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Reason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleReturn.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// The name is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.SaleReturn.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.SaleReturn.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.SaleReturn.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.SaleReturn.Delete().Exec(ctx) },
		},
		{
			// The name is the description, a mutable string. Deleting an
			// endpoint deletes its deliveries and their attempts (ON DELETE
			// CASCADE).
			table: webhookendpoint.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := newWebhookEndpoint(c).SetDescription(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.WebhookEndpoint.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookEndpoint.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Description, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookEndpoint.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.WebhookEndpoint.UpdateOneID(id).SetDescription(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.WebhookEndpoint.Update().SetDescription(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WebhookEndpoint.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WebhookEndpoint.Delete().Exec(ctx) },
		},
		{
			// After endpoints: a delivery is of a fresh event (eventFor) to
			// an endpoint of its tenant. The name is the last error, a
			// mutable string. Deleting a delivery deletes its attempts (ON
			// DELETE CASCADE).
			table: webhookdelivery.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				ep, err := endpointOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				ev, err := eventFor(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newWebhookDelivery(c, ep, ev).SetLastError(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.WebhookDelivery.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookDelivery.Get(ctx, id)
				if err != nil || r.LastError == nil {
					return "", err
				}
				return *r.LastError, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookDelivery.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.WebhookDelivery.UpdateOneID(id).SetLastError(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.WebhookDelivery.Update().SetLastError(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WebhookDelivery.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WebhookDelivery.Delete().Exec(ctx) },
		},
		{
			// After deliveries: an attempt is of a delivery of its tenant.
			// The name is the response excerpt, an immutable field.
			table:     webhookattempt.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				dl, err := deliveryOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newWebhookAttempt(c, dl).SetResponseExcerpt(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.WebhookAttempt.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookAttempt.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.ResponseExcerpt, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.WebhookAttempt.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.WebhookAttempt.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.WebhookAttempt.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.WebhookAttempt.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.WebhookAttempt.Delete().Exec(ctx) },
		},
	}
}
