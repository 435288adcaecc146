package schema_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
)

// webhooks checks the links of webhook endpoints, deliveries and attempts.
func (l *links) webhooks(t *testing.T) {
	c, f, sys, asA, a, b := l.c, l.f, l.sys, l.asA, l.a, l.b
	deliveriesWhere, attemptsWhere := l.deliveriesWhere, l.attemptsWhere
	t.Run("webhook_delivery_create_to_other_tenant_endpoint", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			ev, err := eventFor(sys, c, f.a.tenant)
			require.NoError(t, err)
			m := newWebhookDelivery(c, b[webhookendpoint.Table], ev)
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err = m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[webhookdelivery.Table]}, deliveriesWhere(t, webhookdelivery.EndpointID(b[webhookendpoint.Table])))
		require.Equal(t, []string{a[webhookdelivery.Table]}, deliveriesWhere(t, webhookdelivery.TenantID(f.a.tenant)))
	})
	t.Run("webhook_delivery_create_of_other_tenant_event", func(t *testing.T) {
		bEvent, err := eventFor(sys, c, f.b.tenant)
		require.NoError(t, err)
		for _, ev := range []string{bEvent, b[event.Table]} {
			for _, tenantID := range []string{"", f.a.tenant} {
				m := newWebhookDelivery(c, a[webhookendpoint.Table], ev)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				_, err := m.Save(asA)
				requireDenied(t, err)
			}
			require.Empty(t, deliveriesWhere(t, webhookdelivery.EventID(ev)))
		}
		require.Equal(t, []string{a[webhookdelivery.Table]}, deliveriesWhere(t, webhookdelivery.TenantID(f.a.tenant)))
	})
	t.Run("webhook_attempt_create_in_other_tenant_delivery", func(t *testing.T) {
		for _, tenantID := range []string{"", f.a.tenant} {
			m := newWebhookAttempt(c, b[webhookdelivery.Table])
			if tenantID != "" {
				m.SetTenantID(tenantID)
			}
			_, err := m.Save(asA)
			requireDenied(t, err)
		}
		require.Equal(t, []string{b[webhookattempt.Table]}, attemptsWhere(t, webhookattempt.DeliveryID(b[webhookdelivery.Table])))
		require.Equal(t, []string{a[webhookattempt.Table]}, attemptsWhere(t, webhookattempt.TenantID(f.a.tenant)))
	})
	t.Run("webhook_add_other_tenant_delivery_or_attempt", func(t *testing.T) {
		// The O2M edges would rewrite the endpoint_id of B's delivery or
		// the delivery_id of B's attempt.
		requireDenied(t, c.WebhookEndpoint.UpdateOneID(a[webhookendpoint.Table]).AddDeliveryIDs(b[webhookdelivery.Table]).Exec(asA))
		_, err := c.WebhookEndpoint.Update().AddDeliveryIDs(b[webhookdelivery.Table]).Save(asA)
		requireDenied(t, err)
		_, err = newWebhookEndpoint(c).AddDeliveryIDs(b[webhookdelivery.Table]).Save(asA)
		requireDenied(t, err)
		requireDenied(t, c.WebhookDelivery.UpdateOneID(a[webhookdelivery.Table]).AddAttemptLogIDs(b[webhookattempt.Table]).Exec(asA))
		_, err = c.WebhookDelivery.Update().AddAttemptLogIDs(b[webhookattempt.Table]).Save(asA)
		requireDenied(t, err)
		ev, err := eventFor(sys, c, f.a.tenant)
		require.NoError(t, err)
		_, err = newWebhookDelivery(c, a[webhookendpoint.Table], ev).AddAttemptLogIDs(b[webhookattempt.Table]).Save(asA)
		requireDenied(t, err)
		require.Equal(t, []string{b[webhookdelivery.Table]}, deliveriesWhere(t, webhookdelivery.EndpointID(b[webhookendpoint.Table])))
		require.Equal(t, []string{a[webhookdelivery.Table]}, deliveriesWhere(t, webhookdelivery.EndpointID(a[webhookendpoint.Table])))
		require.Equal(t, []string{b[webhookattempt.Table]}, attemptsWhere(t, webhookattempt.DeliveryID(b[webhookdelivery.Table])))
		require.Equal(t, []string{a[webhookattempt.Table]}, attemptsWhere(t, webhookattempt.DeliveryID(a[webhookdelivery.Table])))
	})
	t.Run("webhook_traversal_filters_other_tenant", func(t *testing.T) {
		// Plant, as the system, a delivery and an attempt of B naming A's
		// endpoint and delivery, so the traversals are what must hide B's
		// rows.
		bEvent, err := eventFor(sys, c, f.b.tenant)
		require.NoError(t, err)
		bDelivery, err := newWebhookDelivery(c, a[webhookendpoint.Table], bEvent).SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		bAttempt, err := newWebhookAttempt(c, a[webhookdelivery.Table]).SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a[webhookdelivery.Table], bDelivery.ID},
			deliveriesWhere(t, webhookdelivery.EndpointID(a[webhookendpoint.Table])))
		require.ElementsMatch(t, []string{a[webhookattempt.Table], bAttempt.ID},
			attemptsWhere(t, webhookattempt.DeliveryID(a[webhookdelivery.Table])))

		// A's endpoint reaches only A's delivery, and A's delivery only
		// A's attempt, by traversal…
		ids, err := c.WebhookEndpoint.Query().Where(webhookendpoint.ID(a[webhookendpoint.Table])).QueryDeliveries().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[webhookdelivery.Table]}, ids)
		ids, err = c.WebhookDelivery.Query().Where(webhookdelivery.ID(a[webhookdelivery.Table])).QueryAttemptLog().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[webhookattempt.Table]}, ids)
		// …and by eager loading.
		ep, err := c.WebhookEndpoint.Query().Where(webhookendpoint.ID(a[webhookendpoint.Table])).
			WithDeliveries(func(q *ent.WebhookDeliveryQuery) { q.WithAttemptLog() }).Only(asA)
		require.NoError(t, err)
		require.Len(t, ep.Edges.Deliveries, 1)
		require.Equal(t, a[webhookdelivery.Table], ep.Edges.Deliveries[0].ID)
		require.Len(t, ep.Edges.Deliveries[0].Edges.AttemptLog, 1)
		require.Equal(t, a[webhookattempt.Table], ep.Edges.Deliveries[0].Edges.AttemptLog[0].ID)

		// B's endpoint and delivery are not reachable at all, nor their
		// deliveries and attempts.
		ids, err = c.WebhookEndpoint.Query().Where(webhookendpoint.ID(b[webhookendpoint.Table])).QueryDeliveries().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		ids, err = c.WebhookDelivery.Query().Where(webhookdelivery.ID(b[webhookdelivery.Table])).QueryAttemptLog().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)

		// Nor B's endpoint, event or delivery from a delivery or attempt of
		// A naming them, planted by the system.
		bEvent2, err := eventFor(sys, c, f.b.tenant)
		require.NoError(t, err)
		aDelivery, err := newWebhookDelivery(c, b[webhookendpoint.Table], bEvent2).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		_, err = c.WebhookDelivery.Query().Where(webhookdelivery.ID(aDelivery.ID)).QueryEndpoint().Only(asA)
		requireHidden(t, err)
		_, err = c.WebhookDelivery.Query().Where(webhookdelivery.ID(aDelivery.ID)).QueryEvent().Only(asA)
		requireHidden(t, err)
		dl, err := c.WebhookDelivery.Query().Where(webhookdelivery.ID(aDelivery.ID)).WithEndpoint().WithEvent().Only(asA)
		require.NoError(t, err)
		require.Nil(t, dl.Edges.Endpoint, "B's endpoint loaded through A's delivery")
		require.Nil(t, dl.Edges.Event, "B's event loaded through A's delivery")
		aAttempt, err := newWebhookAttempt(c, b[webhookdelivery.Table]).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		_, err = c.WebhookAttempt.Query().Where(webhookattempt.ID(aAttempt.ID)).QueryDelivery().Only(asA)
		requireHidden(t, err)
		at, err := c.WebhookAttempt.Query().Where(webhookattempt.ID(aAttempt.ID)).WithDelivery().Only(asA)
		require.NoError(t, err)
		require.Nil(t, at.Edges.Delivery, "B's delivery loaded through A's attempt")
	})
}

// traversals checks that traversing an edge planted across tenants shows
// the viewer none of the other tenant's rows.
func (l *links) traversals(t *testing.T) {
	c, f, sys, asA, a, b := l.c, l.f, l.sys, l.asA, l.a, l.b
	customersOf, entriesOf, redemptionsWhere := l.customersOf, l.entriesOf, l.redemptionsWhere
	saleItemsWhere, salePaymentsWhere := l.saleItemsWhere, l.salePaymentsWhere
	t.Run("traversal_filters_other_tenant", func(t *testing.T) {
		// Plant, as the system, a cross-tenant link that the policies would
		// refuse, so the traversals are what must hide B's rows.
		sysSeg, err := c.Segment.Create().SetTenantID(f.a.tenant).SetName("mixed").Save(sys)
		require.NoError(t, err)
		require.NoError(t, c.Segment.UpdateOneID(sysSeg.ID).
			AddCustomerIDs(a[customer.Table], b[customer.Table]).Exec(sys))
		require.ElementsMatch(t, []string{a[customer.Table], b[customer.Table]}, customersOf(t, sysSeg.ID))

		seg, err := c.Segment.Get(asA, sysSeg.ID)
		require.NoError(t, err)
		ids, err := seg.QueryCustomers().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[customer.Table]}, ids)

		segs, err := c.Segment.Query().WithCustomers().All(asA)
		require.NoError(t, err)
		for _, s := range segs {
			for _, cu := range s.Edges.Customers {
				require.NotEqual(t, b[customer.Table], cu.ID, "B's customer loaded through segment %s", s.ID)
			}
		}

		// A's own segment reaches only A's customer.
		ids, err = c.Segment.Query().Where(segment.ID(a[segment.Table])).QueryCustomers().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[customer.Table]}, ids)
		// B's segment is not reachable at all, nor its members.
		ids, err = c.Segment.Query().Where(segment.ID(b[segment.Table])).QueryCustomers().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		// Nor B's segment from A's campaign pointed at it by the system.
		require.NoError(t, c.Campaign.UpdateOneID(a[campaign.Table]).SetSegmentID(b[segment.Table]).Exec(sys))
		cm, err := c.Campaign.Get(asA, a[campaign.Table])
		require.NoError(t, err)
		_, err = cm.QuerySegment().Only(asA)
		requireHidden(t, err)
		// Nor an entry of B's ledger naming A's customer, planted by the
		// system, from A's customer.
		planted, err := c.PointsEntry.Create().SetTenantID(f.b.tenant).SetCustomerID(a[customer.Table]).
			SetKind(pointsentry.KindCredit).SetPoints(10).SetBalanceAfter(10).
			SetSourceKind(pointsentry.SourceKindOrder).SetSourceID(unique()).Save(sys)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a[pointsentry.Table], planted.ID}, entriesOf(t, a[customer.Table]))
		ids, err = c.Customer.Query().Where(customer.ID(a[customer.Table])).QueryPointsEntries().Where(ordersOnly).IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[pointsentry.Table]}, ids)
		// Nor a redemption of B naming A's customer, planted by the system,
		// from A's customer, by traversal or eager loading.
		bToken, err := tokenFor(sys, c, b[customer.Table])
		require.NoError(t, err)
		plantedRed, err := newRedemption(c, b[campaign.Table], a[customer.Table], bToken, "planted").
			SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a[redemption.Table], plantedRed.ID}, redemptionsWhere(t, redemption.CustomerID(a[customer.Table])))
		ids, err = c.Customer.Query().Where(customer.ID(a[customer.Table])).QueryRedemptions().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[redemption.Table]}, ids)
		cu, err := c.Customer.Query().Where(customer.ID(a[customer.Table])).WithRedemptions().Only(asA)
		require.NoError(t, err)
		require.Len(t, cu.Edges.Redemptions, 1)
		require.Equal(t, a[redemption.Table], cu.Edges.Redemptions[0].ID)
		// Nor B's tenant from A's rows.
		tn, err := c.Customer.Query().Where(customer.ID(a[customer.Table])).QueryTenant().Only(asA)
		require.NoError(t, err)
		require.Equal(t, f.a.tenant, tn.ID)
	})
	t.Run("sale_traversal_filters_other_tenant", func(t *testing.T) {
		// Plant, as the system, an item and a payment of B naming A's sale,
		// so the traversals are what must hide B's rows.
		bItem, err := newSaleItem(c, a[sale.Table]).SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		bPayment, err := newSalePayment(c, a[sale.Table]).SetTenantID(f.b.tenant).Save(sys)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a[saleitem.Table], bItem.ID}, saleItemsWhere(t, saleitem.SaleID(a[sale.Table])))
		require.ElementsMatch(t, []string{a[salepayment.Table], bPayment.ID}, salePaymentsWhere(t, salepayment.SaleID(a[sale.Table])))

		// A's sale reaches only A's item and payment, by traversal…
		ids, err := c.Sale.Query().Where(sale.ID(a[sale.Table])).QueryItems().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[saleitem.Table]}, ids)
		ids, err = c.Sale.Query().Where(sale.ID(a[sale.Table])).QueryPayments().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[salepayment.Table]}, ids)
		sa, err := c.Sale.Get(asA, a[sale.Table])
		require.NoError(t, err)
		ids, err = sa.QueryItems().IDs(asA)
		require.NoError(t, err)
		require.Equal(t, []string{a[saleitem.Table]}, ids)
		// …and by eager loading.
		sales, err := c.Sale.Query().WithItems().WithPayments().All(asA)
		require.NoError(t, err)
		for _, s := range sales {
			for _, it := range s.Edges.Items {
				require.NotEqual(t, bItem.ID, it.ID, "B's item loaded through sale %s", s.ID)
				require.NotEqual(t, b[saleitem.Table], it.ID, "B's item loaded through sale %s", s.ID)
			}
			for _, p := range s.Edges.Payments {
				require.NotEqual(t, bPayment.ID, p.ID, "B's payment loaded through sale %s", s.ID)
				require.NotEqual(t, b[salepayment.Table], p.ID, "B's payment loaded through sale %s", s.ID)
			}
		}
		sa, err = c.Sale.Query().Where(sale.ID(a[sale.Table])).WithItems().WithPayments().Only(asA)
		require.NoError(t, err)
		require.Len(t, sa.Edges.Items, 1)
		require.Equal(t, a[saleitem.Table], sa.Edges.Items[0].ID)
		require.Len(t, sa.Edges.Payments, 1)
		require.Equal(t, a[salepayment.Table], sa.Edges.Payments[0].ID)
		// From the planted rows' side: A does not see them at all.
		ids, err = c.SaleItem.Query().Where(saleitem.ID(bItem.ID)).IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)

		// B's sale is not reachable at all, nor its lines.
		ids, err = c.Sale.Query().Where(sale.ID(b[sale.Table])).QueryItems().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		ids, err = c.Sale.Query().Where(sale.ID(b[sale.Table])).QueryPayments().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		ids, err = c.SaleItem.Query().Where(saleitem.ID(b[saleitem.Table])).QuerySale().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)

		// Nor B's sale from an item, a payment or a redemption of A naming
		// it, planted by the system.
		aItem, err := newSaleItem(c, b[sale.Table]).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		it, err := c.SaleItem.Get(asA, aItem.ID)
		require.NoError(t, err)
		_, err = it.QuerySale().Only(asA)
		requireHidden(t, err)
		it, err = c.SaleItem.Query().Where(saleitem.ID(aItem.ID)).WithSale().Only(asA)
		require.NoError(t, err)
		require.Nil(t, it.Edges.Sale, "B's sale loaded through A's item")
		aPayment, err := newSalePayment(c, b[sale.Table]).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		ids, err = c.SalePayment.Query().Where(salepayment.ID(aPayment.ID)).QuerySale().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		tk, err := tokenFor(sys, c, a[customer.Table])
		require.NoError(t, err)
		aRed, err := newRedemption(c, a[campaign.Table], a[customer.Table], tk, "planted in B's sale").
			SetSaleID(b[sale.Table]).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		ids, err = c.Redemption.Query().Where(redemption.ID(aRed.ID)).QuerySale().IDs(asA)
		require.NoError(t, err)
		require.Empty(t, ids)
		red, err := c.Redemption.Query().Where(redemption.ID(aRed.ID)).WithSale().Only(asA)
		require.NoError(t, err)
		require.Nil(t, red.Edges.Sale, "B's sale loaded through A's redemption")

		// Nor B's store or customer from a sale of A naming them, planted by
		// the system.
		aSale, err := newSale(c, b[store.Table]).SetCustomerID(b[customer.Table]).SetTenantID(f.a.tenant).Save(sys)
		require.NoError(t, err)
		_, err = c.Sale.Query().Where(sale.ID(aSale.ID)).QueryStore().Only(asA)
		requireHidden(t, err)
		_, err = c.Sale.Query().Where(sale.ID(aSale.ID)).QueryCustomer().Only(asA)
		requireHidden(t, err)
		s, err := c.Sale.Query().Where(sale.ID(aSale.ID)).WithStore().WithCustomer().Only(asA)
		require.NoError(t, err)
		require.Nil(t, s.Edges.Store, "B's store loaded through A's sale")
		require.Nil(t, s.Edges.Customer, "B's customer loaded through A's sale")
	})
}
