// Package pid makes the opaque, prefixed identifiers of Fideliza's resources
// ("cus_01jd…", "cmp_01jd…"). The part after the prefix is a lowercase ULID:
// 128 bits, of which 80 are random, sortable by creation time. Sorting by id is
// therefore sorting by creation, which keyset pagination relies on.
package pid

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Prefixes of every resource kind. The prefix also tells which table an id
// belongs to (see ent's node resolver).
const (
	Customer       = "cus"
	Campaign       = "cmp"
	Redemption     = "red"
	PointsTx       = "ptx"
	Sale           = "sal"
	Segment        = "seg"
	Webhook        = "whk"
	Store          = "sto"
	Client         = "cli"
	SigningKey     = "key"
	PointsLot      = "lot"
	Event          = "evt"
	Validation     = "val"
	IdemKey        = "idk"
	SaleItem       = "sli"
	SalePayment    = "pay"
	Delivery       = "dlv"
	Attempt        = "att"
	SaleReturn     = "ret"
	ChurnModel     = "chm"
	CustomerScore  = "csc"
	CustomerImport = "imp"
	Product        = "prd"
	Coupon         = "cpn"
	ConsentChange  = "cns"
	Audit          = "aud"
	PointsHold     = "phd"
	Wallet         = "wal"
	WalletTx       = "wtx"
	WalletLot      = "wlt"
	WalletHold     = "whd"
	GiftCard       = "gcd"
	GiftCardTx     = "gce"
	GiftCardBatch  = "gcb"
)

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
)

// New returns a new identifier with the given prefix.
func New(prefix string) string {
	mu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), entropy)
	mu.Unlock()
	return prefix + "_" + strings.ToLower(id.String())
}

// Generator returns a function that makes identifiers with the given prefix,
// the shape ent's DefaultFunc expects.
func Generator(prefix string) func() string {
	return func() string { return New(prefix) }
}

// Prefix returns the prefix of id, or "" when id has none.
func Prefix(id string) string {
	p, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return p
}

// tables maps each prefix to the table of its entity. Tenant ids are UUIDs
// and have no prefix.
var tables = map[string]string{
	Customer:      "customers",
	Campaign:      "campaigns",
	Segment:       "segments",
	Store:         "stores",
	Client:        "api_clients",
	PointsTx:      "points_entries",
	Event:         "events",
	Redemption:    "redemptions",
	Sale:          "sales",
	SaleItem:      "sale_items",
	SalePayment:   "sale_payments",
	Webhook:       "webhook_endpoints",
	Delivery:      "webhook_deliveries",
	Attempt:       "webhook_attempts",
	SaleReturn:    "sale_returns",
	CustomerScore: "customer_scores",
	Product:       "products",
	Coupon:        "coupons",
	ConsentChange: "consent_changes",
	Audit:         "audit_events",
	WalletTx:      "wallet_entries",
	GiftCard:      "gift_cards",
	GiftCardTx:    "gift_card_entries",
}

// NodeType resolves the table of an id, the shape ent's Noder expects.
func NodeType(_ context.Context, id string) (string, error) {
	if t, ok := tables[Prefix(id)]; ok {
		return t, nil
	}
	if _, err := uuid.Parse(id); err == nil && len(id) == 36 {
		return "tenants", nil
	}
	return "", fmt.Errorf("unknown id %q", id)
}
