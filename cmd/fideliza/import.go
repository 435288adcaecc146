package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/safecsv"
	"github.com/fideliza/fideliza/viewer"
)

func newImportCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "import", Short: "Load data in bulk"}
	var tenantID, file, format, report string
	var dryRun, resume bool
	customers := &cobra.Command{
		Use:   "customers",
		Short: "Load customers from a CSV or JSON Lines file, creating or updating them by CPF or external id",
		Long: "Each row is checked as POST /v1/customers checks it; invalid rows are written to the error report " +
			"(line, field, message) while the valid ones load. A customer whose CPF, or else external id, is already " +
			"registered is updated with the row's fields. Progress is kept in FILE.progress after each batch: an " +
			"interrupted import continues with --resume.\nCSV columns: " + strings.Join(customersctx.CustomerFileColumns, ", ") +
			" (cpf, name and email required).",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			if format == "" {
				format = strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
			}
			if report == "" {
				report = file + ".errors.csv"
			}
			if err := requireTenant(cmd.Context(), a, tenantID); err != nil {
				return err
			}
			imp := customerImport{file: file, format: format, report: report, dryRun: dryRun, resume: resume, stderr: g.stderr}
			res, err := imp.run(viewer.TenantContext(cmd.Context(), tenantID), a)
			if err != nil {
				return err
			}
			summary := map[string]any{"rows": res.Rows, "created": res.Created, "updated": res.Updated, "refused": res.Refused,
				"dry_run": dryRun, "errors_file": nil, "seconds": imp.elapsed.Seconds()}
			human := fmt.Sprintf("%d rows in %s: %d created, %d updated, %d refused", res.Rows,
				imp.elapsed.Round(time.Millisecond), res.Created, res.Updated, res.Refused)
			if dryRun {
				human = "dry run, nothing written: " + human
			}
			return printLoad(g, summary, human, res.Refused, report)
		}),
	}
	f := customers.Flags()
	f.StringVar(&tenantID, "tenant", "", "tenant id")
	f.StringVar(&file, "file", "", "the file to load: .csv or .jsonl")
	f.StringVar(&format, "format", "", "csv or jsonl (default: the file's extension)")
	f.StringVar(&report, "errors", "", "where to write the refused rows (default FILE.errors.csv)")
	f.BoolVar(&dryRun, "dry-run", false, "check every row and report what would load, writing nothing")
	f.BoolVar(&resume, "resume", false, "continue an interrupted import after its last committed batch")
	_ = customers.MarkFlagRequired("tenant")
	_ = customers.MarkFlagRequired("file")
	cmd.AddCommand(customers)
	return cmd
}

// requireTenant checks the tenant a load is for exists.
func requireTenant(ctx context.Context, a *app.App, tenantID string) error {
	_, err := a.Backoffice.Tenant(ctx, tenantID)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.KindNotFound {
		return fmt.Errorf("there is no tenant %q", tenantID)
	}
	return err
}

// printLoad prints a load's summary, naming the error report when rows were
// refused.
func printLoad(g *globals, summary map[string]any, human string, refused int, report string) error {
	if refused > 0 {
		summary["errors_file"] = report
		human += " (see " + report + ")"
	}
	return g.print(summary, human)
}

// customerImport is one run of `import customers`.
type customerImport struct {
	file, format, report string
	dryRun, resume       bool
	stderr               io.Writer
	elapsed              time.Duration
}

// importProgress is what FILE.progress keeps: the file it belongs to (its
// size and modification time) and the last line committed.
type importProgress struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	Line    int       `json:"line"`
}

func (imp *customerImport) run(ctx context.Context, a *app.App) (customersctx.ImportResult, error) {
	var res customersctx.ImportResult
	in, err := os.Open(imp.file)
	if err != nil {
		return res, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return res, err
	}
	total, err := countLines(in)
	if err != nil {
		return res, err
	}
	progressPath := imp.file + ".progress"
	done := importProgress{Size: st.Size(), ModTime: st.ModTime().UTC()}
	switch raw, err := os.ReadFile(progressPath); {
	case err == nil && !imp.resume && !imp.dryRun:
		return res, fmt.Errorf("an interrupted import of this file left %s: rerun with --resume to continue it, or delete it to start over", progressPath)
	case err == nil && imp.resume:
		var saved importProgress
		if json.Unmarshal(raw, &saved) != nil || saved.Size != done.Size || !saved.ModTime.Equal(done.ModTime) {
			return res, fmt.Errorf("%s belongs to another version of %s: delete it to start over", progressPath, imp.file)
		}
		done.Line = saved.Line
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return res, err
	}
	rows, err := customersctx.CustomerFileRows(in, imp.format, done.Line)
	if err != nil {
		return res, err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if done.Line > 0 {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	reportFile, err := os.OpenFile(imp.report, flags, 0o600)
	if err != nil {
		return res, err
	}
	defer reportFile.Close()
	reportCSV := safecsv.NewWriter(reportFile)
	if done.Line == 0 {
		_ = reportCSV.Write([]string{"line", "field", "message"})
	}

	started, resumedFrom := time.Now(), done.Line
	header := 0
	if imp.format == "csv" {
		header = 1
	}
	bar := newProgressBar(imp.stderr, total, header, done.Line)
	res, err = a.Customers.ImportCustomers(ctx, rows, customersctx.ImportOptions{
		DryRun: imp.dryRun,
		Problem: func(p customersctx.ImportProblem) {
			_ = reportCSV.Write([]string{strconv.Itoa(p.Line), p.Field, p.Message})
		},
		Done: func(line int, _ customersctx.ImportResult) error {
			bar.show(line)
			reportCSV.Flush()
			if err := reportCSV.Error(); err != nil || imp.dryRun {
				return err
			}
			done.Line = line
			raw, _ := json.Marshal(done)
			return os.WriteFile(progressPath, raw, 0o600)
		},
	})
	imp.elapsed = time.Since(started)
	reportCSV.Flush()
	bar.finish()
	if err != nil {
		if done.Line > 0 {
			return res, fmt.Errorf("the import stopped after line %d (%w); rerun with --resume to continue", done.Line, err)
		}
		return res, err
	}
	if err := reportCSV.Error(); err != nil {
		return res, err
	}
	if res.Refused == 0 && resumedFrom == 0 {
		_ = os.Remove(imp.report)
	}
	if err := os.Remove(progressPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	return res, nil
}

// countLines counts the lines of f and rewinds it.
func countLines(f *os.File) (int, error) {
	buf := make([]byte, 1<<20)
	n, last := 0, byte('\n')
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if k > 0 {
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	_, err := f.Seek(0, io.SeekStart)
	return n, err
}

// progressBar shows an import's progress on stderr: a bar, the rows done,
// the rate and the time left, redrawn in place on a terminal and printed
// every few seconds elsewhere.
type progressBar struct {
	w                    io.Writer
	lines, header, start int
	began, shown         time.Time
	terminal             bool
}

// newProgressBar shows the progress through a file of lines lines, the
// first header of them not rows, from line start on.
func newProgressBar(w io.Writer, lines, header, start int) *progressBar {
	b := &progressBar{w: w, lines: lines, header: header, start: start, began: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.terminal = true
		}
	}
	return b
}

// show draws the progress up to line, at most every 200 ms on a terminal
// and every 5 s elsewhere.
func (b *progressBar) show(line int) {
	every := 5 * time.Second
	if b.terminal {
		every = 200 * time.Millisecond
	}
	if time.Since(b.shown) < every {
		return
	}
	b.shown = time.Now()
	total := max(b.lines-b.header, 1)
	done := min(max(line-b.header, 0), total)
	rate := float64(line-b.start) / max(time.Since(b.began).Seconds(), 1e-3)
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
	}
	const width = 30
	filled := width * done / total
	text := fmt.Sprintf("[%s%s] %d/%d rows  %.0f rows/s  ETA %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		done, total, rate, eta)
	if b.terminal {
		fmt.Fprint(b.w, "\r"+text)
	} else {
		fmt.Fprintln(b.w, text)
	}
}

// finish ends the bar's line on a terminal.
func (b *progressBar) finish() {
	if b.terminal && !b.shown.IsZero() {
		fmt.Fprintln(b.w)
	}
}
