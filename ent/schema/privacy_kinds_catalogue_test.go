package schema_test

import (
	"context"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/ent/coupon"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointshold"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/product"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/viewer"
)

// customerAndCatalogueKinds are the kinds of the back office, customers and
// the catalogue.
func customerAndCatalogueKinds() []kind {
	return []kind{
		{
			table: store.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.Store.Create().SetCode(unique()).SetName(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Store.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Store.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Store.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Store.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Store.Update().SetName(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Store.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				// The stores' sales refer to them (no cascade).
				v, _ := viewer.FromContext(ctx)
				if err := deleteSalesOf(ctx, c, v.TenantID); err != nil {
					return 0, err
				}
				return c.Store.Delete().Exec(ctx)
			},
		},
		{
			table: apiclient.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.APIClient.Create().SetKind(apiclient.KindOauth).SetSecretHash("hash-" + unique()).SetName(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.APIClient.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.APIClient.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.APIClient.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.APIClient.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.APIClient.Update().SetName(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.APIClient.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.APIClient.Delete().Exec(ctx) },
		},
		{
			table: customer.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.Customer.Create().SetDocument(unique()).SetName(name)
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
				return c.Customer.Query().Where(notScoreHolder).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Customer.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Customer.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Customer.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Customer.Update().Where(notScoreHolder).SetName(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Customer.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				// The customers' redemptions, validation tokens, lots and
				// entries refer to them (no cascade), and only the service
				// deletes ledger rows.
				v, _ := viewer.FromContext(ctx)
				sys := viewer.SystemContext(ctx)
				if _, err := c.Redemption.Delete().Where(redemption.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.CustomerScore.Delete().Where(customerscore.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.ConsentChange.Delete().Where(consentchange.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.ValidationToken.Delete().Where(validationtoken.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.PointsLot.Delete().Where(pointslot.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.PointsHold.Delete().Where(pointshold.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if _, err := c.PointsEntry.Delete().Where(pointsentry.TenantID(v.TenantID)).Exec(sys); err != nil {
					return 0, err
				}
				if err := deleteWallets(sys, c, v.TenantID); err != nil {
					return 0, err
				}
				return c.Customer.Delete().Where(notScoreHolder).Exec(ctx)
			},
		},
		{
			table: segment.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.Segment.Create().SetName(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Segment.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Segment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Segment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Segment.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Segment.Update().SetName(name).Save(ctx)
			},
			delete:    func(ctx context.Context, c *ent.Client, id string) error { return c.Segment.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Segment.Delete().Exec(ctx) },
		},
		{
			table: campaign.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := newCampaign(c, name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Campaign.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Campaign.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Campaign.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Campaign.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Campaign.Update().SetName(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Campaign.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				// The campaigns' redemptions refer to them (no cascade).
				v, _ := viewer.FromContext(ctx)
				if _, err := c.Redemption.Delete().Where(redemption.TenantID(v.TenantID)).Exec(viewer.SystemContext(ctx)); err != nil {
					return 0, err
				}
				return c.Campaign.Delete().Exec(ctx)
			},
		},
		{
			// A coupon is of a campaign of its tenant. The name is its note.
			table: coupon.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				campaignID, err := c.Campaign.Query().Where(campaign.TenantID(tenantOr(ctx, tenantID))).FirstID(viewer.SystemContext(ctx))
				if err != nil {
					return "", err
				}
				m := c.Coupon.Create().SetCampaignID(campaignID).SetCode(unique()).SetNote(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Coupon.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Coupon.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Note, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Coupon.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Coupon.UpdateOneID(id).SetNote(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Coupon.Update().SetNote(name).Save(ctx)
			},
			delete:    func(ctx context.Context, c *ent.Client, id string) error { return c.Coupon.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Coupon.Delete().Exec(ctx) },
		},
		{
			table: product.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.Product.Create().SetSku(unique()).SetName(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Product.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Product.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Name, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Product.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Product.UpdateOneID(id).SetName(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Product.Update().SetName(name).Save(ctx)
			},
			delete:    func(ctx context.Context, c *ent.Client, id string) error { return c.Product.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Product.Delete().Exec(ctx) },
		},
	}
}
