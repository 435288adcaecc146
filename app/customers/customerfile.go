package customers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
)

// CustomerFileColumns are the columns of a CSV customer import, in any
// order; only cpf, name and email are required. An empty cell is an absent
// field.
var CustomerFileColumns = []string{"cpf", "name", "email", "external_id", "phone", "birth_date", "gender",
	"street", "city", "state", "zip_code", "marketing_email", "marketing_sms", "marketing_whatsapp", "data_sharing"}

// CustomerFileRows reads a customer import file, csv (a header line of
// CustomerFileColumns, then a customer per line) or jsonl (a customer per
// line, with CustomerInput's names), and yields its rows with their
// line numbers from after: the lines up to after are skipped (a resumed
// import). A line that cannot be read as a row (not CSV or JSON, longer
// than MaxImportLine) is yielded with its Err, and the lines after it
// follow; a file that cannot be read to its end ends the rows with an
// error, and one whose header cannot be read is an error before any row.
func CustomerFileRows(r io.Reader, format string, after int) (iter.Seq2[ImportRow, error], error) {
	switch format {
	case "csv":
		return csvCustomerRows(r, after)
	case "jsonl":
		return jsonlCustomerRows(r, after), nil
	}
	return nil, fmt.Errorf("unknown import format %q: use csv or jsonl", format)
}

func csvCustomerRows(r io.Reader, after int) (iter.Seq2[ImportRow, error], error) {
	header, records, err := ReadCSVFile(r, after)
	if err != nil {
		return nil, err
	}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(CustomerFileColumns, h) {
			return nil, fmt.Errorf("unknown CSV column %s; the columns are %s", headerCell(i, h), strings.Join(CustomerFileColumns, ", "))
		}
		if slices.Contains(header[:i], h) {
			return nil, fmt.Errorf("the CSV column %q is repeated", h)
		}
		header[i] = h
	}
	for _, required := range []string{"cpf", "name", "email"} {
		if !slices.Contains(header, required) {
			return nil, fmt.Errorf("the CSV header has no %q column", required)
		}
	}
	return func(yield func(ImportRow, error) bool) {
		for rec, err := range records {
			row := ImportRow{Line: rec.Line, Err: rec.Err}
			switch {
			case err != nil:
				yield(row, err)
				return
			case row.Err != nil:
			case len(rec.Cells) != len(header):
				row.Err = apperr.Invalid("", "the line has %d cells, the header %d", len(rec.Cells), len(header))
			default:
				row.In, row.Cells = customerFromCells(header, rec.Cells)
			}
			if !yield(row, nil) {
				return
			}
		}
	}, nil
}

// columnLike is a header cell that reads as a column name.
var columnLike = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// headerCell names an unknown header cell in an error: quoted when it reads
// as a column name, else by its position, for in a file without a header
// line the cell is a customer's name, e-mail or CPF, which errors (stored
// with an import, shown by the API) must not carry.
func headerCell(i int, h string) string {
	if columnLike.MatchString(h) {
		return strconv.Quote(h)
	}
	return fmt.Sprintf("number %d (is the header line missing?)", i+1)
}

// customerFromCells reads a CSV record under header, and the cells that
// are no value of their field.
func customerFromCells(header, record []string) (CustomerInput, apperr.Problems) {
	var in CustomerInput
	var p apperr.Problems
	text := func(v string) opt.Field[string] {
		if v = strings.TrimSpace(v); v == "" {
			return opt.Field[string]{}
		}
		return opt.Of(v)
	}
	consent := func(column, v string, dst *opt.Field[bool]) {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
			return
		case "true", "1", "yes", "sim":
			*dst = opt.Of(true)
		case "false", "0", "no", "não", "nao":
			*dst = opt.Of(false)
		default:
			p.Add(column, "must be true or false")
			return
		}
		in.Consent.Set = true
	}
	for i, column := range header {
		v := record[i]
		switch column {
		case "cpf":
			in.CPF = text(v)
		case "name":
			in.Name = text(v)
		case "email":
			in.Email = text(v)
		case "external_id":
			in.ExternalID = text(v)
		case "phone":
			in.Phone = text(v)
		case "birth_date":
			in.BirthDate = text(v)
		case "gender":
			in.Gender = text(v)
		case "street":
			in.Address.Value.Street = text(v)
		case "city":
			in.Address.Value.City = text(v)
		case "state":
			in.Address.Value.State = text(v)
		case "zip_code":
			in.Address.Value.ZipCode = text(v)
		case "marketing_email":
			consent(column, v, &in.Consent.Value.MarketingEmail)
		case "marketing_sms":
			consent(column, v, &in.Consent.Value.MarketingSMS)
		case "marketing_whatsapp":
			consent(column, v, &in.Consent.Value.MarketingWhatsApp)
		case "data_sharing":
			consent(column, v, &in.Consent.Value.DataSharing)
		}
	}
	a := in.Address.Value
	in.Address.Set = a.Street.Set || a.City.Set || a.State.Set || a.ZipCode.Set
	return in, p
}

func jsonlCustomerRows(r io.Reader, after int) iter.Seq2[ImportRow, error] {
	return func(yield func(ImportRow, error) bool) {
		records := newRecordReader(r, false)
		for {
			rec, err := records.nextFilled()
			switch {
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield(ImportRow{}, records.failed(err))
				return
			}
			if rec.line <= after {
				continue
			}
			row := ImportRow{Line: rec.line, Err: rec.err()}
			if row.Err == nil {
				dec := json.NewDecoder(bytes.NewReader(rec.data))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&row.In); err != nil {
					row.Err = apperr.Invalid("", "the line is not a customer object: %v", err)
				} else if dec.More() {
					row.Err = apperr.Invalid("", "the line holds more than one JSON value")
				}
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}
