package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

var (
	// documentInText is a CPF or CNPJ as a guide writes one, bare or
	// formatted; document.ParseAny tells the real ones.
	documentInText = regexp.MustCompile(`[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}|[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}/?[0-9A-Z]{4}-?[0-9]{2}`)
	// bareRun is a run of the characters of a bare document, which holds one
	// as any of its 11- or 14-character windows.
	bareRun = regexp.MustCompile(`[0-9A-Z]{11,}`)
	// formattedDocument is a document in either mask.
	formattedDocument = regexp.MustCompile(`[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}/[0-9A-Z]{4}-[0-9]{2}`)
	punctuation       = strings.NewReplacer(".", "", "-", "", "/", "")
)

// requireNoClearDocuments fails when the database at dbURL holds in clear,
// bare or formatted, any document it knows (its customers' and its sales',
// opened through ent) or that guide sent: anywhere in the SQLite file, every
// page, and its WAL; anywhere in a pg_dump of the PostgreSQL database.
func requireNoClearDocuments(t *testing.T, dbURL, guide string) {
	t.Helper()
	ctx := viewer.SystemContext(context.Background())
	docs := map[string]bool{}
	for _, m := range documentInText.FindAllString(guide, -1) {
		if _, d, err := document.ParseAny(m); err == nil {
			docs[d] = true
		}
	}
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close()
	customers, err := db.Ent.Customer.Query().Select(customer.FieldDocument).All(ctx)
	require.NoError(t, err)
	for _, c := range customers {
		docs[c.Document] = true
	}
	sales, err := db.Ent.Sale.Query().Select(sale.FieldCustomerDocument).All(ctx)
	require.NoError(t, err)
	for _, s := range sales {
		docs[s.CustomerDocument] = true
	}
	delete(docs, "")
	require.Greater(t, len(docs), 100, "the demo's customers, at least")

	raw := storedBytes(t, db.Dialect, dbURL, "escape")
	require.Empty(t, clearDocuments(raw, docs), "documents in clear in the database (%d bytes scanned)", len(raw))
	t.Logf("none of %d documents in clear in %d bytes of the database", len(docs), len(raw))
}

// storedBytes is what the database at dbURL holds as a backup would: the
// SQLite file, every page, and its WAL; or a pg_dump of the PostgreSQL
// database, bytes columns written as byteaOutput says (escape, so their text
// shows, or hex).
func storedBytes(t *testing.T, dialectName, dbURL, byteaOutput string) []byte {
	t.Helper()
	if dialectName != dialect.SQLite {
		return pgDump(t, dbURL, byteaOutput)
	}
	var raw []byte
	path := strings.TrimPrefix(dbURL, "sqlite://")
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		raw = append(raw, b...)
	}
	return raw
}

// pgDump is the data of the PostgreSQL database at dbURL as pg_dump writes
// it, bytes columns in byteaOutput.
func pgDump(t *testing.T, dbURL, byteaOutput string) []byte {
	t.Helper()
	requireTools(t, "pg_dump")
	cmd := exec.Command("pg_dump", "--data-only", "--dbname", libpqURL(t, dbURL))
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c bytea_output="+byteaOutput)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "pg_dump: %s", stderr.String())
	return out
}

// libpqURL is dbURL without the pgxpool parameters (pool_max_conns…), which
// libpq's tools refuse.
func libpqURL(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// clearDocuments are the documents of docs raw holds, bare or formatted.
func clearDocuments(raw []byte, docs map[string]bool) []string {
	found := map[string]bool{}
	for _, run := range bareRun.FindAll(raw, -1) {
		for _, n := range []int{11, 14} {
			for i := 0; i+n <= len(run); i++ {
				if d := string(run[i : i+n]); docs[d] {
					found[d] = true
				}
			}
		}
	}
	for _, m := range formattedDocument.FindAll(raw, -1) {
		if d := punctuation.Replace(string(m)); docs[d] {
			found[d] = true
		}
	}
	out := make([]string, 0, len(found))
	for d := range found {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func TestClearDocuments(t *testing.T) {
	docs := map[string]bool{"52998224725": true, "11222333000181": true, "12ABC34501DE35": true}
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{"nothing here", nil},
		{"\x00\x0152998224725\x02", []string{"52998224725"}},
		{`{"cpf":"529.982.247-25"}`, []string{"52998224725"}},
		{"x911222333000181999", []string{"11222333000181"}},
		{"12.ABC.345/01DE-35", []string{"12ABC34501DE35"}},
		{"cnpj 11.222.333/0001-81 and cpf 52998224725", []string{"11222333000181", "52998224725"}},
		{"k1:52998224726 other digits 5299822472", nil},
		{"k1:mDrx0Q5vQmvC7k4bRk9q0wJg8uZgkq1XcX8S", nil},
	} {
		require.Equal(t, c.want, nilIfEmpty(clearDocuments([]byte(c.raw), docs)), "%q", c.raw)
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
