package privacy

import (
	"context"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/customerimportchunk"
	"github.com/fideliza/fideliza/ent/customerimportproblem"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// How long a customer import is kept: an upload left unfinished (its
// process died) for a day, since its chunks hold personal data; a finished
// import, its counts and refused rows, for ninety days.
const (
	abandonedUploadKeep = 24 * time.Hour
	finishedImportKeep  = 90 * 24 * time.Hour
)

// PurgeExpired deletes idempotency keys past their lifetime, validation
// tokens expired an hour ago that no redemption refers to, the change
// feed's records past kernel.ChangesKept, and customer imports past their
// keep.
func (a *Service) PurgeExpired(ctx context.Context, _ jobs.PurgeExpired) error {
	if err := Rules.PurgeExpired.Allow(ctx); err != nil {
		return err
	}
	ctx = viewer.SystemContext(ctx)
	now := a.k.Now().UTC()
	if _, err := a.k.DB.Ent.IdempotencyKey.Delete().Where(idempotencykey.ExpiresAtLTE(now)).Exec(ctx); err != nil {
		return err
	}
	// Tokens a redemption refers to stay: the redemption's record of what
	// was validated.
	_, err := a.k.DB.Ent.ValidationToken.Delete().Where(
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
	if _, err := a.k.DB.Ent.Change.Delete().Where(change.CreatedAtLT(now.Add(-kernel.ChangesKept))).Exec(ctx); err != nil {
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
func (a *Service) anonymizeInactive(ctx context.Context, now time.Time) error {
	tenants, err := a.k.DB.Ent.Tenant.Query().Where(tenant.AnonymizeInactiveYearsNotNil()).
		Select(tenant.FieldID, tenant.FieldAnonymizeInactiveYears).All(ctx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		ids, err := a.k.DB.Ent.Customer.Query().Where(customer.TenantID(t.ID), customer.ErasedAtIsNil(),
			customer.UpdatedAtLT(now.AddDate(-*t.AnonymizeInactiveYears, 0, 0))).Limit(anonymizeBatch).IDs(ctx)
		if err != nil {
			return err
		}
		in := viewer.TenantContext(ctx, t.ID)
		for _, id := range ids {
			if err := a.eraseCustomer(in, id); err != nil {
				return err
			}
		}
		if len(ids) > 0 {
			a.k.Logger().InfoContext(ctx, "inactive customers anonymized", "tenant_id", t.ID, "customers", len(ids))
		}
	}
	return nil
}

// purgeAudit deletes each tenant's audit events older than its retention.
func (a *Service) purgeAudit(ctx context.Context, now time.Time) error {
	tenants, err := a.k.DB.Ent.Tenant.Query().Select(tenant.FieldID, tenant.FieldAuditRetentionDays).All(ctx)
	if err != nil {
		return err
	}
	for _, t := range tenants {
		if _, err := a.k.DB.Ent.AuditEvent.Delete().Where(auditevent.TenantID(t.ID),
			auditevent.CreatedAtLT(now.AddDate(0, 0, -t.AuditRetentionDays))).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// purgeImports deletes the customer imports past their keep, with what
// remains of their files and their refused rows.
func (a *Service) purgeImports(ctx context.Context, now time.Time) error {
	ids, err := a.k.DB.Ent.CustomerImport.Query().Where(customerimport.Or(
		customerimport.And(customerimport.StatusEQ(customerimport.StatusUploading), customerimport.CreatedAtLT(now.Add(-abandonedUploadKeep))),
		customerimport.FinishedAtLT(now.Add(-finishedImportKeep)),
	)).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	return a.k.DB.InTx(ctx, func(tx storage.Tx) error {
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
