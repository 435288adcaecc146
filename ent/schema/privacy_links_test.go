package schema_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/viewer"
)

// links is what the checks of links between rows share: tenants A and B
// with their rows, the contexts of the system and of A's administrator, and
// reads, as the system, of the rows an edge joins.
type links struct {
	c        *ent.Client
	f        fixture
	sys, asA context.Context
	a, b     map[string]string

	segmentsOf, customersOf, entriesOf func(t *testing.T, id string) []string
	redemptionsWhere                   func(t *testing.T, ps ...predicate.Redemption) []string
	salesWhere                         func(t *testing.T, ps ...predicate.Sale) []string
	saleItemsWhere                     func(t *testing.T, ps ...predicate.SaleItem) []string
	salePaymentsWhere                  func(t *testing.T, ps ...predicate.SalePayment) []string
	deliveriesWhere                    func(t *testing.T, ps ...predicate.WebhookDelivery) []string
	attemptsWhere                      func(t *testing.T, ps ...predicate.WebhookAttempt) []string
}

// testLinks checks that edges never join rows of two tenants.
func testLinks(t *testing.T, c *ent.Client) {
	l := newLinks(t, c)
	l.customers(t)
	l.sales(t)
	l.webhooks(t)
	l.traversals(t)
}

// newLinks makes the fixture of the checks of links.
func newLinks(t *testing.T, c *ent.Client) *links {
	f := newFixture(t, c)
	sys, asA := sysCtx(t), viewerCtx(t, viewer.RoleAdmin, f.a.tenant)
	l := &links{c: c, f: f, sys: sys, asA: asA, a: f.a.ids, b: f.b.ids}

	l.segmentsOf = func(t *testing.T, customerID string) []string {
		ids, err := c.Customer.Query().Where(customer.ID(customerID)).QuerySegments().IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.customersOf = func(t *testing.T, segmentID string) []string {
		ids, err := c.Segment.Query().Where(segment.ID(segmentID)).QueryCustomers().IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.entriesOf = func(t *testing.T, customerID string) []string {
		ids, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(customerID), ordersOnly).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.redemptionsWhere = func(t *testing.T, ps ...predicate.Redemption) []string {
		ids, err := c.Redemption.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.salesWhere = func(t *testing.T, ps ...predicate.Sale) []string {
		ids, err := c.Sale.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.saleItemsWhere = func(t *testing.T, ps ...predicate.SaleItem) []string {
		ids, err := c.SaleItem.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.salePaymentsWhere = func(t *testing.T, ps ...predicate.SalePayment) []string {
		ids, err := c.SalePayment.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.deliveriesWhere = func(t *testing.T, ps ...predicate.WebhookDelivery) []string {
		ids, err := c.WebhookDelivery.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	l.attemptsWhere = func(t *testing.T, ps ...predicate.WebhookAttempt) []string {
		ids, err := c.WebhookAttempt.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	return l
}

// customers checks the links of customers, segments, campaigns, points
// entries, validation tokens and redemptions.
func (l *links) customers(t *testing.T) {
	c, f, sys, asA, a, b := l.c, l.f, l.sys, l.asA, l.a, l.b
	segmentsOf, customersOf, entriesOf, redemptionsWhere := l.segmentsOf, l.customersOf, l.entriesOf, l.redemptionsWhere
	t.Run("customer_add_other_tenant_segment", func(t *testing.T) {
		err := c.Customer.UpdateOneID(a[customer.Table]).AddSegmentIDs(b[segment.Table]).Exec(asA)
		requireDenied(t, err)
		require.Equal(t, []string{a[segment.Table]}, segmentsOf(t, a[customer.Table]))
		require.Equal(t, []string{b[customer.Table]}, customersOf(t, b[segment.Table]))
	})
	t.Run("customer_create_with_other_tenant_segment", func(t *testing.T) {
		_, err := c.Customer.Create().SetDocument(unique()).AddSegmentIDs(b[segment.Table]).Save(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[customer.Table]}, customersOf(t, b[segment.Table]))
	})
	t.Run("segment_add_other_tenant_customer", func(t *testing.T) {
		err := c.Segment.UpdateOneID(a[segment.Table]).AddCustomerIDs(b[customer.Table]).Exec(asA)
		requireDenied(t, err)
		require.Equal(t, []string{a[customer.Table]}, customersOf(t, a[segment.Table]))
		require.Equal(t, []string{b[segment.Table]}, segmentsOf(t, b[customer.Table]))
	})
	t.Run("campaign_create_with_other_tenant_segment", func(t *testing.T) {
		_, err := newCampaign(c, "targets B").SetSegmentID(b[segment.Table]).Save(asA)
		requireDenied(t, err)
		ids, err := c.Campaign.Query().Where(campaign.SegmentID(b[segment.Table])).IDs(sys)
		require.NoError(t, err)
		require.Equal(t, []string{b[campaign.Table]}, ids)
	})
	t.Run("campaign_set_other_tenant_segment", func(t *testing.T) {
		err := c.Campaign.UpdateOneID(a[campaign.Table]).SetSegmentID(b[segment.Table]).Exec(asA)
		requireDenied(t, err)
		cm, err := c.Campaign.Get(sys, a[campaign.Table])
		require.NoError(t, err)
		require.NotNil(t, cm.SegmentID)
		require.Equal(t, a[segment.Table], *cm.SegmentID)
	})
	t.Run("segment_add_other_tenant_campaign", func(t *testing.T) {
		// A campaign of B targeting every customer: the O2M link would
		// otherwise succeed at the database.
		bc, err := newCampaign(c, "B untargeted").SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		err = c.Segment.UpdateOneID(a[segment.Table]).AddCampaignIDs(bc.ID).Exec(asA)
		requireDenied(t, err)
		bc, err = c.Campaign.Get(sys, bc.ID)
		require.NoError(t, err)
		require.Nil(t, bc.SegmentID)
	})
	t.Run("points_entry_create_for_other_tenant_customer", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := c.PointsEntry.Create().SetCustomerID(b[customer.Table]).
				SetKind(pointsentry.KindCredit).SetPoints(10).SetBalanceAfter(10).
				SetSourceKind(pointsentry.SourceKindOrder).SetSourceID(unique())
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[pointsentry.Table]}, entriesOf(t, b[customer.Table]))
	})
	t.Run("customer_add_other_tenant_points_entry", func(t *testing.T) {
		err := c.Customer.UpdateOneID(a[customer.Table]).AddPointsEntryIDs(b[pointsentry.Table]).Exec(asA)
		requireDenied(t, err)
		require.Equal(t, []string{a[pointsentry.Table]}, entriesOf(t, a[customer.Table]))
		require.Equal(t, []string{b[pointsentry.Table]}, entriesOf(t, b[customer.Table]))
	})
	t.Run("redemption_create_with_other_tenant_campaign", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			tk, err := tokenFor(sys, c, a[customer.Table])
			require.NoError(t, err)
			m := newRedemption(c, b[campaign.Table], a[customer.Table], tk, "for B's campaign")
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err = m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[redemption.Table]}, redemptionsWhere(t, redemption.CampaignID(b[campaign.Table])))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.TenantID(f.a.tenant)))
	})
	t.Run("redemption_create_for_other_tenant_customer", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			tk, err := tokenFor(sys, c, a[customer.Table])
			require.NoError(t, err)
			m := newRedemption(c, a[campaign.Table], b[customer.Table], tk, "for B's customer")
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err = m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[redemption.Table]}, redemptionsWhere(t, redemption.CustomerID(b[customer.Table])))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.TenantID(f.a.tenant)))
	})
	t.Run("redemption_create_with_other_tenant_validation_token", func(t *testing.T) {
		// B's token of the validation_tokens kind, and the one B's own
		// redemption used (another campaign: the unique index allows it).
		bRedToken, err := c.Redemption.Query().Where(redemption.ID(b[redemption.Table])).QueryValidationToken().OnlyID(sys)
		require.NoError(t, err)
		for _, tk := range []string{b[validationtoken.Table], bRedToken} {
			for _, tenantID := range []string{"", f.a.tenant} {
				m := newRedemption(c, a[campaign.Table], a[customer.Table], tk, "with B's token")
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				_, err := m.Save(asA)
				requireDenied(t, err)
			}
		}
		require.Empty(t, redemptionsWhere(t, redemption.ValidationTokenID(b[validationtoken.Table])))
		require.Equal(t, []string{b[redemption.Table]}, redemptionsWhere(t, redemption.ValidationTokenID(bRedToken)))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.TenantID(f.a.tenant)))
	})
	t.Run("validation_token_create_for_other_tenant_customer", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newValidationToken(c, b[customer.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		ids, err := c.ValidationToken.Query().Where(validationtoken.CustomerID(b[customer.Table]), notForRedemptions).IDs(sys)
		require.NoError(t, err)
		require.Equal(t, []string{b[validationtoken.Table]}, ids)
		ids, err = c.ValidationToken.Query().Where(validationtoken.TenantID(f.a.tenant), notForRedemptions).IDs(sys)
		require.NoError(t, err)
		require.Equal(t, []string{a[validationtoken.Table]}, ids)
	})
	t.Run("customer_add_other_tenant_redemption", func(t *testing.T) {
		// The O2M edge would rewrite the customer_id of B's redemption.
		err := c.Customer.UpdateOneID(a[customer.Table]).AddRedemptionIDs(b[redemption.Table]).Exec(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[redemption.Table]}, redemptionsWhere(t, redemption.CustomerID(b[customer.Table])))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.CustomerID(a[customer.Table])))
	})
	t.Run("campaign_add_other_tenant_redemption", func(t *testing.T) {
		err := c.Campaign.UpdateOneID(a[campaign.Table]).AddRedemptionIDs(b[redemption.Table]).Exec(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[redemption.Table]}, redemptionsWhere(t, redemption.CampaignID(b[campaign.Table])))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.CampaignID(a[campaign.Table])))
	})
}

// sales checks the links of sales, their items and payments.
func (l *links) sales(t *testing.T) {
	c, f, sys, asA, a, b := l.c, l.f, l.sys, l.asA, l.a, l.b
	redemptionsWhere := l.redemptionsWhere
	salesWhere, saleItemsWhere, salePaymentsWhere := l.salesWhere, l.saleItemsWhere, l.salePaymentsWhere
	t.Run("sale_create_at_other_tenant_store", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newSale(c, b[store.Table]).SetCustomerID(a[customer.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[sale.Table]}, salesWhere(t, sale.StoreID(b[store.Table])))
		require.Equal(t, []string{a[sale.Table]}, salesWhere(t, sale.TenantID(f.a.tenant)))
	})
	t.Run("sale_create_for_other_tenant_customer", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newSale(c, a[store.Table]).SetCustomerID(b[customer.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[sale.Table]}, salesWhere(t, sale.CustomerID(b[customer.Table])))
		require.Equal(t, []string{a[sale.Table]}, salesWhere(t, sale.TenantID(f.a.tenant)))
	})
	t.Run("sale_set_other_tenant_customer", func(t *testing.T) {
		// customer_id is mutable: the processing job credits the sale.
		requireDenied(t, c.Sale.UpdateOneID(a[sale.Table]).SetCustomerID(b[customer.Table]).Exec(asA))
		_, err := c.Sale.Update().SetCustomerID(b[customer.Table]).Save(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[sale.Table]}, salesWhere(t, sale.CustomerID(b[customer.Table])))
		require.Equal(t, []string{a[sale.Table]}, salesWhere(t, sale.CustomerID(a[customer.Table])))
		// Crediting A's own customer is allowed.
		require.NoError(t, c.Sale.UpdateOneID(a[sale.Table]).SetCustomerID(a[customer.Table]).Exec(asA))
	})
	t.Run("sale_item_create_in_other_tenant_sale", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newSaleItem(c, b[sale.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[saleitem.Table]}, saleItemsWhere(t, saleitem.SaleID(b[sale.Table])))
		require.Equal(t, []string{a[saleitem.Table]}, saleItemsWhere(t, saleitem.TenantID(f.a.tenant)))
	})
	t.Run("sale_payment_create_in_other_tenant_sale", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newSalePayment(c, b[sale.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[salepayment.Table]}, salePaymentsWhere(t, salepayment.SaleID(b[sale.Table])))
		require.Equal(t, []string{a[salepayment.Table]}, salePaymentsWhere(t, salepayment.TenantID(f.a.tenant)))
	})
	t.Run("sale_add_other_tenant_item_or_payment", func(t *testing.T) {
		// The O2M edges would rewrite the sale_id of B's item or payment.
		requireDenied(t, c.Sale.UpdateOneID(a[sale.Table]).AddItemIDs(b[saleitem.Table]).Exec(asA))
		requireDenied(t, c.Sale.UpdateOneID(a[sale.Table]).AddPaymentIDs(b[salepayment.Table]).Exec(asA))
		_, err := c.Sale.Update().AddItemIDs(b[saleitem.Table]).Save(asA)
		requireDenied(t, err)
		_, err = newSale(c, a[store.Table]).AddItemIDs(b[saleitem.Table]).Save(asA)
		requireDenied(t, err)
		_, err = newSale(c, a[store.Table]).AddPaymentIDs(b[salepayment.Table]).Save(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[saleitem.Table]}, saleItemsWhere(t, saleitem.SaleID(b[sale.Table])))
		require.Equal(t, []string{b[salepayment.Table]}, salePaymentsWhere(t, salepayment.SaleID(b[sale.Table])))
		require.Equal(t, []string{a[saleitem.Table]}, saleItemsWhere(t, saleitem.SaleID(a[sale.Table])))
		require.Equal(t, []string{a[salepayment.Table]}, salePaymentsWhere(t, salepayment.SaleID(a[sale.Table])))
		require.Equal(t, []string{a[sale.Table]}, salesWhere(t, sale.TenantID(f.a.tenant)))
	})
	t.Run("redemption_create_in_other_tenant_sale", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			tk, err := tokenFor(sys, c, a[customer.Table])
			require.NoError(t, err)
			m := newRedemption(c, a[campaign.Table], a[customer.Table], tk, "in B's sale").SetSaleID(b[sale.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err = m.Save(asA)
			requireDenied(t, err)
		}
		require.Empty(t, redemptionsWhere(t, redemption.SaleID(b[sale.Table])))
		require.Equal(t, []string{a[redemption.Table]}, redemptionsWhere(t, redemption.TenantID(f.a.tenant)))
		// Naming A's own sale is allowed; the row is removed so later
		// checks see only the fixture's redemptions.
		tk, err := tokenFor(sys, c, a[customer.Table])
		require.NoError(t, err)
		r, err := newRedemption(c, a[campaign.Table], a[customer.Table], tk, "in A's sale").SetSaleID(a[sale.Table]).Save(asA)
		require.NoError(t, err)
		require.NoError(t, c.Redemption.DeleteOneID(r.ID).Exec(sys))
	})
}
