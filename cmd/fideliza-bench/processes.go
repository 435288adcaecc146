package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// The scale-out load (--processes N, issue 35): the same loads on one
// service process, then spread in turn over N processes of the one
// database, each working River jobs too; and the time from a sale's 202 to
// its processing under light load.

// scaleOutOps are the loads measured on one process and on N.
var scaleOutOps = []string{"identify", "validate", "sale ingestion"}

// latencySales is how many sales the light load sends, one at a time, with
// latencyPause after each answer.
const (
	latencySales = 50
	latencyPause = 100 * time.Millisecond
)

// scaleReport is what the scale-out load measured.
type scaleReport struct {
	Dialect   string        `json:"dialect"`
	Processes int           `json:"processes"`
	Conns     int           `json:"conns"`
	Duration  time.Duration `json:"duration_ns"`
	One       []result      `json:"one_process"`
	All       []result      `json:"n_processes"`
	Latency   result        `json:"sale_202_to_processed"`
}

// scaleOut measures scaleOutOps on the process l sends to, starts
// o.processes-1 more with env and measures them again over all, then the
// light load's latency on all.
func scaleOut(ctx context.Context, db *storage.DB, l *loads, o options, env []string, progress func(string, ...any)) error {
	rep := scaleReport{Dialect: db.Dialect, Processes: o.processes, Conns: o.conns, Duration: o.duration}
	measure := func() ([]result, error) {
		var out []result
		for _, name := range scaleOutOps {
			progress("load: %s on %d process(es)", name, len(l.bases))
			do := l.sale
			if name != "sale ingestion" {
				do = l.op(name)
			}
			// A second of the load first, not measured: the processes'
			// pools and caches filled, as in the measure on one.
			run(ctx, name, o.conns, time.Second, 0, do)
			out = append(out, run(ctx, name, o.conns, o.duration, 0, do))
		}
		// The next measure starts with an empty queue.
		return out, waitDrained(ctx, db)
	}
	var err error
	if rep.One, err = measure(); err != nil {
		return err
	}
	for range o.processes - 1 {
		addr, stop, _, err := startChild(ctx, "server", env)
		if err != nil {
			return err
		}
		defer stop()
		l.bases = append(l.bases, "http://"+addr)
	}
	if rep.All, err = measure(); err != nil {
		return err
	}
	progress("light load: %d sales one at a time, 202 → processed", latencySales)
	if rep.Latency, err = l.saleLatency(ctx, db); err != nil {
		return err
	}
	return output(o, rep, rep.print)
}

func (r scaleReport) print(w io.Writer) {
	fmt.Fprintf(w, "\n%s, %d connections, %s per load; the same loads on 1 process and spread over %d\n\n", r.Dialect, r.Conns, r.Duration, r.Processes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "operation\t1 process req/s\tp50 ms\t%d processes req/s\tp50 ms\tratio\terrors\t\n", r.Processes)
	for i, one := range r.One {
		all := r.All[i]
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.0f\t%.1f\t%.2f\t%d\t\n", one.Name, one.PerSecond, ms(one.P50), all.PerSecond, ms(all.P50),
			all.PerSecond/max(one.PerSecond, 1), one.Errors+all.Errors)
	}
	tw.Flush()
	printLatency(w, r.Latency)
	for _, o := range append(slices.Clone(r.One), append(r.All, r.Latency)...) {
		if o.FirstError != "" {
			fmt.Fprintf(w, "first error of %s: %s\n", o.Name, o.FirstError)
		}
	}
}

// printLatency prints the light load's latency line.
func printLatency(w io.Writer, r result) {
	fmt.Fprintf(w, "\nsale 202 → processed, %d sales one at a time: p50 %.1f ms, p99 %.1f ms (target p50 < 100 ms on PostgreSQL)\n",
		r.Requests, ms(r.P50), ms(r.P99))
}

// saleLatency sends latencySales sales one at a time, pausing after each
// answer, then reads when each was processed: the latency of a sale is
// from the moment its 202 arrived to its processed_at (0 when the worker
// committed before the answer arrived).
func (l *loads) saleLatency(ctx context.Context, db *storage.DB) (result, error) {
	acked := map[string]time.Time{}
	r := result{Name: "sale 202 → processed (light load)"}
	started := time.Now()
	for range latencySales {
		body := l.saleBody()
		id := fmt.Sprint(body["sale"].(map[string]any)["id"])
		if _, err := call(ctx, l.hc, http.MethodPost, l.pos("/sales"), body, l.basic, http.StatusAccepted, nil); err != nil {
			r.Errors++
			r.FirstError = cmp.Or(r.FirstError, err.Error())
			continue
		}
		acked[id] = time.Now()
		time.Sleep(latencyPause)
	}
	if err := waitDrained(ctx, db); err != nil {
		return r, err
	}
	r.Elapsed = time.Since(started)
	ids := make([]string, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	sales, err := db.Ent.Sale.Query().Where(sale.ExternalIDIn(ids...)).
		Select(sale.FieldExternalID, sale.FieldProcessedAt).All(viewer.TenantContext(ctx, l.f.TenantID))
	if err != nil {
		return r, err
	}
	var all []time.Duration
	for _, s := range sales {
		if s.ProcessedAt != nil {
			all = append(all, max(0, s.ProcessedAt.Sub(acked[s.ExternalID])))
		}
	}
	slices.Sort(all)
	r.Requests = len(all)
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[min(len(all)-1, len(all)*99/100)]
	}
	return r, nil
}
