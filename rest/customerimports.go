package rest

import (
	"cmp"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/safecsv"
)

// importFormats maps the media types an import may be sent as to its format.
var importFormats = map[string]string{
	"text/csv":             "csv",
	"application/x-ndjson": "jsonl",
	"application/jsonl":    "jsonl",
}

// customerImportJSON is an import as /v1 shows it.
type customerImportJSON struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	Format     string  `json:"format"`
	DryRun     bool    `json:"dry_run"`
	Bytes      int64   `json:"bytes"`
	Rows       int     `json:"rows"`
	Created    int     `json:"created"`
	Updated    int     `json:"updated"`
	Refused    int     `json:"refused"`
	Error      *string `json:"error"`
	CreatedAt  string  `json:"created_at"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Problems   string  `json:"problems_url"`
}

func customerImportOut(imp *ent.CustomerImport) customerImportJSON {
	out := customerImportJSON{ID: imp.ID, Status: string(imp.Status), Format: string(imp.Format), DryRun: imp.DryRun,
		Bytes: imp.Bytes, Rows: imp.Rows, Created: imp.Created, Updated: imp.Updated, Refused: imp.Refused,
		CreatedAt: timestamp(imp.CreatedAt), StartedAt: optTimestamp(imp.StartedAt), FinishedAt: optTimestamp(imp.FinishedAt),
		Problems: "/v1/customers/imports/" + imp.ID + "/problems"}
	if imp.Error != "" {
		out.Error = &imp.Error
	}
	return out
}

// customerImportStarted is the answer of an import started, at its Location.
type customerImportStarted struct {
	location
	customerImportJSON
}

func newCustomerImportJSON(imp *ent.CustomerImport) customerImportStarted {
	return customerImportStarted{location: location("/v1/customers/imports/" + imp.ID), customerImportJSON: customerImportOut(imp)}
}

// customerImportRequest is POST /v1/customers/imports: the body is the
// file, CSV or JSON Lines by its Content-Type, read as the import goes.
type customerImportRequest struct {
	file   io.Reader
	format string
	dryRun bool
}

func readCustomerImport(b *binder) customerImportRequest {
	media, _, _ := mime.ParseMediaType(b.r.Header.Get("Content-Type"))
	format, ok := importFormats[media]
	if !ok {
		b.refuse(bodyRefusal{http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send the file as text/csv or application/x-ndjson (JSON Lines)"})
	}
	q := customerImportRequest{file: http.MaxBytesReader(b.w, b.r.Body, customers.MaxImportBytes), format: format}
	if v := b.query("dry_run"); v != "" {
		var err error
		if q.dryRun, err = strconv.ParseBool(v); err != nil {
			b.problems.Add("dry_run", "must be true or false")
		}
	}
	return q
}

// startCustomerImport starts an import; a file over the limit is refused
// 413, its import not started.
func (s *server) startCustomerImport(ctx context.Context, q customerImportRequest) (*ent.CustomerImport, error) {
	imp, err := s.app.Customers.StartCustomerImport(ctx, q.file, q.format, q.dryRun)
	if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
		return nil, bodyRefusal{http.StatusRequestEntityTooLarge, "request_too_large",
			"the file exceeds 256 MiB: split it, or load it with the CLI (fideliza import customers)"}
	}
	return imp, err
}

// customerImportProblems is GET /v1/customers/imports/{id}/problems: the
// refused rows as CSV (line, field, message), as the CLI's error report.
func (s *server) customerImportProblems(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if _, err := s.app.Customers.CustomerImport(r.Context(), id); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	out := safecsv.NewWriter(w)
	err := out.Write([]string{"line", "field", "message"})
	for after := 0; err == nil; {
		var page []*ent.CustomerImportProblem
		if page, err = s.app.Customers.CustomerImportProblems(r.Context(), id, after, customers.MaxImportProblemsPage); err != nil || len(page) == 0 {
			break
		}
		for _, p := range page {
			if err = out.Write([]string{strconv.Itoa(p.Line), p.Field, p.Message}); err != nil {
				break
			}
		}
		out.Flush()
		err, after = cmp.Or(err, out.Error()), page[len(page)-1].ID
	}
	out.Flush()
	if err != nil { // the status is sent: the report ends short, and the log says why
		s.log.ErrorContext(r.Context(), "writing an import's problems", "import", id, "error", err)
	}
}
