package giftcards_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent/event"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

func reais(s string) *decimal.Decimal { return new(decimal.RequireFromString(s)) }

// requireCode checks err is an operation error of kind and code.
func requireCode(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, kind, e.Kind, "%v", err)
	require.Equal(t, code, e.Code, "%v", err)
}

// TestIssueRefusals: what issuing refuses, field by field.
func TestIssueRefusals(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		past := time.Now().Add(-time.Hour)
		far := time.Now().AddDate(11, 0, 0)
		for _, c := range []struct {
			in    giftcards.IssueInput
			field string
		}{
			{giftcards.IssueInput{}, "amount"},
			{giftcards.IssueInput{Amount: reais("0")}, "amount"},
			{giftcards.IssueInput{Amount: reais("10.001")}, "amount"},
			{giftcards.IssueInput{Amount: reais("100000.01")}, "amount"},
			{giftcards.IssueInput{Amount: reais("50"), Count: new(giftcards.MaxIssuedAtOnce + 1)}, "count"},
			{giftcards.IssueInput{Amount: reais("50"), Count: new(0)}, "count"},
			{giftcards.IssueInput{Amount: reais("50"), ExpiresAt: &past}, "expires_at"},
			{giftcards.IssueInput{Amount: reais("50"), ExpiresAt: &far}, "expires_at"},
			{giftcards.IssueInput{Amount: reais("50"), Count: new(2), CustomerID: "cus_x"}, "customer_id"},
			{giftcards.IssueInput{Amount: reais("50"), Note: strings.Repeat("n", 201)}, "note"},
		} {
			_, err := env.App.GiftCards.IssueGiftCards(env.Ctx, c.in)
			e, ok := apperr.As(err)
			require.True(t, ok, "%+v: %v", c.in, err)
			require.Equal(t, apperr.KindInvalid, e.Kind)
			require.Equal(t, c.field, e.Field, "%+v", c.in)
		}
		_, err := env.App.GiftCards.IssueGiftCards(env.Ctx, giftcards.IssueInput{Amount: reais("50"), CustomerID: "cus_00000000000000000000000000"})
		requireCode(t, err, apperr.KindNotFound, "not_found")
	})
}

// TestIssueInBulk: a batch's codes are unique, shown once and stored only
// as their hash and tail; each code finds its card however it is typed,
// and another tenant's viewer finds nothing.
func TestIssueInBulk(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Loja Presentes"))
		other := env.Tenant(t, "Loja Vizinha")
		issued, err := env.App.GiftCards.IssueGiftCards(env.Ctx, giftcards.IssueInput{Count: new(300), Amount: reais("50.00"), Inactive: true, Note: "Natal"})
		require.NoError(t, err)
		require.NotNil(t, issued.BatchID)
		require.Len(t, issued.Cards, 300)
		seen := map[string]bool{}
		for _, c := range issued.Cards {
			require.False(t, seen[c.Code], "codes are unique")
			seen[c.Code] = true
			require.Equal(t, entgiftcard.StatusInactive, c.Card.Status)
			require.Zero(t, c.Card.BalanceCents, "an unsold card holds nothing")
			require.Equal(t, *issued.BatchID, *c.Card.BatchID)
		}
		var stored int
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM gift_cards WHERE code_hash = $1 OR code_last4 = $2`,
			issued.Cards[0].Code, issued.Cards[0].Code).Scan(&stored))
		require.Zero(t, stored, "the code itself is stored nowhere")

		page, err := env.App.GiftCards.GiftCards(env.Ctx, giftcards.CardsFilter{BatchID: *issued.BatchID}, nil, 100)
		require.NoError(t, err)
		require.Equal(t, 300, page.TotalCount)

		first := issued.Cards[0]
		found, err := env.App.GiftCards.GiftCardByCode(env.Ctx, strings.ToLower(giftcard.FormatCode(first.Code)))
		require.NoError(t, err)
		require.Equal(t, first.Card.ID, found.ID)
		_, err = other.App.GiftCards.GiftCardByCode(other.Ctx, first.Code)
		requireCode(t, err, apperr.KindNotFound, "not_found")
		_, err = other.App.GiftCards.GiftCard(other.Ctx, first.Card.ID)
		requireCode(t, err, apperr.KindNotFound, "not_found")

		n, err := db.Ent.Event.Query().Where(event.Type("gift_card.issued")).Count(env.Ctx)
		require.NoError(t, err)
		require.Zero(t, n, "unsold cards are stock, not money")
		active, err := env.App.GiftCards.IssueGiftCards(env.Ctx, giftcards.IssueInput{Count: new(3), Amount: reais("20.00")})
		require.NoError(t, err)
		ev, err := db.Ent.Event.Query().Where(event.Type("gift_card.issued")).Only(env.Ctx)
		require.NoError(t, err, "one gift_card.issued a batch")
		require.Equal(t, *active.BatchID, ev.SubjectID)
		require.EqualValues(t, 3, ev.Data["count"])
		require.Len(t, ev.Data["gift_card_ids"], 3)
	})
}

// TestCardOperations: loading, binding, transferring and cancelling
// through the operations, with the answers of their refusals.
func TestCardOperations(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		customer := apptest.Customer(t, env.App, env.TenantID, 1)
		issue := func(inactive bool) string {
			got, err := env.App.GiftCards.IssueGiftCards(env.Ctx, giftcards.IssueInput{Amount: reais("100.00"), Inactive: inactive})
			require.NoError(t, err)
			require.Nil(t, got.BatchID, "one card is no batch")
			return got.Cards[0].Card.ID
		}
		card, other, unsold := issue(false), issue(false), issue(true)
		ops := env.App.GiftCards
		load := func(id, amount, key string) error {
			_, err := ops.LoadGiftCard(env.Ctx, id, giftcards.LoadInput{Amount: reais(amount), LoadID: key})
			return err
		}
		transfer := func(from, to string, amount *decimal.Decimal, key string) error {
			_, err := ops.TransferGiftCard(env.Ctx, from, giftcards.TransferInput{ToGiftCardID: to, Amount: amount, TransferID: key})
			return err
		}
		for _, c := range []struct {
			name string
			do   func() error
			kind apperr.Kind
			code string
		}{
			{"a load", func() error { return load(card, "20.50", "L-1") }, 0, ""},
			{"the same load", func() error { return load(card, "20.50", "L-1") }, 0, ""},
			{"a load without its key", func() error { return load(card, "1.00", "") }, apperr.KindInvalid, "validation_error"},
			{"an unsold card", func() error { return load(unsold, "1.00", "L-2") }, apperr.KindConflict, "gift_card_inactive"},
			{"over the card's limit", func() error { return load(card, "100000.00", "L-3") }, apperr.KindInvalid, "gift_card_balance_limit"},
			{"an unknown card", func() error { return load("gcd_00000000000000000000000000", "1.00", "L-4") }, apperr.KindNotFound, "not_found"},
			{"a transfer to itself", func() error { return transfer(card, card, nil, "T-0") }, apperr.KindInvalid, "validation_error"},
			{"a transfer of more than it holds", func() error { return transfer(other, card, reais("100.01"), "T-1") }, apperr.KindInvalid, "insufficient_balance"},
			{"a transfer", func() error { return transfer(other, card, reais("40.00"), "T-1") }, 0, ""},
			{"a transfer to an unknown card", func() error { return transfer(other, "gcd_00000000000000000000000000", nil, "T-2") }, apperr.KindNotFound, "not_found"},
			{"binding to an unknown customer", func() error {
				_, err := ops.BindGiftCard(env.Ctx, card, "cus_00000000000000000000000000")
				return err
			}, apperr.KindNotFound, "not_found"},
			{"binding", func() error { _, err := ops.BindGiftCard(env.Ctx, card, customer); return err }, 0, ""},
			{"a bound card's transfer", func() error { return transfer(card, other, nil, "T-3") }, apperr.KindConflict, "gift_card_bound"},
			{"cancelling", func() error { _, err := ops.CancelGiftCard(env.Ctx, other, "lost"); return err }, 0, ""},
			{"a cancelled card's load", func() error { return load(other, "1.00", "L-5") }, apperr.KindConflict, "gift_card_cancelled"},
		} {
			err := c.do()
			if c.code == "" {
				require.NoError(t, err, c.name)
				continue
			}
			requireCode(t, err, c.kind, c.code)
		}
		got, err := ops.GiftCard(env.Ctx, card)
		require.NoError(t, err)
		require.Equal(t, int64(10000+2050+4000), got.BalanceCents)
		require.Equal(t, customer, *got.CustomerID)
		entries, err := ops.GiftCardEntries(env.Ctx, card, nil, 10)
		require.NoError(t, err)
		require.Equal(t, 3, entries.TotalCount, "issue, load, transfer in")
		require.Equal(t, "transfer_in", string(entries.Edges[0].Node.Kind), "newest first")

		wallets, err := env.App.Wallets.Wallets(env.Ctx, customer)
		require.NoError(t, err)
		require.Len(t, wallets, 2, "cashback and the bound card")
		require.Equal(t, "gift_card", string(wallets[1].Unit))
		require.Equal(t, [2]int64{16050, 16050}, [2]int64{wallets[1].Balance, wallets[1].Spendable})
		require.Equal(t, card, wallets[1].GiftCard.ID)
	})
}

// TestUpkeepExpiresCards: the upkeep job announces a card's expiry within
// 30 days, once, and expires it whole when its time comes.
func TestUpkeepExpiresCards(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		clock := testclock.New(time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
		env := apptest.New(t, db, apptest.WithClock(clock.Now))
		expires := clock.Now().AddDate(0, 2, 0)
		got, err := env.App.GiftCards.IssueGiftCards(env.Ctx, giftcards.IssueInput{Amount: reais("30.00"), ExpiresAt: &expires})
		require.NoError(t, err)
		id := got.Cards[0].Card.ID
		run := func() {
			require.NoError(t, env.App.GiftCards.UpkeepGiftCards(viewer.SystemContext(context.Background()), jobs.UpkeepGiftCards{}))
		}
		count := func(typ string) int {
			n, err := db.Ent.Event.Query().Where(event.Type(typ), event.SubjectID(id)).Count(env.Ctx)
			require.NoError(t, err)
			return n
		}
		run()
		require.Zero(t, count("gift_card.expiring"), "not within 30 days yet")
		clock.Set(expires.Add(-20 * 24 * time.Hour))
		run()
		run()
		require.Equal(t, 1, count("gift_card.expiring"), "announced once")
		clock.Set(expires)
		run()
		run()
		require.Equal(t, 1, count("gift_card.expired"))
		card, err := env.App.GiftCards.GiftCard(env.Ctx, id)
		require.NoError(t, err)
		require.Equal(t, entgiftcard.StatusExpired, card.Status)
		require.Zero(t, card.BalanceCents)
	})
}
