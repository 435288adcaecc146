// Package outbox records events in the transaction of the change they
// report; the webhooks worker delivers them afterwards. A rolled-back change
// leaves no event, and a committed one always has its event.
package outbox

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/ent"
)

// Event types.
const (
	CustomerLevelChanged = "customer.level_changed"
	// CustomerLevelWillDowngrade announces a level's drop at the end of the
	// tenant's downgrade grace.
	CustomerLevelWillDowngrade = "customer.level_will_downgrade"
	PointsExpiring             = "points.expiring"
	CampaignActivated          = "campaign.activated"
	SaleProcessed              = "sale.processed"
	SaleReturned               = "sale.returned"
	SaleCancelled              = "sale.cancelled"
	PointsReversed             = "points.reversed"
	RedemptionRolledBack       = "redemption.rolled_back"
	// PointsSpent says points paid as money at the till or at checkout
	// were debited.
	PointsSpent = "points.spent"
	// CustomerErased says a customer's personal data was erased (LGPD); its
	// data holds the id only.
	CustomerErased = "customer.erased"
	// CustomerConsentChanged says a customer granted or withdrew a consent.
	CustomerConsentChanged = "customer.consent_changed"
	// CashbackCredited says R$ were credited to a customer's cashback
	// wallet (a cashback campaign of a programme that keeps cashback in R$).
	CashbackCredited = "cashback.credited"
	// CashbackExpiring announces a cashback lot's expiry, as points.expiring.
	CashbackExpiring = "cashback.expiring"
	// CashbackSpent says R$ of the cashback wallet paid a sale or an order:
	// a hold was debited.
	CashbackSpent = "cashback.spent"
	// CashbackRefunded says R$ a payment spent came back to the cashback
	// wallet (its order rolled back).
	CashbackRefunded = "cashback.refunded"
	// Gift cards: issued active (one event a batch), activated (an
	// inactive card's sale processed), loaded, spent (redeemed) and
	// refunded, their balance moved to another card (transferred),
	// withdrawn (cancelled), and their expiry announced (expiring) and done
	// (expired).
	GiftCardIssued      = "gift_card.issued"
	GiftCardActivated   = "gift_card.activated"
	GiftCardLoaded      = "gift_card.loaded"
	GiftCardRedeemed    = "gift_card.redeemed"
	GiftCardRefunded    = "gift_card.refunded"
	GiftCardTransferred = "gift_card.transferred"
	GiftCardCancelled   = "gift_card.cancelled"
	GiftCardExpiring    = "gift_card.expiring"
	GiftCardExpired     = "gift_card.expired"
)

// Event types of the live feed only (GraphQL subscriptions), which webhook
// endpoints do not receive.
const (
	// RedemptionCreated says a campaign was redeemed (at validation, or by
	// a sale's discount).
	RedemptionCreated = "redemption.created"
	// CustomerImportProgressed says a customer import committed a batch,
	// or ended; its data holds the import's status and counts.
	CustomerImportProgressed = "customer_import.progressed"
)

// LiveTypes lists the event types of the live feed only.
var LiveTypes = []string{RedemptionCreated, CustomerImportProgressed}

// Types lists every event type, the ones webhook endpoints subscribe to.
var Types = []string{CustomerLevelChanged, CustomerLevelWillDowngrade, PointsExpiring, CampaignActivated, SaleProcessed,
	SaleReturned, SaleCancelled, PointsReversed, RedemptionRolledBack, CustomerErased, CustomerConsentChanged, PointsSpent,
	CashbackCredited, CashbackExpiring, CashbackSpent, CashbackRefunded, GiftCardIssued, GiftCardActivated, GiftCardLoaded,
	GiftCardRedeemed, GiftCardRefunded, GiftCardTransferred, GiftCardCancelled, GiftCardExpiring, GiftCardExpired}

// Record writes an event of tenantID through c, the transaction's client.
func Record(ctx context.Context, c *ent.Client, at time.Time, tenantID, typ, subjectID string, data map[string]any) error {
	return New(c, at, tenantID, typ, subjectID, data).Exec(ctx)
}

// New builds an event of tenantID for a bulk insert through c, the
// transaction's client.
func New(c *ent.Client, at time.Time, tenantID, typ, subjectID string, data map[string]any) *ent.EventCreate {
	return c.Event.Create().SetTenantID(tenantID).SetType(typ).SetSubjectID(subjectID).SetData(data).SetCreatedAt(at)
}
