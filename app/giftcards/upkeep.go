package giftcards

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// ExpiringNoticeWindow is how long before a card expires gift_card.expiring
// is recorded, as cashback.expiring and points.expiring are.
const ExpiringNoticeWindow = 30 * 24 * time.Hour

// UpkeepGiftCards expires the cards whose time has come (active or never
// sold), then records gift_card.expiring for the active cards holding a
// balance that expire within ExpiringNoticeWindow: each card in a
// transaction of its own, so a crash loses at most the card in progress
// and a rerun skips what is done. Each step takes up to kernel.UpkeepBatch
// cards a run.
func (a *Service) UpkeepGiftCards(ctx context.Context, _ jobs.UpkeepGiftCards) error {
	if err := Rules.UpkeepGiftCards.Allow(ctx); err != nil {
		return err
	}
	cards := a.cards()
	now := a.k.Now().UTC()
	steps := []struct {
		doing string
		due   *ent.GiftCardQuery
		do    func(ctx context.Context, tx storage.Tx, id string) error
	}{
		{"expiring", a.k.DB.Ent.GiftCard.Query().
			Where(entgiftcard.StatusIn(entgiftcard.StatusActive, entgiftcard.StatusInactive), entgiftcard.ExpiresAtLTE(now)),
			func(ctx context.Context, tx storage.Tx, id string) error {
				_, err := cards.Expire(ctx, tx.Ent, id)
				return err
			}},
		{"notifying", a.k.DB.Ent.GiftCard.Query().
			Where(entgiftcard.StatusEQ(entgiftcard.StatusActive), entgiftcard.BalanceCentsGT(0), entgiftcard.ExpiringNotifiedAtIsNil(),
				entgiftcard.ExpiresAtGT(now), entgiftcard.ExpiresAtLTE(now.Add(ExpiringNoticeWindow))),
			func(ctx context.Context, tx storage.Tx, id string) error {
				_, err := cards.NotifyExpiring(ctx, tx.Ent, id, ExpiringNoticeWindow)
				return err
			}},
	}
	for _, s := range steps {
		due, err := s.due.Order(ent.Asc(entgiftcard.FieldExpiresAt)).Limit(kernel.UpkeepBatch).
			Select(entgiftcard.FieldID, entgiftcard.FieldTenantID).All(viewer.SystemContext(ctx))
		if err != nil {
			return err
		}
		for _, card := range due {
			tctx := viewer.TenantContext(ctx, card.TenantID)
			if err := a.k.DB.InTx(tctx, func(tx storage.Tx) error { return s.do(tctx, tx, card.ID) }); err != nil {
				return fmt.Errorf("%s gift card %s: %w", s.doing, card.ID, err)
			}
		}
	}
	return nil
}
