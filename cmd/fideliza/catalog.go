package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/safecsv"
	"github.com/fideliza/fideliza/viewer"
)

// catalogColumns are the columns of a catalogue file, in any order after
// its header; name and gtin or sku are required.
var catalogColumns = []string{"gtin", "sku", "name", "category", "brand"}

func newCatalogCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Manage the product catalogue campaigns match cart items with"}
	var tenantID, file, report string
	imp := &cobra.Command{
		Use:   "import",
		Short: "Load products from a CSV file, creating or updating them by GTIN, else SKU",
		Long: "The file's header names its columns: " + strings.Join(catalogColumns, ", ") + " (name, and gtin or sku, " +
			"required; category is a path such as \"Bebidas > Cervejas\"). Rows are loaded in batches of " +
			strconv.Itoa(campaigns.MaxProductsAtOnce) + "; refused rows are written to the error report (line, field, message).",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			if report == "" {
				report = file + ".errors.csv"
			}
			if err := requireTenant(cmd.Context(), a, tenantID); err != nil {
				return err
			}
			started := time.Now()
			res, err := importCatalog(viewer.TenantContext(cmd.Context(), tenantID), a, file, report, g.stderr)
			if err != nil {
				return err
			}
			summary := map[string]any{"rows": res.rows, "created": res.Created, "updated": res.Updated,
				"refused": len(res.Problems), "errors_file": nil, "seconds": time.Since(started).Seconds()}
			human := fmt.Sprintf("%d rows in %s: %d created, %d updated, %d refused", res.rows,
				time.Since(started).Round(time.Millisecond), res.Created, res.Updated, len(res.Problems))
			return printLoad(g, summary, human, len(res.Problems), report)
		}),
	}
	f := imp.Flags()
	f.StringVar(&tenantID, "tenant", "", "tenant id")
	f.StringVar(&file, "file", "", "the CSV file to load")
	f.StringVar(&report, "errors", "", "where to write the refused rows (default FILE.errors.csv)")
	_ = imp.MarkFlagRequired("tenant")
	_ = imp.MarkFlagRequired("file")
	cmd.AddCommand(imp)
	return cmd
}

// catalogLoad is what importCatalog did: the products' results and the rows
// read.
type catalogLoad struct {
	campaigns.CatalogResult
	rows int
}

// importCatalog loads a catalogue file in batches, showing its progress on
// stderr and writing refused rows (by line) to report, which it removes
// when none was refused.
func importCatalog(ctx context.Context, a *app.App, file, report string, stderr io.Writer) (*catalogLoad, error) {
	in, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	total, err := countLines(in)
	if err != nil {
		return nil, err
	}
	header, rows, err := customers.ReadCSVFile(in, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	if _, ok := col["name"]; !ok {
		return nil, fmt.Errorf("%s: the header must name the columns %s (name, and gtin or sku, required)", file, strings.Join(catalogColumns, ", "))
	}
	out, err := os.OpenFile(report, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	problems := safecsv.NewWriter(out)
	_ = problems.Write([]string{"line", "field", "message"})

	res := &catalogLoad{}
	bar := newProgressBar(stderr, total, 1, 0)
	var batch []campaigns.ProductInput
	var lines []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		got, err := a.Campaigns.ImportProducts(ctx, batch)
		if err != nil {
			return fmt.Errorf("the batch of lines %d–%d: %w", lines[0], lines[len(lines)-1], err)
		}
		res.Created += got.Created
		res.Updated += got.Updated
		for _, p := range got.Problems {
			_ = problems.Write([]string{strconv.Itoa(lines[p.Index]), p.Field, p.Message})
			res.Problems = append(res.Problems, p)
		}
		bar.show(lines[len(lines)-1])
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	cell := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for row, err := range rows {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if row.Err != nil { // reported after the rows before it
			if err := flush(); err != nil {
				return nil, err
			}
			res.rows++
			e, _ := apperr.As(row.Err)
			for _, d := range e.Details {
				_ = problems.Write([]string{strconv.Itoa(row.Line), d.Field, d.Message})
			}
			res.Problems = append(res.Problems, campaigns.ProductProblem{Index: -1, Message: e.Message})
			continue
		}
		if slices.IndexFunc(row.Cells, func(s string) bool { return strings.TrimSpace(s) != "" }) < 0 {
			continue // a blank line
		}
		res.rows++
		rec := row.Cells
		batch = append(batch, campaigns.ProductInput{GTIN: cell(rec, "gtin"), SKU: cell(rec, "sku"), Name: cell(rec, "name"),
			Category: cell(rec, "category"), Brand: cell(rec, "brand")})
		lines = append(lines, row.Line)
		if len(batch) == campaigns.MaxProductsAtOnce {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	bar.finish()
	problems.Flush()
	if err := problems.Error(); err != nil {
		return nil, err
	}
	if len(res.Problems) == 0 {
		_ = os.Remove(report)
	}
	return res, nil
}
