package app

import (
	"context"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/customerimportchunk"
	"github.com/fideliza/fideliza/ent/customerimportproblem"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/signingkey"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/storage"
)

// upkeepBatch bounds how many lots, customers or campaigns one run of a
// periodic job handles; a larger backlog is left to the next run.
const upkeepBatch = 1000

// ExpiringNoticeWindow is how long before expiry points.expiring is recorded.
const ExpiringNoticeWindow = 30 * 24 * time.Hour

// RetiredKeyKeep is how long a retired signing key is kept after it stopped
// signing: longer than any token it signed lives, so they all verify.
const RetiredKeyKeep = auth.LongestTokenLifetime + time.Hour

// ExpirePoints expires the lots whose time has come, one transaction per
// lot: a crash loses at most the lot in progress, and a rerun skips what is
// done (an expiration entry per lot is unique).
func (a *App) ExpirePoints(ctx context.Context) error {
	l := a.Ledger()
	lots, err := a.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiresAtLTE(a.Now().UTC()), pointslot.PendingUntilIsNil()).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(upkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "expiring", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		_, err := l.Expire(ctx, tx.Ent, lot.ID)
		return err
	})
}

// ReleasePendingPoints makes spendable the lots whose pending period is
// over, one transaction per lot, as ExpirePoints does.
func (a *App) ReleasePendingPoints(ctx context.Context) error {
	l := a.Ledger()
	lots, err := a.DB.Ent.PointsLot.Query().
		Where(pointslot.PendingUntilLTE(a.Now().UTC())).
		Order(ent.Asc(pointslot.FieldPendingUntil)).Limit(upkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "releasing", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		return l.Release(ctx, tx.Ent, lot.ID)
	})
}

// eachLot runs fn for each lot in a transaction of its own, as the lot's
// tenant: a failure stops the run and leaves the lots before it done.
func (a *App) eachLot(ctx context.Context, lots []*ent.PointsLot, doing string,
	fn func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error) error {
	for _, lot := range lots {
		tctx := viewer.TenantContext(ctx, lot.TenantID)
		if err := a.DB.InTx(tctx, func(tx storage.Tx) error { return fn(tctx, tx, lot) }); err != nil {
			return fmt.Errorf("%s lot %s: %w", doing, lot.ID, err)
		}
	}
	return nil
}

// NotifyExpiringPoints records a points.expiring event, once per lot, for
// lots that expire within ExpiringNoticeWindow.
func (a *App) NotifyExpiringPoints(ctx context.Context) error {
	now := a.Stamp()
	lots, err := a.DB.Ent.PointsLot.Query().
		Where(pointslot.RemainingGT(0), pointslot.ExpiringNotifiedAtIsNil(),
			pointslot.ExpiresAtGT(now), pointslot.ExpiresAtLTE(now.Add(ExpiringNoticeWindow))).
		Order(ent.Asc(pointslot.FieldExpiresAt)).Limit(upkeepBatch).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	return a.eachLot(ctx, lots, "notifying", func(ctx context.Context, tx storage.Tx, lot *ent.PointsLot) error {
		// The customer first (lockCustomer's lock order). The conditional
		// update claims the lot: a concurrent run finds it claimed and
		// records nothing, and a lot spent since the listing gets no notice.
		if _, err := a.LockCustomer(ctx, tx.Ent, lot.CustomerID); err != nil {
			return err
		}
		n, err := tx.Ent.PointsLot.Update().
			Where(pointslot.ID(lot.ID), pointslot.ExpiringNotifiedAtIsNil(), pointslot.RemainingGT(0)).
			SetExpiringNotifiedAt(now).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		// The listing may be a batch old: the notice tells what is left now
		// (the claim holds the lot until the notice commits).
		lot, err = tx.Ent.PointsLot.Get(ctx, lot.ID)
		if err != nil {
			return err
		}
		return outbox.Record(ctx, tx.Ent, now, lot.TenantID, outbox.PointsExpiring, lot.CustomerID, map[string]any{
			"customer_id": lot.CustomerID, "lot_id": lot.ID, "points": lot.Remaining,
			"expires_at": lot.ExpiresAt.UTC().Format(time.RFC3339Nano),
		})
	})
}

// RecomputeLevels lowers the levels that points leaving the trailing
// 12-month window no longer hold. Credits and expirations update levels in
// their own transactions; only time passing needs this.
func (a *App) RecomputeLevels(ctx context.Context) error {
	l := a.Ledger()
	after := ""
	for {
		// Bronze is the floor: only higher levels can fall with time.
		q := a.DB.Ent.Customer.Query().Where(customer.LevelNEQ(customer.LevelBronze)).
			Order(ent.Asc(customer.FieldID)).Limit(upkeepBatch)
		if after != "" {
			q.Where(customer.IDGT(after))
		}
		custs, err := q.All(viewer.SystemContext(ctx))
		if err != nil {
			return err
		}
		for _, c := range custs {
			tctx := viewer.TenantContext(ctx, c.TenantID)
			err := a.DB.InTx(tctx, func(tx storage.Tx) error {
				cust, err := a.LockCustomer(tctx, tx.Ent, c.ID)
				if err != nil {
					return err
				}
				tenant, err := tx.Ent.Tenant.Get(tctx, c.TenantID)
				if err != nil {
					return err
				}
				return l.UpdateLevel(tctx, tx.Ent, cust, tenant)
			})
			if err != nil {
				return fmt.Errorf("level of %s: %w", c.ID, err)
			}
		}
		if len(custs) < upkeepBatch {
			return nil
		}
		after = custs[len(custs)-1].ID
	}
}

// CreditCashback credits the cashback of a redemption to the customer's
// points, at the tenant's earning rate, and counts the points it credited.
// The ledger credits a redemption once, so a rerun credits nothing more.
func (a *App) CreditCashback(ctx context.Context, tenantID, redemptionID string) error {
	ctx = viewer.TenantContext(ctx, tenantID)
	var credited int64
	err := a.DB.InTx(ctx, func(tx storage.Tx) error {
		red, err := tx.Ent.Redemption.Query().Where(redemption.ID(redemptionID)).WithCampaign().Only(ctx)
		if err != nil {
			return fmt.Errorf("redemption %s: %w", redemptionID, err)
		}
		if red.RolledBackAt != nil {
			return nil // undone before its cashback was due: cancelled
		}
		tenant, err := tx.Ent.Tenant.Get(ctx, tenantID)
		if err != nil {
			return err
		}
		pts := points.Earned(red.CashbackAmount, tenant.PointsPerReal)
		if pts <= 0 {
			return nil
		}
		res, err := a.Ledger().Credit(ctx, tx.Ent, ledger.Credit{
			CustomerID: red.CustomerID, Kind: pointsentry.KindBonus, Points: pts,
			SourceKind: pointsentry.SourceKindRedemption, SourceID: &red.ID,
			Reason: "cashback of " + red.Edges.Campaign.Name,
		})
		if err == nil && !res.Replayed {
			credited = res.Entry.Points
		}
		return err
	})
	if err == nil {
		a.Recorder().PointsCredited(kernel.SourceCashback, credited)
	}
	return err
}

// RunCampaignLifecycle stores campaigns' statuses as their dates pass
// (scheduled → active → ended), recording campaign.activated when one
// starts. Reads compute the status from the dates anyway; this makes it
// stored and emits the event.
func (a *App) RunCampaignLifecycle(ctx context.Context) error {
	now := a.Stamp()
	sys := viewer.SystemContext(ctx)
	// Ended first: a campaign whose whole window passed unseen ends
	// without being announced.
	if _, err := a.DB.Ent.Campaign.Update().
		Where(campaign.StatusNEQ(campaign.StatusEnded), campaignrules.WhereStatusAt(campaign.StatusEnded, now)).
		SetStatus(campaign.StatusEnded).Save(sys); err != nil {
		return err
	}
	due, err := a.DB.Ent.Campaign.Query().
		Where(campaign.StatusEQ(campaign.StatusScheduled), campaignrules.WhereStatusAt(campaign.StatusActive, now)).
		Order(ent.Asc(campaign.FieldStartsAt)).Limit(upkeepBatch).
		All(sys)
	if err != nil {
		return err
	}
	for _, c := range due {
		tctx := viewer.TenantContext(ctx, c.TenantID)
		err := a.DB.InTx(tctx, func(tx storage.Tx) error {
			// The conditional update claims the activation: a concurrent run
			// finds the campaign active and records nothing.
			n, err := tx.Ent.Campaign.Update().
				Where(campaign.ID(c.ID), campaign.StatusEQ(campaign.StatusScheduled)).
				SetStatus(campaign.StatusActive).Save(tctx)
			if err != nil || n == 0 {
				return err
			}
			a.CampaignsChanged(c.TenantID)
			data := map[string]any{
				"campaign_id": c.ID, "name": c.Name, "type": string(c.Type),
				"starts_at": c.StartsAt.UTC().Format(time.RFC3339Nano), "ends_at": c.EndsAt.UTC().Format(time.RFC3339Nano),
				"segment_id": c.SegmentID, "channels": c.Channels,
			}
			return outbox.Record(tctx, tx.Ent, now, c.TenantID, outbox.CampaignActivated, c.ID, data)
		})
		if err != nil {
			return fmt.Errorf("activating campaign %s: %w", c.ID, err)
		}
	}
	return nil
}

// How long a customer import is kept: an upload left unfinished (its
// process died) for a day, since its chunks hold personal data; a finished
// import, its counts and refused rows, for ninety days.
const (
	abandonedUploadKeep = 24 * time.Hour
	finishedImportKeep  = 90 * 24 * time.Hour
)

// PurgeExpired deletes idempotency keys past their lifetime, validation
// tokens expired an hour ago that no redemption refers to, and customer
// imports past their keep.
func (a *App) PurgeExpired(ctx context.Context) error {
	ctx = viewer.SystemContext(ctx)
	now := a.Now().UTC()
	if _, err := a.DB.Ent.IdempotencyKey.Delete().Where(idempotencykey.ExpiresAtLTE(now)).Exec(ctx); err != nil {
		return err
	}
	// Tokens a redemption refers to stay: the redemption's record of what
	// was validated.
	_, err := a.DB.Ent.ValidationToken.Delete().Where(
		validationtoken.ExpiresAtLTE(now.Add(-time.Hour)),
		func(s *entsql.Selector) {
			r := entsql.Table(redemption.Table)
			s.Where(entsql.NotExists(entsql.Select(r.C(redemption.FieldID)).From(r).
				Where(entsql.ColumnsEQ(r.C(redemption.FieldValidationTokenID), s.C(validationtoken.FieldID)))))
		},
	).Exec(ctx)
	if err != nil {
		return err
	}
	if err := a.purgeAudit(ctx, now); err != nil {
		return err
	}
	if err := a.anonymizeInactive(ctx, now); err != nil {
		return err
	}
	return a.purgeImports(ctx, now)
}

// anonymizeBatch bounds the customers one run anonymizes per tenant: the
// hourly runs get through a backlog without a long transaction.
const anonymizeBatch = 500

// anonymizeInactive erases the customers of the tenants that ask for it
// (anonymize_inactive_years) whose record has not changed for that long: a
// sale, points, a redemption or an edit all change it.
func (a *App) anonymizeInactive(ctx context.Context, now time.Time) error {
	tenants, err := a.DB.Ent.Tenant.Query().Where(tenant.AnonymizeInactiveYearsNotNil()).
		Select(tenant.FieldID, tenant.FieldAnonymizeInactiveYears).All(ctx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		ids, err := a.DB.Ent.Customer.Query().Where(customer.TenantID(t.ID), customer.ErasedAtIsNil(),
			customer.UpdatedAtLT(now.AddDate(-*t.AnonymizeInactiveYears, 0, 0))).Limit(anonymizeBatch).IDs(ctx)
		if err != nil {
			return err
		}
		in := viewer.TenantContext(ctx, t.ID)
		for _, id := range ids {
			if err := a.Privacy.EraseCustomer(in, id); err != nil {
				return err
			}
		}
		if len(ids) > 0 {
			a.Logger().InfoContext(ctx, "inactive customers anonymized", "tenant_id", t.ID, "customers", len(ids))
		}
	}
	return nil
}

// purgeAudit deletes each tenant's audit events older than its retention.
func (a *App) purgeAudit(ctx context.Context, now time.Time) error {
	tenants, err := a.DB.Ent.Tenant.Query().Select(tenant.FieldID, tenant.FieldAuditRetentionDays).All(ctx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		if _, err := a.DB.Ent.AuditEvent.Delete().Where(auditevent.TenantID(t.ID),
			auditevent.CreatedAtLT(now.AddDate(0, 0, -t.AuditRetentionDays))).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// purgeImports deletes the customer imports past their keep, with what
// remains of their files and their refused rows.
func (a *App) purgeImports(ctx context.Context, now time.Time) error {
	ids, err := a.DB.Ent.CustomerImport.Query().Where(customerimport.Or(
		customerimport.And(customerimport.StatusEQ(customerimport.StatusUploading), customerimport.CreatedAtLT(now.Add(-abandonedUploadKeep))),
		customerimport.FinishedAtLT(now.Add(-finishedImportKeep)),
	)).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	return a.DB.InTx(ctx, func(tx storage.Tx) error {
		if _, err := tx.Ent.CustomerImportChunk.Delete().Where(customerimportchunk.ImportIDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.Ent.CustomerImportProblem.Delete().Where(customerimportproblem.ImportIDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.Ent.CustomerImport.Delete().Where(customerimport.IDIn(ids...)).Exec(ctx)
		return err
	})
}

// PruneSigningKeys deletes signing keys retired long enough ago that no
// live token was signed with them.
func (a *App) PruneSigningKeys(ctx context.Context) error {
	_, err := a.DB.Ent.SigningKey.Delete().
		Where(signingkey.RetiredAtLT(a.Now().Add(-RetiredKeyKeep))).
		Exec(viewer.SystemContext(ctx))
	return err
}
