package customers

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/storage"
)

// ImportBatch is how many rows of a customer import are written per
// transaction; a resumed import starts after the last whole batch.
const ImportBatch = 2000

// insertChunk is how many customers one INSERT statement writes.
const insertChunk = 500

// ImportRow is one row of a customer import: its line in the file, and the
// customer it holds or why it could not be read.
type ImportRow struct {
	Line int
	In   CustomerInput
	Err  error // the row could not be read (a malformed line)
	// Cells are the row's cells that are no value of their field; the
	// row is checked all the same, so that every problem is reported.
	Cells apperr.Problems
}

// ImportProblem is a row the import refused, and why: the field at fault
// (empty for the whole row) and a message. It holds no value of the row,
// so an error report may be shared.
type ImportProblem struct {
	Line           int
	Field, Message string
}

// ImportOptions steer a customer import.
type ImportOptions struct {
	DryRun bool // validate and match only; write nothing
	// Problem receives each refused row; Done, after each batch is
	// committed (or checked, dry), the line of its last row, so that an
	// interrupted import can resume after it, and what the batch did.
	Problem func(ImportProblem)
	Done    func(line int, batch ImportResult) error
}

// ImportResult counts what an import did (or, dry, would do).
type ImportResult struct {
	Rows, Created, Updated, Refused int
}

// ImportCustomers loads rows into the viewer's tenant: each valid row
// creates a customer or, when its CPF (or else its external id) is a
// customer's, updates that customer with the row's fields; an invalid row
// is reported and skipped while the others load. Rows are checked as
// CreateCustomer checks them (name, e-mail and CPF required). New
// customers are written ImportBatch at a time in one transaction each, and
// the database's triggers keep the counts and the search index.
//
// Reading, checking and matching a batch overlaps writing the one before:
// a CPF or e-mail that a file repeats in a later batch is then refused as
// already registered, as one repeated within a batch is.
func (a *Service) ImportCustomers(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (ImportResult, error) {
	if err := Rules.ImportCustomers.Allow(ctx); err != nil {
		return ImportResult{}, err
	}
	return a.importCustomers(ctx, rows, opts)
}

// importCustomers is ImportCustomers without its policy check, for the operations
// of this context that call it.
func (a *Service) importCustomers(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (ImportResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	plans := make(chan *importPlan, 1)
	var planErr error
	go func() {
		defer close(plans)
		planErr = a.planImport(ctx, rows, func(p *importPlan) bool {
			select {
			case plans <- p:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var res ImportResult
	for p := range plans {
		err := a.writeImport(ctx, p, opts.DryRun)
		if err == nil {
			batch := ImportResult{Rows: p.rows, Created: p.created, Updated: p.updated, Refused: len(p.refused)}
			res.Rows += batch.Rows
			res.Created += batch.Created
			res.Updated += batch.Updated
			res.Refused += batch.Refused
			p.report(opts.Problem)
			if opts.Done != nil {
				err = opts.Done(p.last, batch)
			}
		}
		if err != nil {
			cancel()
			for range plans {
			}
			return res, err
		}
	}
	return res, planErr
}

// importPlan is a batch checked and matched against the tenant's
// customers, then written.
type importPlan struct {
	rows, last       int // how many rows, and the line of the last
	creates, updates []importTarget
	created, updated int
	refused          []importRefusal
}

// importTarget is a valid row and what it matched.
type importTarget struct {
	row ImportRow
	cpf string
	id  string // the customer it updates; empty for a new one
}

// importRefusal is a row refused and why.
type importRefusal struct {
	line int
	err  error
}

func (p *importPlan) refuse(line int, err error) {
	p.refused = append(p.refused, importRefusal{line, err})
}

// report hands the batch's problems to problem in the order of their
// lines, a problem per field at fault.
func (p *importPlan) report(problem func(ImportProblem)) {
	if problem == nil {
		return
	}
	slices.SortStableFunc(p.refused, func(a, b importRefusal) int { return a.line - b.line })
	for _, r := range p.refused {
		var e *apperr.Error
		if !errors.As(r.err, &e) {
			problem(ImportProblem{Line: r.line, Message: r.err.Error()})
			continue
		}
		if len(e.Details) == 0 {
			problem(ImportProblem{Line: r.line, Field: e.Field, Message: e.Message})
		}
		for _, d := range e.Details {
			problem(ImportProblem{Line: r.line, Field: d.Field, Message: d.Message})
		}
	}
}

// planImport reads rows in batches, checks and matches each, and hands it
// to next until next declines or the rows end. Rows that end with an error
// (a file that could not be read to its end) end the import with it: the
// rows read since the last batch are not written, for a resumed import to
// read them again.
func (a *Service) planImport(ctx context.Context, rows iter.Seq2[ImportRow, error], next func(*importPlan) bool) error {
	batch := make([]ImportRow, 0, ImportBatch)
	flush := func() (bool, error) {
		if len(batch) == 0 {
			return true, nil
		}
		p, err := a.planBatch(ctx, batch)
		batch = batch[:0]
		if err != nil {
			return false, err
		}
		return next(p), nil
	}
	for row, err := range rows {
		if err != nil {
			return err
		}
		batch = append(batch, row)
		if len(batch) == ImportBatch {
			if more, err := flush(); !more || err != nil {
				return err
			}
		}
	}
	_, err := flush()
	return err
}

// planBatch checks each row of a batch and matches the valid ones with the
// customers their CPFs, external ids and e-mails belong to.
func (a *Service) planBatch(ctx context.Context, batch []ImportRow) (*importPlan, error) {
	p := &importPlan{rows: len(batch), last: batch[len(batch)-1].Line}
	// Each row on its own; a CPF or e-mail repeated within the batch is
	// refused after its first line.
	var valid []importTarget
	cpfLine, emailLine := map[string]int{}, map[string]int{}
	for _, r := range batch {
		if r.Err != nil {
			p.refuse(r.Line, r.Err)
			continue
		}
		if err := kernel.Guarded("", r.In); err != nil {
			p.refuse(r.Line, err)
			continue
		}
		cpf, err := r.In.validate(modeCreate)
		if len(r.Cells) > 0 {
			var problems apperr.Problems
			if e, ok := apperr.As(err); ok {
				problems = e.Details
			}
			err = append(problems, r.Cells...).Err()
		}
		if err != nil {
			p.refuse(r.Line, err)
			continue
		}
		email := emailKey(r.In.Email.Value)
		if first, ok := cpfLine[cpf]; ok {
			p.refuse(r.Line, apperr.Invalid("cpf", "repeats the CPF of line %d", first))
			continue
		}
		if first, ok := emailLine[email]; ok {
			p.refuse(r.Line, apperr.Invalid("email", "repeats the e-mail of line %d", first))
			continue
		}
		cpfLine[cpf], emailLine[email] = r.Line, r.Line
		valid = append(valid, importTarget{row: r, cpf: cpf})
	}
	if len(valid) == 0 {
		return p, nil
	}
	cpfs, emails, externals := make([]string, 0, len(valid)), make([]string, 0, len(valid)), []string{}
	for _, v := range valid {
		cpfs, emails = append(cpfs, v.cpf), append(emails, emailKey(v.row.In.Email.Value))
		if v.row.In.ExternalID.Present() {
			externals = append(externals, v.row.In.ExternalID.Value)
		}
	}
	// One query per index: SQLite answers an OR of the three by scanning
	// the tenant.
	byCPF, byEmail, byExternal := map[string]string{}, map[string]string{}, map[string]string{}
	lookups := []struct {
		where  predicate.Customer
		field  string
		value  func(*ent.Customer) *string
		values []string
		into   map[string]string
	}{
		{oneOf(customer.FieldDocumentIndex, DocumentIndexes(cpfs)), customer.FieldDocument, func(c *ent.Customer) *string { return &c.Document }, cpfs, byCPF},
		{oneOf(customer.FieldEmailKey, emails), customer.FieldEmailKey, func(c *ent.Customer) *string { return c.EmailKey }, emails, byEmail},
		{oneOf(customer.FieldExternalID, externals), customer.FieldExternalID, func(c *ent.Customer) *string { return c.ExternalID }, externals, byExternal},
	}
	for _, lookup := range lookups {
		if len(lookup.values) == 0 {
			continue
		}
		found, err := a.k.DB.Ent.Customer.Query().Where(lookup.where).Select(customer.FieldID, lookup.field).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range found {
			if v := lookup.value(c); v != nil {
				lookup.into[*v] = c.ID
			}
		}
	}
	for _, v := range valid {
		v.id = byCPF[v.cpf]
		if v.id == "" && v.row.In.ExternalID.Present() {
			v.id = byExternal[v.row.In.ExternalID.Value]
		}
		if owner, ok := byEmail[emailKey(v.row.In.Email.Value)]; ok && owner != v.id {
			p.refuse(v.row.Line, duplicate("email"))
			continue
		}
		if v.id == "" {
			p.creates = append(p.creates, v)
		} else {
			p.updates = append(p.updates, v)
		}
	}
	return p, nil
}

// writeImport writes a planned batch: its new customers in one
// transaction, then its updates one by one. Dry, it only counts them.
func (a *Service) writeImport(ctx context.Context, p *importPlan, dryRun bool) error {
	if dryRun {
		p.created, p.updated = len(p.creates), len(p.updates)
		return nil
	}
	if err := a.createImported(ctx, p); err != nil {
		return err
	}
	for _, v := range p.updates {
		_, err := a.updateCustomer(ctx, v.id, v.row.In, modePatch)
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				return err
			}
			p.refuse(v.row.Line, err)
			continue
		}
		p.updated++
	}
	return nil
}

// createImported writes the new customers of a batch in one transaction.
// Should another writer (or an earlier batch) have taken one of their
// CPFs or e-mails since the batch was matched, the batch is written again
// one customer at a time, so that only that row is refused.
func (a *Service) createImported(ctx context.Context, p *importPlan) error {
	if len(p.creates) == 0 {
		return nil
	}
	now := a.k.Stamp()
	tenantID, err := kernel.ViewerTenant(ctx)
	if err != nil {
		return err
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		// One INSERT per chunk keeps within SQLite's bound on the
		// variables of a statement (32,766).
		for chunk := range slices.Chunk(p.creates, insertChunk) {
			builders := make([]*ent.CustomerCreate, len(chunk))
			created := make([]*ent.Customer, len(chunk)) // what the Consents' history needs of them
			for i, v := range chunk {
				created[i] = &ent.Customer{ID: pid.New(pid.Customer), TenantID: tenantID, CreatedAt: now}
				builders[i] = newCustomer(tx.Ent, v.row.In, v.cpf, now).SetID(created[i].ID)
			}
			if err := tx.Ent.Customer.CreateBulk(builders...).Exec(ctx); err != nil {
				return err
			}
			// The Consents' history, in a few inserts too, linked to
			// customers this transaction just wrote (known visible). A new
			// customer's Consents announce nothing, as its creation does
			// not: an import of a million would send a million webhooks.
			var changes []*ent.ConsentChangeCreate
			ids := make([]string, len(created))
			for i, c := range created {
				ch, _ := givenConsents(ctx, tx.Ent, c, chunk[i].row.In)
				changes, ids[i] = append(changes, ch...), c.ID
			}
			if err := writeConsentRecords(schema.RememberRead(ctx, ids), tx.Ent, changes, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		p.created += len(p.creates)
		return nil
	}
	if !ent.IsConstraintError(err) {
		return err
	}
	for _, v := range p.creates {
		if _, err := a.createCustomer(ctx, v.row.In, v.cpf, now); err != nil {
			if !ent.IsConstraintError(err) {
				return err
			}
			p.refuse(v.row.Line, duplicateOr(err))
			continue
		}
		p.created++
	}
	return nil
}

// oneOf matches a customer's field against values: an IN list on SQLite;
// on PostgreSQL one array parameter, field = ANY($1). PostgreSQL plans an
// IN list value by value (each one's selectivity against the column's
// statistics): with 2,000 values that planning was most of an import's
// time, and prepared, its generic plan, made while the table was small,
// compared every customer with every value. An array parameter is planned
// once, as an index condition, whatever its length and the table's size.
// (IN (SELECT unnest($1)) was as fast for the import but, next to another
// condition, became a subplan run per row: 103 s for a segment's 10,000
// CPFs.)
func oneOf(field string, values []string) predicate.Customer {
	return func(s *entsql.Selector) {
		if s.Dialect() != dialect.Postgres {
			s.Where(entsql.In(s.C(field), anys(values)...))
			return
		}
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString(s.C(field)).WriteString(" = ANY(").Arg(values).WriteString("::text[])")
		}))
	}
}

func anys(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// emailKey is the form of an e-mail its unique index compares.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }
