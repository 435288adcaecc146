package schema_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/viewer"
)

var seq atomic.Int64

// unique returns a string unique in the test binary, digits only, so it fits
// store codes and customer documents (CPF: 11 digits).
func unique() string { return fmt.Sprintf("%011d", seq.Add(1)) }

// lotPoints is the size of every test lot: room for any remaining count
// uniqueRemaining makes.
const lotPoints = 1 << 40

// uniqueRemaining is a name of a points lot: its remaining points.
func uniqueRemaining() string { return strconv.FormatInt(seq.Add(1), 10) }

// uniquePublishedAt is a name of an event: its publication time, to the
// second, in UTC.
func uniquePublishedAt() string {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(seq.Add(1)) * time.Second).Format(time.RFC3339)
}

// customerOf returns a customer of the tenant a row created with ctx and
// tenantID belongs to: tenantID, else the viewer's. It looks as the system:
// finding the customer is the fixture's business, the create is what is
// tested (in another tenant too).
func customerOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	if tenantID == "" {
		v, _ := viewer.FromContext(ctx)
		tenantID = v.TenantID
	}
	return c.Customer.Query().Where(customer.TenantID(tenantID)).FirstID(viewer.SystemContext(ctx))
}

// entryFor makes, as the service, a fresh credit entry of the customer for
// a lot to refer to (a lot's entry is unique), in the customer's tenant.
// Its source is a sale, which the points_entries kind leaves out of its
// lists (ordersOnly), so lots do not add rows to that kind.
func entryFor(ctx context.Context, c *ent.Client, customerID string) (string, error) {
	sys := viewer.SystemContext(ctx)
	cu, err := c.Customer.Get(sys, customerID)
	if err != nil {
		return "", err
	}
	src := unique()
	e, err := c.PointsEntry.Create().SetTenantID(cu.TenantID).SetCustomerID(cu.ID).
		SetKind(pointsentry.KindCredit).SetPoints(1).SetBalanceAfter(1).
		SetSourceKind(pointsentry.SourceKindSale).SetSourceID(src).
		Save(sys)
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// ordersOnly leaves out the entries entryFor makes for lots.
var ordersOnly = pointsentry.SourceKindEQ(pointsentry.SourceKindOrder)

// campaignOf returns a campaign of the tenant a row created with ctx and
// tenantID belongs to, looking as the system (see customerOf).
func campaignOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	if tenantID == "" {
		v, _ := viewer.FromContext(ctx)
		tenantID = v.TenantID
	}
	return c.Campaign.Query().Where(campaign.TenantID(tenantID)).FirstID(viewer.SystemContext(ctx))
}

// redemptionChannel is the channel of the validation tokens tokenFor makes.
const redemptionChannel = "test-redemption"

// tokenFor makes, as the service, a fresh validation token of the customer
// for a redemption to refer to (a token gives a campaign's benefit once), in
// the customer's tenant. Its channel is redemptionChannel, which the
// validation_tokens kind leaves out of its lists and bulk operations
// (notForRedemptions), so redemptions do not add rows to that kind.
func tokenFor(ctx context.Context, c *ent.Client, customerID string) (string, error) {
	sys := viewer.SystemContext(ctx)
	cu, err := c.Customer.Get(sys, customerID)
	if err != nil {
		return "", err
	}
	tk, err := newValidationToken(c, cu.ID).SetTenantID(cu.TenantID).SetChannel(redemptionChannel).Save(sys)
	if err != nil {
		return "", err
	}
	return tk.ID, nil
}

// notForRedemptions leaves out the tokens tokenFor makes for redemptions.
var notForRedemptions = validationtoken.ChannelNEQ(redemptionChannel)

// newValidationToken starts a token of the customer, valid five minutes.
func newValidationToken(c *ent.Client, customerID string) *ent.ValidationTokenCreate {
	return c.ValidationToken.Create().SetCustomerID(customerID).
		SetExpiresAt(time.Now().UTC().Add(5 * time.Minute))
}

// newRedemption starts a redemption of the order.
func newRedemption(c *ent.Client, campaignID, customerID, tokenID, orderID string) *ent.RedemptionCreate {
	return c.Redemption.Create().SetCampaignID(campaignID).SetCustomerID(customerID).
		SetValidationTokenID(tokenID).SetOrderID(orderID).
		SetAmountPaid(decimal.NewFromInt(100)).SetDiscountAmount(decimal.NewFromInt(10)).
		SetCashbackAmount(decimal.Zero).SetBenefit([]byte(`{"type":"discount"}`))
}

// storeOf returns a store of the tenant a row created with ctx and tenantID
// belongs to, looking as the system (see customerOf).
func storeOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	if tenantID == "" {
		v, _ := viewer.FromContext(ctx)
		tenantID = v.TenantID
	}
	return c.Store.Query().Where(store.TenantID(tenantID)).FirstID(viewer.SystemContext(ctx))
}

// saleOf returns a sale of the tenant a row created with ctx and tenantID
// belongs to, looking as the system (see customerOf).
func saleOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	if tenantID == "" {
		v, _ := viewer.FromContext(ctx)
		tenantID = v.TenantID
	}
	return c.Sale.Query().Where(sale.TenantID(tenantID)).FirstID(viewer.SystemContext(ctx))
}

// newSale starts a sale at the store, with a fresh receipt number (a store's
// receipt is one sale).
func newSale(c *ent.Client, storeID string) *ent.SaleCreate {
	return c.Sale.Create().SetStoreID(storeID).SetExternalID(unique()).
		SetSoldAt(time.Now().UTC().Truncate(time.Second)).SetAmount(decimal.NewFromInt(100)).
		SetAmountPayable(decimal.NewFromInt(90)).SetDiscountAmount(decimal.NewFromInt(10))
}

// newSaleItem starts a line of the sale.
func newSaleItem(c *ent.Client, saleID string) *ent.SaleItemCreate {
	return c.SaleItem.Create().SetSaleID(saleID).SetLineID("1").SetGtin("7891000100103").
		SetUnitPrice(decimal.NewFromInt(100)).SetQuantity(decimal.NewFromInt(1)).SetDiscountAmount(decimal.NewFromInt(10))
}

// newSalePayment starts a payment of the sale.
func newSalePayment(c *ent.Client, saleID string) *ent.SalePaymentCreate {
	return c.SalePayment.Create().SetSaleID(saleID).SetPaymentID(unique()).
		SetAmount(decimal.NewFromInt(90)).SetMethod("credit_card")
}

func newSaleReturn(c *ent.Client, saleID string) *ent.SaleReturnCreate {
	return c.SaleReturn.Create().SetSaleID(saleID).SetExternalID(unique()).SetKind("return").
		SetReturnedAt(time.Now().UTC()).SetLines([]byte(`[]`)).SetAmount(decimal.NewFromInt(10))
}

// deleteSaleLinesOf deletes, as the service, the tenant's sale items,
// payments and returns, which refer to its sales (no cascade).
func deleteSaleLinesOf(ctx context.Context, c *ent.Client, tenantID string) error {
	sys := viewer.SystemContext(ctx)
	if _, err := c.SaleItem.Delete().Where(saleitem.TenantID(tenantID)).Exec(sys); err != nil {
		return err
	}
	if _, err := c.SaleReturn.Delete().Where(salereturn.TenantID(tenantID)).Exec(sys); err != nil {
		return err
	}
	_, err := c.SalePayment.Delete().Where(salepayment.TenantID(tenantID)).Exec(sys)
	return err
}

// deleteSalesOf deletes, as the service, the tenant's sales, which refer to
// its stores (no cascade), and their items and payments.
func deleteSalesOf(ctx context.Context, c *ent.Client, tenantID string) error {
	if err := deleteSaleLinesOf(ctx, c, tenantID); err != nil {
		return err
	}
	_, err := c.Sale.Delete().Where(sale.TenantID(tenantID)).Exec(viewer.SystemContext(ctx))
	return err
}

// tenantOr returns tenantID, else the tenant of the viewer of ctx: the tenant
// a row created with ctx and tenantID belongs to.
func tenantOr(ctx context.Context, tenantID string) string {
	if tenantID == "" {
		v, _ := viewer.FromContext(ctx)
		tenantID = v.TenantID
	}
	return tenantID
}

// importHolder requests the imports the chunks and problems kinds belong
// to, which the imports kind leaves out of its lists and bulk operations
// (notImportHolder).
const importHolder = "holder"

var notImportHolder = customerimport.RequestedByNEQ(importHolder)

// importOf creates an import of tenantID (the viewer's when empty) for the
// chunks and problems kinds to belong to.
func importOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	imp, err := c.CustomerImport.Create().SetTenantID(tenantOr(ctx, tenantID)).SetFormat(customerimport.FormatCsv).
		SetRequestedBy(importHolder).Save(viewer.SystemContext(ctx))
	if err != nil {
		return "", err
	}
	return imp.ID, nil
}

// itoas writes the integer ids of a kind as the test's string ids.
func itoas(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

// atoi reads a string id of an integer-keyed kind; a malformed one is -1,
// which no row has.
func atoi(id string) int {
	n, err := strconv.Atoi(id)
	if err != nil {
		return -1
	}
	return n
}

// scoreHolderName names the customers the scores kind makes (one per
// score), which the customers kind leaves out of its lists and bulk
// operations (notScoreHolder).
const scoreHolderName = "score holder"

var notScoreHolder = customer.NameNEQ(scoreHolderName)

// deliveredEventType is the type of the events eventFor makes for
// deliveries, which the events kind leaves out of its lists and bulk
// operations (notForDeliveries), so deliveries do not add rows to that kind.
const deliveredEventType = "test.delivered"

// notForDeliveries leaves out the events eventFor makes for deliveries.
var notForDeliveries = event.TypeNEQ(deliveredEventType)

// eventFor makes, as the service, a fresh event of the tenant a row created
// with ctx and tenantID belongs to, for a delivery to refer to (an event
// reaches an endpoint through one delivery).
func eventFor(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	e, err := c.Event.Create().SetTenantID(tenantOr(ctx, tenantID)).SetType(deliveredEventType).
		SetSubjectID(unique()).SetData(map[string]any{"n": 1}).Save(viewer.SystemContext(ctx))
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// endpointOf returns a webhook endpoint of the tenant a row created with ctx
// and tenantID belongs to, looking as the system (see customerOf).
func endpointOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	return c.WebhookEndpoint.Query().Where(webhookendpoint.TenantID(tenantOr(ctx, tenantID))).
		FirstID(viewer.SystemContext(ctx))
}

// deliveryOf returns a webhook delivery of the tenant a row created with ctx
// and tenantID belongs to, looking as the system (see customerOf).
func deliveryOf(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	return c.WebhookDelivery.Query().Where(webhookdelivery.TenantID(tenantOr(ctx, tenantID))).
		FirstID(viewer.SystemContext(ctx))
}

// newWebhookEndpoint starts an endpoint receiving sales.
func newWebhookEndpoint(c *ent.Client) *ent.WebhookEndpointCreate {
	return c.WebhookEndpoint.Create().SetURL("https://hooks.example.com/" + unique()).
		SetEventTypes([]string{"sale.processed"}).SetSecret("whsec_" + unique())
}

// newWebhookDelivery starts a delivery of the event to the endpoint.
func newWebhookDelivery(c *ent.Client, endpointID, eventID string) *ent.WebhookDeliveryCreate {
	return c.WebhookDelivery.Create().SetEndpointID(endpointID).SetEventID(eventID).SetEventType(deliveredEventType)
}

// newWebhookAttempt starts an attempt of the delivery.
func newWebhookAttempt(c *ent.Client, deliveryID string) *ent.WebhookAttemptCreate {
	return c.WebhookAttempt.Create().SetDeliveryID(deliveryID).SetStatusCode(500).SetLatencyMs(12)
}
