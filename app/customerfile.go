package app

import (
	"bufio"
	"bytes"
	"encoding/csv"
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

// maxImportLine bounds one line of an import file.
const maxImportLine = 64 << 10

// CustomerFileRows reads a customer import file, csv (a header line of
// CustomerFileColumns, then a customer per line) or jsonl (a customer per
// line, as the body of POST /v1/customers), and yields its rows with their
// line numbers from after: the lines up to after are skipped (a resumed
// import). A line that cannot be read is yielded with its error; a file
// whose header cannot be read is an error before any row.
func CustomerFileRows(r io.Reader, format string, after int) (iter.Seq[ImportRow], error) {
	switch format {
	case "csv":
		return csvCustomerRows(r, after)
	case "jsonl":
		return jsonlCustomerRows(r, after), nil
	}
	return nil, fmt.Errorf("unknown import format %q: use csv or jsonl", format)
}

func csvCustomerRows(r io.Reader, after int) (iter.Seq[ImportRow], error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, maxImportLine))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the CSV header: %w", err)
	}
	header = slices.Clone(header)
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
	return func(yield func(ImportRow) bool) {
		for {
			record, err := cr.Read()
			var line int
			var pe *csv.ParseError
			switch {
			case errors.Is(err, io.EOF):
				return
			case errors.As(err, &pe):
				line = pe.StartLine
			case err == nil:
				line, _ = cr.FieldPos(0)
			default:
				yield(ImportRow{Err: apperr.Invalid("", "the file cannot be read: %v", err)})
				return
			}
			if line <= after {
				continue
			}
			row := ImportRow{Line: line}
			switch {
			case pe != nil:
				row.Err = apperr.Invalid("", "the line is not CSV: %v", pe.Err)
			case len(record) != len(header):
				row.Err = apperr.Invalid("", "the line has %d cells, the header %d", len(record), len(header))
			default:
				row.In, row.Cells = customerFromCells(header, record)
			}
			if !yield(row) {
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

func jsonlCustomerRows(r io.Reader, after int) iter.Seq[ImportRow] {
	return func(yield func(ImportRow) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
		line := 0
		for sc.Scan() {
			line++
			raw := bytes.TrimSpace(sc.Bytes())
			if line <= after || len(raw) == 0 {
				continue
			}
			row := ImportRow{Line: line}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&row.In); err != nil {
				row.Err = apperr.Invalid("", "the line is not a customer object: %v", err)
			} else if dec.More() {
				row.Err = apperr.Invalid("", "the line holds more than one JSON value")
			}
			if !yield(row) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(ImportRow{Line: line + 1, Err: apperr.Invalid("", "the line cannot be read: %v", err)})
		}
	}
}
