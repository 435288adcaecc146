package privacy

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/giftcard"
	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/webhookattempt"
	"github.com/fideliza/fideliza/storage"
)

// Scopes of the data-subject rights (LGPD): the unmasked export and the
// erasure, for the controller's privacy team.
const (
	ScopePrivacyRead  = "privacy:read"
	ScopePrivacyWrite = "privacy:write"
)

// Sections of a customer's export, in the order ExportCustomer gives them.
const (
	ExportCustomerSection   = "customer"        // *ent.Customer, unmasked, with its segments and score
	ExportConsentSection    = "consent_changes" // *ent.ConsentChange, oldest first
	ExportPointsSection     = "points_entries"  // *ent.PointsEntry, oldest first
	ExportSalesSection      = "sales"           // *ent.Sale with its items and payments, oldest first
	ExportRedemptionSection = "redemptions"     // *ent.Redemption, oldest first
	ExportWalletSection     = "wallet_entries"  // *ent.WalletEntry (cashback in R$), oldest first
	ExportGiftCardSection   = "gift_cards"      // *ent.GiftCard bound to the customer (no code: it is kept only as a hash)
)

// ExportCustomer gives a customer's data, the data subject's copy (LGPD art.
// 18, II and V): the profile unmasked with its consents, segments and score,
// then the points ledger, the sales with their items and the redemptions,
// row by row to emit, a page of rows read at a time. An erased customer is
// not found.
func (a *Service) ExportCustomer(ctx context.Context, id string, emit func(section string, row any) error) error {
	if err := Rules.ExportCustomer.Allow(ctx); err != nil {
		return err
	}
	return a.exportCustomer(ctx, id, emit)
}

// exportCustomer is ExportCustomer without its policy check, for the operations
// of this context that call it.
func (a *Service) exportCustomer(ctx context.Context, id string, emit func(section string, row any) error) error {
	if err := kernel.Guarded("id", id); err != nil {
		return err
	}
	c, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(id), customer.ErasedAtIsNil()).
		WithSegments().WithScore().Only(ctx)
	if ent.IsNotFound(err) {
		return apperr.NotFound("customer")
	}
	if err != nil {
		return err
	}
	if err := schema.Audit(ctx, a.k.DB.Ent, "customer.exported", "customer", id, nil); err != nil {
		return err
	}
	if err := emit(ExportCustomerSection, c); err != nil {
		return err
	}
	if err := kernel.Pages(ctx, func(after string) ([]*ent.ConsentChange, error) {
		return a.k.DB.Ent.ConsentChange.Query().Where(consentchange.CustomerID(id), consentchange.IDGT(after)).
			Order(ent.Asc(consentchange.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(e *ent.ConsentChange) string { return e.ID }, func(e *ent.ConsentChange) error { return emit(ExportConsentSection, e) }); err != nil {
		return err
	}
	if err := kernel.Pages(ctx, func(after string) ([]*ent.PointsEntry, error) {
		return a.k.DB.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(id), pointsentry.IDGT(after)).
			Order(ent.Asc(pointsentry.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(e *ent.PointsEntry) string { return e.ID }, func(e *ent.PointsEntry) error { return emit(ExportPointsSection, e) }); err != nil {
		return err
	}
	if err := kernel.Pages(ctx, func(after string) ([]*ent.Sale, error) {
		return a.k.DB.Ent.Sale.Query().Where(sale.CustomerID(id), sale.IDGT(after)).WithItems().WithPayments().WithStore().
			Order(ent.Asc(sale.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(s *ent.Sale) string { return s.ID }, func(s *ent.Sale) error { return emit(ExportSalesSection, s) }); err != nil {
		return err
	}
	if err := kernel.Pages(ctx, func(after string) ([]*ent.Redemption, error) {
		return a.k.DB.Ent.Redemption.Query().Where(redemption.CustomerID(id), redemption.IDGT(after)).
			Order(ent.Asc(redemption.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(r *ent.Redemption) string { return r.ID }, func(r *ent.Redemption) error { return emit(ExportRedemptionSection, r) }); err != nil {
		return err
	}
	if err := kernel.Pages(ctx, func(after string) ([]*ent.WalletEntry, error) {
		return a.k.DB.Ent.WalletEntry.Query().Where(walletentry.CustomerID(id), walletentry.IDGT(after)).
			Order(ent.Asc(walletentry.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(e *ent.WalletEntry) string { return e.ID }, func(e *ent.WalletEntry) error { return emit(ExportWalletSection, e) }); err != nil {
		return err
	}
	return kernel.Pages(ctx, func(after string) ([]*ent.GiftCard, error) {
		return a.k.DB.Ent.GiftCard.Query().Where(giftcard.CustomerID(id), giftcard.IDGT(after)).
			Order(ent.Asc(giftcard.FieldID)).Limit(kernel.ExportPage).All(ctx)
	}, func(g *ent.GiftCard) string { return g.ID }, func(g *ent.GiftCard) error { return emit(ExportGiftCardSection, g) })
}

// ExportSections are the members of an export document, in order.
var ExportSections = []string{ExportCustomerSection, ExportConsentSection, ExportPointsSection, ExportSalesSection,
	ExportRedemptionSection, ExportWalletSection, ExportGiftCardSection}

// WriteCustomerExport writes a customer's export as one JSON document,
// {"exported_at": …, "customer": …, "points_entries": […], "sales": […],
// "redemptions": […]}, as it is read: a long ledger never sits in memory.
// begin is called before the first byte (nothing is written for a customer
// not found).
func (a *Service) WriteCustomerExport(ctx context.Context, id string, w io.Writer, begin func()) error {
	if err := Rules.WriteCustomerExport.Allow(ctx); err != nil {
		return err
	}
	out := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(out)
	current, count := -1, 0 // the section being written, and its rows so far
	// open closes the current section and opens the next ones up to to (the
	// sections without rows come out empty).
	open := func(to int) {
		for current < to {
			if current > 0 {
				_, _ = out.WriteString("]")
			}
			current, count = current+1, 0
			_, _ = out.WriteString(`,"` + ExportSections[current] + `":`)
			if current > 0 {
				_, _ = out.WriteString("[")
			}
		}
	}
	err := a.exportCustomer(ctx, id, func(name string, row any) error {
		if current < 0 {
			begin()
			_, _ = out.WriteString(`{"exported_at":"` + a.k.Now().UTC().Format(time.RFC3339Nano) + `"`)
		}
		open(slices.Index(ExportSections, name))
		if count++; count > 1 {
			_, _ = out.WriteString(",")
		}
		return enc.Encode(row)
	})
	if err == nil {
		open(len(ExportSections) - 1)
		_, _ = out.WriteString("]}\n")
	}
	if current >= 0 {
		return errors.Join(err, out.Flush())
	}
	return err
}

// erasedMark replaces personal data in the records kept after an erasure.
const erasedMark = "[erased]"

// EraseCustomer anonymizes a customer (LGPD art. 18, IV and VI): its
// identity (name, e-mail, phone, document, birth date, gender, address,
// external id) is destroyed, and so are its copies (the search index, the
// sales' document, the events and webhook answers, stored idempotent
// answers, import files); its points, sales and redemptions stay under the
// customer's id, now pseudonymous, so balances, liability and tax records
// stay right. A customer.erased event says so. It runs under the customer's
// lock (lockCustomer): a write that began before it commits first and is
// erased with the rest, one that comes after finds the customer erased.
// Erasing an erased customer scrubs it again, in case anything was left,
// and announces nothing.
func (a *Service) EraseCustomer(ctx context.Context, id string) error {
	if err := Rules.EraseCustomer.Allow(ctx); err != nil {
		return err
	}
	return a.eraseCustomer(ctx, id)
}

// eraseCustomer is EraseCustomer without its policy check, for the operations
// of this context that call it.
func (a *Service) eraseCustomer(ctx context.Context, id string) error {
	if err := kernel.Guarded("id", id); err != nil {
		return err
	}
	var erased bool
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		c, err := a.k.LockCustomer(ctx, tx.Ent, id)
		if err != nil {
			return err
		}
		first := c.ErasedAt == nil
		now := a.k.Stamp()
		secrets := personalData(c)
		pseudonym := erasedDocument()
		u := tx.Ent.Customer.UpdateOneID(id).
			SetName("").ClearEmail().ClearPhone().ClearBirthDate().ClearGender().ClearExternalID().
			ClearAddressStreet().ClearAddressCity().ClearAddressState().ClearAddressZipCode().
			SetDocument(pseudonym).SetConsentMarketingEmail(false).SetConsentMarketingSms(false).
			SetConsentMarketingWhatsapp(false).SetConsentDataSharing(false)
		was := customers.ConsentsOf(c)
		if first || was != (customers.Consents{}) {
			u.SetConsentUpdatedAt(now)
		}
		if first {
			u.SetErasedAt(now)
		}
		if err := u.Exec(ctx); err != nil {
			return err
		}
		if err := customers.RecordConsents(ctx, tx.Ent, c, &was, customers.Consents{}, customers.Consents{}, consentchange.ChannelErasure, now); err != nil {
			return err
		}
		// The unfiltered list's total is the tenant's count (migration 0008):
		// an erased customer leaves the lists.
		if first {
			if err := tx.Ent.Tenant.Update().Where(tenant.ID(c.TenantID)).AddCustomerCount(-1).Exec(ctx); err != nil {
				return err
			}
		}
		if err := tx.Ent.Sale.Update().Where(sale.Or(sale.CustomerID(id), customers.SaleWithDocument(c.Document))).
			SetCustomerDocument(pseudonym).Exec(ctx); err != nil {
			return err
		}
		if err := scrubCopies(ctx, tx.Ent, c, secrets); err != nil {
			return err
		}
		if erased = first; !first {
			return nil
		}
		if err := schema.Audit(ctx, tx.Ent, "customer.erased", "customer", id, nil); err != nil {
			return err
		}
		return outbox.Record(ctx, tx.Ent, now, c.TenantID, outbox.CustomerErased, id, map[string]any{
			"customer_id": id, "erased_at": now,
		})
	})
	if err == nil && erased {
		a.k.Logger().InfoContext(ctx, "customer erased", "customer_id", id)
	}
	return err
}

// personalData are the strings of a customer's identity its copies may
// hold: the document bare and formatted (unless it is an erasure's
// pseudonym), the name, e-mail and phone.
func personalData(c *ent.Customer) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= 4 {
			out = append(out, s)
		}
	}
	if !erasedDocumentPattern.MatchString(c.Document) {
		add(c.Document)
		add(formattedDocument(c.Document))
	}
	add(c.Name)
	for _, p := range []*string{c.Email, c.Phone, c.ExternalID} {
		if p != nil {
			add(*p)
		}
	}
	return out
}

// formattedDocument writes a CPF as 000.000.000-00 and a CNPJ as
// 00.000.000/0000-00, as people type them.
func formattedDocument(d string) string {
	switch len(d) {
	case 11:
		return d[:3] + "." + d[3:6] + "." + d[6:9] + "-" + d[9:]
	case 14:
		return d[:2] + "." + d[2:5] + "." + d[5:8] + "/" + d[8:12] + "-" + d[12:]
	}
	return d
}

// erasedDocument is the pseudonymous document an erased customer keeps: the
// column is unique per tenant and required, and this value is no CPF or
// CNPJ (it has letters, and a CNPJ ends in two digits), so no lookup ever
// finds it.
func erasedDocument() string {
	const letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	b := make([]byte, 13)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return "X" + string(b)
}

// erasedDocumentPattern matches the documents erasedDocument makes.
var erasedDocumentPattern = regexp.MustCompile(`^X[A-Z]{13}$`)

// scrubCopies removes a customer's personal data from where copies of it
// are kept: event payloads (and the webhook receivers' answers to them),
// stored idempotent answers and the lines of import files (kept a day).
func scrubCopies(ctx context.Context, c *ent.Client, cust *ent.Customer, secrets []string) error {
	if len(secrets) == 0 {
		return nil
	}
	events, err := c.Event.Query().Where(event.SubjectID(cust.ID)).All(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		if !containsAny(string(mustJSON(e.Data)), secrets) {
			continue
		}
		if err := c.Event.UpdateOneID(e.ID).SetData(scrubJSON(e.Data, secrets).(map[string]any)).Exec(ctx); err != nil {
			return err
		}
	}
	for _, s := range secrets {
		if err := c.WebhookAttempt.Update().Where(webhookattempt.ResponseExcerptContains(s)).SetResponseExcerpt("").Exec(ctx); err != nil {
			return err
		}
		if _, err := c.IdempotencyKey.Delete().Where(bytesContain(idempotencykey.FieldResponseBody, s)).Exec(ctx); err != nil {
			return err
		}
	}
	return scrubImportFiles(ctx, c, secrets)
}

// scrubImportFiles removes the lines holding secrets from the files of the
// imports in progress (a file is dropped once loaded). The files are sealed,
// so no query can search them: each chunk is opened here, one at a time.
func scrubImportFiles(ctx context.Context, c *ent.Client, secrets []string) error {
	ids, err := c.CustomerImportChunk.Query().IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		ch, err := c.CustomerImportChunk.Get(ctx, id)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(ch.Data), "\n")
		kept := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return containsAny(l, secrets) })
		if len(kept) == len(lines) {
			continue
		}
		if err := c.CustomerImportChunk.UpdateOneID(id).SetData([]byte(strings.Join(kept, ""))).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// bytesContain matches the rows whose bytes column holds sub, read as text.
func bytesContain(column, sub string) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		text := "CAST(" + s.C(column) + " AS TEXT)"
		if s.Dialect() == dialect.Postgres {
			text = "convert_from(" + s.C(column) + ", 'UTF8')"
		}
		s.Where(entsql.P(func(b *entsql.Builder) { b.WriteString(text + " LIKE ").Arg("%" + sub + "%") }))
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// scrubJSON replaces every string of v holding one of secrets.
func scrubJSON(v any, secrets []string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = scrubJSON(e, secrets)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = scrubJSON(e, secrets)
		}
		return x
	case string:
		if containsAny(x, secrets) {
			return erasedMark
		}
	}
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
