package schema_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// cardHolderNote marks the cards giftCardFor makes for entries to refer
// to; the gift cards' kind leaves them out of its lists.
const cardHolderNote = "entry holder"

// newGiftCard is a card of tenantID ("": the viewer's, set by the policy)
// holding balance cents, with a fresh code hash.
func newGiftCard(c *ent.Client, tenantID string, balance int64, note string) *ent.GiftCardCreate {
	m := c.GiftCard.Create().SetCodeHash("hash-" + unique()).SetCodeLast4("AB12").SetStatus(entgiftcard.StatusActive).
		SetInitialCents(lotPoints).SetBalanceCents(balance).SetExpiresAt(time.Now().UTC().Add(365 * 24 * time.Hour)).SetNote(note)
	if tenantID != "" {
		m.SetTenantID(tenantID)
	}
	return m
}

// giftCardKinds are the kinds of the gift cards: the cards and their
// entries.
func giftCardKinds() []kind {
	return []kind{
		{
			// The name is the balance; cards are cancelled, never deleted
			// (ledger).
			table:  entgiftcard.Table,
			ledger: true,
			value:  uniqueRemaining,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return "", err
				}
				r, err := newGiftCard(c, tenantID, balance, "").Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				return c.GiftCard.Query().Where(entgiftcard.NoteNEQ(cardHolderNote)).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.GiftCard.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.FormatInt(r.BalanceCents, 10), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.GiftCard.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return err
				}
				return c.GiftCard.UpdateOneID(id).SetBalanceCents(balance).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				balance, err := strconv.ParseInt(name, 10, 64)
				if err != nil {
					return 0, err
				}
				return c.GiftCard.Update().Where(entgiftcard.NoteNEQ(cardHolderNote)).SetBalanceCents(balance).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.GiftCard.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.GiftCard.Delete().Exec(ctx) },
		},
		{
			// The name is the entry's reason.
			table:      giftcardentry.Table,
			appendOnly: true,
			ledger:     true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				card, err := giftCardFor(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.GiftCardEntry.Create().SetGiftCardID(card).SetKind(giftcardentry.KindLoad).SetAmountCents(10).
					SetBalanceAfterCents(10).SetSourceKind(giftcardentry.SourceKindLoad).SetSourceID(unique()).SetReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.GiftCardEntry.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.GiftCardEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Reason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.GiftCardEntry.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.GiftCardEntry.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.GiftCardEntry.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.GiftCardEntry.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.GiftCardEntry.Delete().Exec(ctx) },
		},
	}
}

// giftCardFor makes, as the service, a fresh card for an entry to refer to,
// in the tenant a row created with ctx and tenantID belongs to (see
// cardHolderNote).
func giftCardFor(ctx context.Context, c *ent.Client, tenantID string) (string, error) {
	card, err := newGiftCard(c, tenantOr(ctx, tenantID), 1, cardHolderNote).Save(viewer.SystemContext(ctx))
	if err != nil {
		return "", err
	}
	return card.ID, nil
}

// TestGiftCardLinks: a tenant's principal can neither bind its card to
// another tenant's customer nor write an entry on another tenant's card.
func TestGiftCardLinks(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		c := db.Ent
		f := newFixture(t, c)
		asA := viewerCtx(t, viewer.RoleAdmin, f.a.tenant)
		requireDenied(t, c.GiftCard.UpdateOneID(f.a.ids[entgiftcard.Table]).SetCustomerID(f.b.ids["customers"]).Exec(asA),
			"A's card bound to B's customer")
		require.NoError(t, c.GiftCard.UpdateOneID(f.a.ids[entgiftcard.Table]).SetCustomerID(f.a.ids["customers"]).Exec(asA))
		_, err := newGiftCard(c, "", 1, "").SetCustomerID(f.b.ids["customers"]).Save(asA)
		requireDenied(t, err, "a card of A issued bound to B's customer")
		_, err = c.GiftCardEntry.Create().SetGiftCardID(f.b.ids[entgiftcard.Table]).SetKind(giftcardentry.KindLoad).
			SetAmountCents(1).SetBalanceAfterCents(1).SetSourceKind(giftcardentry.SourceKindLoad).SetSourceID(unique()).Save(asA)
		requireDenied(t, err, "an entry of A on B's card")
	})
}
