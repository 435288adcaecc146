package schema_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	entschema "entgo.io/ent/dialect/sql/schema"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/churnmodel"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/ent/coupon"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/customerimportchunk"
	"github.com/fideliza/fideliza/ent/customerimportproblem"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/migrate"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/ent/product"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/ent/webhookdelivery"
	"github.com/fideliza/fideliza/ent/webhookendpoint"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
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
	return c.ValidationToken.Create().SetTokenHash("hash-" + unique()).SetCustomerID(customerID).
		SetCart([]byte(`{"items":[]}`)).SetBenefits([]byte(`{}`)).SetCampaignIds([]string{}).
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

// kinds lists every tenant-owned entity. TestTenantIsolationCoverage fails
// when a table with a tenant_id column is missing here.
func kinds() []kind {
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
				if _, err := c.PointsEntry.Delete().Where(pointsentry.TenantID(v.TenantID)).Exec(sys); err != nil {
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
		{
			// After stores and customers: a sale is made at a store of its
			// tenant and credited to a customer of it. The name is the
			// failure reason, a mutable string.
			table: sale.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				st, err := storeOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSale(c, st).SetCustomerID(cu).SetFailureReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Sale.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Sale.Get(ctx, id)
				if err != nil || r.FailureReason == nil {
					return "", err
				}
				return *r.FailureReason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Sale.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Sale.UpdateOneID(id).SetFailureReason(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Sale.Update().SetFailureReason(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Sale.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				// The sales' items and payments refer to them (no cascade).
				v, _ := viewer.FromContext(ctx)
				if err := deleteSaleLinesOf(ctx, c, v.TenantID); err != nil {
					return 0, err
				}
				return c.Sale.Delete().Exec(ctx)
			},
		},
		{
			// After sales: an item is a line of a sale of its tenant. The
			// name is the description, an immutable field.
			table:     saleitem.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				sa, err := saleOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSaleItem(c, sa).SetDescription(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.SaleItem.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleItem.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Description, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleItem.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.SaleItem.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.SaleItem.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.SaleItem.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.SaleItem.Delete().Exec(ctx) },
		},
		{
			// After sales: a payment is of a sale of its tenant. The name is
			// the NSU, an immutable field.
			table:     salepayment.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				sa, err := saleOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSalePayment(c, sa).SetNsu(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.SalePayment.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SalePayment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Nsu, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SalePayment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.SalePayment.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.SalePayment.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.SalePayment.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.SalePayment.Delete().Exec(ctx) },
		},
		{
			// A model's name is its customers count, an immutable field.
			table:     churnmodel.Table,
			immutable: true,
			notNode:   true,
			value:     func() string { return strconv.FormatInt(seq.Add(1), 10) },
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				n, err := strconv.Atoi(name)
				if err != nil {
					return "", err
				}
				m := c.ChurnModel.Create().SetFittedAt(time.Now().UTC()).SetCustomers(n).SetR(0.2).SetAlpha(4).SetA(0.8).SetB(2.4).
					SetLogLikelihood(-1)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.ChurnModel.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ChurnModel.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.Customers), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ChurnModel.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.ChurnModel.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.ChurnModel.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.ChurnModel.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.ChurnModel.Delete().Exec(ctx) },
		},
		{
			// The name is the error, a mutable field.
			table:   customerimport.Table,
			notNode: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.CustomerImport.Create().SetFormat(customerimport.FormatCsv).SetError(name)
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
				return c.CustomerImport.Query().Where(notImportHolder).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImport.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Error, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImport.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.CustomerImport.UpdateOneID(id).SetError(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.CustomerImport.Update().Where(notImportHolder).SetError(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImport.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.CustomerImport.Delete().Where(notImportHolder).Exec(ctx)
			},
		},
		{
			// The name is the chunk's data, an immutable field.
			table:     customerimportchunk.Table,
			immutable: true,
			notNode:   true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				imp, err := importOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.CustomerImportChunk.Create().SetImportID(imp).SetSeq(0).SetData([]byte(name))
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.ID), nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				ids, err := c.CustomerImportChunk.Query().IDs(ctx)
				return itoas(ids), err
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportChunk.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return string(r.Data), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportChunk.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.CustomerImportChunk.UpdateOneID(atoi(id)).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.CustomerImportChunk.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImportChunk.DeleteOneID(atoi(id)).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.CustomerImportChunk.Delete().Exec(ctx) },
		},
		{
			// The name is the message, an immutable field.
			table:     customerimportproblem.Table,
			immutable: true,
			notNode:   true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				imp, err := importOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.CustomerImportProblem.Create().SetImportID(imp).SetLine(2).SetMessage(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.ID), nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				ids, err := c.CustomerImportProblem.Query().IDs(ctx)
				return itoas(ids), err
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportProblem.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.Message, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportProblem.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.CustomerImportProblem.UpdateOneID(atoi(id)).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.CustomerImportProblem.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImportProblem.DeleteOneID(atoi(id)).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.CustomerImportProblem.Delete().Exec(ctx)
			},
		},
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

// testLinks checks that edges never join rows of two tenants.
func testLinks(t *testing.T, c *ent.Client) {
	f := newFixture(t, c)
	sys, asA := sysCtx(t), viewerCtx(t, viewer.RoleAdmin, f.a.tenant)
	a, b := f.a.ids, f.b.ids

	segmentsOf := func(t *testing.T, customerID string) []string {
		ids, err := c.Customer.Query().Where(customer.ID(customerID)).QuerySegments().IDs(sys)
		require.NoError(t, err)
		return ids
	}
	customersOf := func(t *testing.T, segmentID string) []string {
		ids, err := c.Segment.Query().Where(segment.ID(segmentID)).QueryCustomers().IDs(sys)
		require.NoError(t, err)
		return ids
	}
	entriesOf := func(t *testing.T, customerID string) []string {
		ids, err := c.PointsEntry.Query().Where(pointsentry.CustomerID(customerID), ordersOnly).IDs(sys)
		require.NoError(t, err)
		return ids
	}

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
	redemptionsWhere := func(t *testing.T, ps ...predicate.Redemption) []string {
		ids, err := c.Redemption.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
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
	salesWhere := func(t *testing.T, ps ...predicate.Sale) []string {
		ids, err := c.Sale.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	saleItemsWhere := func(t *testing.T, ps ...predicate.SaleItem) []string {
		ids, err := c.SaleItem.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	salePaymentsWhere := func(t *testing.T, ps ...predicate.SalePayment) []string {
		ids, err := c.SalePayment.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
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
	deliveriesWhere := func(t *testing.T, ps ...predicate.WebhookDelivery) []string {
		ids, err := c.WebhookDelivery.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
	attemptsWhere := func(t *testing.T, ps ...predicate.WebhookAttempt) []string {
		ids, err := c.WebhookAttempt.Query().Where(ps...).IDs(sys)
		require.NoError(t, err)
		return ids
	}
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
