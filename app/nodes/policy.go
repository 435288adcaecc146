package nodes

import (
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/app/webhooks"
)

// Rules says who may call each operation of the nodes context: any viewer,
// and then the rule of each node's type.
var Rules = kernel.NamedRules(struct {
	Node, Nodes kernel.Rule
}{
	Node:  kernel.Scope(""), // then TypeRules
	Nodes: kernel.Scope(""), // then TypeRules
})

// TypeRules gives every entity type (by its ent name, GraphQL's too) the
// rule of reading one: the rule of the operation listing that type, or of
// the one reading what it belongs to. A node of a type missing here is an
// operator's only (kernel.ScopeBackofficeWrite). The GraphQL transport
// requires the same scopes of the edges leading to each type
// (graph.TypeScopes).
var TypeRules = map[string]kernel.Rule{
	"Tenant":        backoffice.Rules.TenantConnection, // a viewer sees its own tenant
	"Customer":      customers.Rules.CustomerConnection,
	"Segment":       customers.Rules.SegmentConnection,
	"ConsentChange": customers.Rules.Customer,
	"PointsEntry":   loyalty.Rules.PointsEntryConnection,
	"WalletEntry":   wallets.Rules.Entries,
	"GiftCard":      giftcards.Rules.GiftCardConnection,
	"GiftCardEntry": giftcards.Rules.GiftCardEntries,
	"Campaign":      campaigns.Rules.CampaignConnection,
	"Product":       campaigns.Rules.ProductConnection,
	"Coupon":        campaigns.Rules.ListCoupons,
	"Redemption":    checkout.Rules.RedemptionConnection,
	"Store":         backoffice.Rules.StoreConnection,
	"AuditEvent":    backoffice.Rules.AuditEventConnection,
	"APIClient":     backoffice.Rules.APIClientConnection,
	"Sale":          pos.Rules.SaleConnection,
	"SaleItem":      pos.Rules.SaleConnection,
	"SalePayment":   pos.Rules.SaleConnection,
	"SaleReturn":    pos.Rules.SaleConnection,
	"CustomerScore": scoring.Rules.CustomerChurn,
	"Event":         webhooks.Rules.EventConnection,

	"WebhookEndpoint": webhooks.Rules.WebhookEndpointConnection,
	"WebhookDelivery": webhooks.Rules.WebhookDeliveryConnection,
	"WebhookAttempt":  webhooks.Rules.WebhookDeliveryConnection,
}
