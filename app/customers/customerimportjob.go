package customers

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/customerimportchunk"
	"github.com/fideliza/fideliza/ent/customerimportproblem"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// An import sent to the API is stored in chunks, each written in a short
// transaction of its own (a long upload must not hold SQLite's one writer),
// then a worker loads it as the CLI does.
const importChunkBytes = 1 << 20

// MaxImportBytes is the largest file the API takes for an import (about two
// million customers); the transports bound the body with it.
const MaxImportBytes = 256 << 20

// StartCustomerImport stores a customer file of format (csv or jsonl) sent
// by the viewer and queues its import into the viewer's tenant; dryRun
// checks and matches the rows only. The import answers at once: a worker
// loads it (RunCustomerImport) and CustomerImport tells how it goes.
func (a *Service) StartCustomerImport(ctx context.Context, file io.Reader, format string, dryRun bool) (*ent.CustomerImport, error) {
	if err := Rules.StartCustomerImport.Allow(ctx); err != nil {
		return nil, err
	}
	if format != "csv" && format != "jsonl" {
		return nil, apperr.Invalid("format", "must be csv or jsonl")
	}
	v, _ := viewer.FromContext(ctx)
	imp, err := a.k.DB.Ent.CustomerImport.Create().SetFormat(customerimport.Format(format)).SetDryRun(dryRun).
		SetRequestedBy(v.Subject).SetCreatedAt(a.k.Stamp()).Save(ctx)
	if err != nil {
		return nil, err
	}
	size, err := a.storeImportFile(ctx, imp.ID, file)
	if err == nil && size == 0 {
		err = apperr.Invalid("file", "is empty")
	}
	if err != nil {
		// The chunks stored so far go; the import stays, failed, for the record.
		return nil, errors.Join(err, a.failCustomerImport(ctx, imp.ID, "the upload did not complete"))
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		queued, err := tx.Ent.CustomerImport.UpdateOneID(imp.ID).SetStatus(customerimport.StatusQueued).SetBytes(size).Save(ctx)
		if err != nil {
			return err
		}
		imp = queued
		rc, err := a.k.Jobs()
		if err != nil {
			return err
		}
		_, err = rc.InsertTx(ctx, tx.SQL, jobs.ImportCustomers{TenantID: imp.TenantID, ImportID: imp.ID}, nil)
		return err
	})
	return imp, err
}

// storeImportFile writes file into importID's chunks and returns its size.
func (a *Service) storeImportFile(ctx context.Context, importID string, file io.Reader) (int64, error) {
	buf := make([]byte, importChunkBytes)
	var size int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(file, buf)
		if n > 0 {
			size += int64(n)
			if err := a.k.DB.Ent.CustomerImportChunk.Create().SetImportID(importID).SetSeq(seq).SetData(buf[:n]).Exec(ctx); err != nil {
				return size, err
			}
		}
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return size, nil
		case err != nil:
			return size, err
		}
	}
}

// failCustomerImport ends an import as failed for reason and drops its
// file: its header could not be read, or its job ran out of attempts.
func (a *Service) failCustomerImport(ctx context.Context, importID, reason string) error {
	return a.finishImport(ctx, importID, customerimport.StatusFailed, reason)
}

// finishImport ends an import with status and drops its file, which holds
// personal data the import no longer needs.
func (a *Service) finishImport(ctx context.Context, importID string, status customerimport.Status, reason string) error {
	return a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if _, err := tx.Ent.CustomerImportChunk.Delete().Where(customerimportchunk.ImportID(importID)).Exec(ctx); err != nil {
			return err
		}
		imp, err := tx.Ent.CustomerImport.UpdateOneID(importID).SetStatus(status).SetError(reason).
			SetFinishedAt(a.k.Stamp()).Save(ctx)
		if err != nil {
			return err
		}
		return a.recordImportProgress(ctx, tx.Ent, imp)
	})
}

// recordImportProgress records the event of an import's progress (its
// status and counts), in the transaction (c) that made it.
func (a *Service) recordImportProgress(ctx context.Context, c *ent.Client, imp *ent.CustomerImport) error {
	data := map[string]any{"import_id": imp.ID, "status": string(imp.Status), "rows": imp.Rows,
		"created": imp.Created, "updated": imp.Updated, "refused": imp.Refused}
	if imp.Error != "" {
		data["error"] = imp.Error
	}
	return outbox.Record(ctx, c, a.k.Stamp(), imp.TenantID, outbox.CustomerImportProgressed, imp.ID, data)
}

// CustomerImport returns one of the viewer's tenant's imports.
func (a *Service) CustomerImport(ctx context.Context, id string) (*ent.CustomerImport, error) {
	if err := Rules.CustomerImport.Allow(ctx); err != nil {
		return nil, err
	}
	return a.customerImport(ctx, id)
}

// customerImport is CustomerImport without its policy check, for the operations
// of this context that call it.
func (a *Service) customerImport(ctx context.Context, id string) (*ent.CustomerImport, error) {
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	imp, err := a.k.DB.Ent.CustomerImport.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apperr.NotFound("import")
	}
	return imp, err
}

// MaxImportProblemsPage bounds a page of an import's refused rows.
const MaxImportProblemsPage = 5000

// CustomerImportProblems returns the rows an import refused, in line
// order: at most limit of them (1 to MaxImportProblemsPage) after the one
// whose id is afterID (0: from the first).
func (a *Service) CustomerImportProblems(ctx context.Context, id string, afterID, limit int) ([]*ent.CustomerImportProblem, error) {
	if err := Rules.CustomerImportProblems.Allow(ctx); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxImportProblemsPage {
		return nil, apperr.Invalid("first", "must be between 1 and %d", MaxImportProblemsPage)
	}
	if _, err := a.customerImport(ctx, id); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.CustomerImportProblem.Query().
		Where(customerimportproblem.ImportID(id), customerimportproblem.IDGT(afterID)).
		Order(ent.Asc(customerimportproblem.FieldID)).Limit(limit).All(ctx)
}

// RunCustomerImport works the job of a queued import (runCustomerImport).
// After the job's last attempt (jobs.AttemptOf) a failure ends the import
// failed rather than leaving it running for ever.
func (a *Service) RunCustomerImport(ctx context.Context, args jobs.ImportCustomers) error {
	if err := Rules.RunCustomerImport.Allow(ctx); err != nil {
		return err
	}
	ctx = viewer.TenantContext(ctx, args.TenantID)
	err := a.runCustomerImport(ctx, args.ImportID)
	if err != nil && jobs.AttemptOf(ctx).Last() {
		// The attempt's context may be what failed (River cancels it after
		// the job's timeout): the import ends in a context of its own.
		return errors.Join(err, a.failCustomerImport(context.WithoutCancel(ctx), args.ImportID,
			"the import could not complete; the rows loaded so far stay"))
	}
	return err
}

// runCustomerImport loads a queued import. It commits its progress with
// each batch, so a worker that takes over an interrupted run resumes after
// the last committed batch; a file that cannot be read as a whole (a bad
// header) fails the import, not the job.
func (a *Service) runCustomerImport(ctx context.Context, id string) error {
	imp, err := a.customerImport(ctx, id)
	if err != nil {
		return err
	}
	switch imp.Status {
	case customerimport.StatusSucceeded, customerimport.StatusFailed, customerimport.StatusUploading:
		return nil // done, or never queued
	case customerimport.StatusQueued, customerimport.StatusRunning:
	}
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		run := tx.Ent.CustomerImport.UpdateOneID(id).SetStatus(customerimport.StatusRunning)
		if imp.StartedAt == nil {
			run.SetStartedAt(a.k.Stamp())
		}
		if imp, err = run.Save(ctx); err != nil {
			return err
		}
		return a.recordImportProgress(ctx, tx.Ent, imp)
	})
	if err != nil {
		return err
	}
	file := &chunkReader{ctx: ctx, a: a, importID: id}
	rows, err := CustomerFileRows(file, string(imp.Format), imp.DoneLine)
	if file.err != nil {
		return file.err
	}
	if err != nil {
		return a.failCustomerImport(ctx, id, err.Error())
	}
	var problems []ImportProblem
	_, err = a.importCustomers(ctx, rows, ImportOptions{
		DryRun:  imp.DryRun,
		Problem: func(p ImportProblem) { problems = append(problems, p) },
		Done: func(line int, batch ImportResult) error {
			err := a.saveImportProgress(ctx, id, line, batch, problems)
			problems = problems[:0]
			return err
		},
	})
	if err != nil {
		return err
	}
	return a.finishImport(ctx, id, customerimport.StatusSucceeded, "")
}

// saveImportProgress records a committed batch: its counts, its refused
// rows, and the line to resume after.
func (a *Service) saveImportProgress(ctx context.Context, id string, line int, batch ImportResult, problems []ImportProblem) error {
	return a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		for chunk := range slices.Chunk(problems, insertChunk) {
			creates := make([]*ent.CustomerImportProblemCreate, len(chunk))
			for i, p := range chunk {
				creates[i] = tx.Ent.CustomerImportProblem.Create().SetImportID(id).SetLine(p.Line).SetField(p.Field).SetMessage(p.Message)
			}
			if err := tx.Ent.CustomerImportProblem.CreateBulk(creates...).Exec(ctx); err != nil {
				return err
			}
		}
		imp, err := tx.Ent.CustomerImport.UpdateOneID(id).SetDoneLine(line).
			AddRows(batch.Rows).AddCreated(batch.Created).AddUpdated(batch.Updated).AddRefused(batch.Refused).Save(ctx)
		if err != nil {
			return err
		}
		return a.recordImportProgress(ctx, tx.Ent, imp)
	})
}

// chunkReader reads an import's file back from its chunks, one at a time.
type chunkReader struct {
	ctx      context.Context
	a        *Service
	importID string
	seq      int
	buf      []byte
	eof      bool
	err      error // a chunk could not be read: the import must not go on
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.eof {
			return 0, io.EOF
		}
		c, err := r.a.k.DB.Ent.CustomerImportChunk.Query().
			Where(customerimportchunk.ImportID(r.importID), customerimportchunk.Seq(r.seq)).Only(r.ctx)
		switch {
		case ent.IsNotFound(err):
			r.eof = true
			continue
		case err != nil:
			r.err = err
			return 0, err
		}
		r.buf, r.seq = c.Data, r.seq+1
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}
