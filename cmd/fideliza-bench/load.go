package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// op is one request of a load: it returns how long the measured part took.
// Setup work an operation needs first (the validation before a redeem) is
// not counted.
type op func(ctx context.Context) (time.Duration, error)

// result is what a load measured.
type result struct {
	Name       string        `json:"name"`
	Requests   int           `json:"requests"`
	Errors     int           `json:"errors"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	PerSecond  float64       `json:"per_second"`
	P50        time.Duration `json:"p50_ns"`
	P99        time.Duration `json:"p99_ns"`
	FirstError string        `json:"first_error,omitempty"`
	// CPUPerRequest is the server process's user and system CPU time over
	// the load divided by its requests (for sale processing: over the sale
	// load and the drain, divided by the sales processed, their ingestion's
	// CPU included): steadier than throughput on shared cores.
	CPUPerRequest time.Duration `json:"server_cpu_per_request_ns,omitempty"`
	// DrainedAfter is, for sale processing, how long after the ingestion
	// load ended the last sale was processed.
	DrainedAfter time.Duration `json:"drained_after_load_ns,omitempty"`
}

// run keeps conns goroutines busy with do for d (or until n requests when n
// > 0) and measures throughput and latency. Throughput counts the measured
// parts only when an operation has an unmeasured setup.
func run(ctx context.Context, name string, conns int, d time.Duration, n int, do op) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		next      atomic.Int64
		errs      atomic.Int64
		firstErr  atomic.Value
		wg        sync.WaitGroup
		latencies = make([][]time.Duration, conns)
		busy      = make([]time.Duration, conns)
	)
	started := time.Now()
	for g := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && (n <= 0 || next.Add(1) <= int64(n)) {
				took, err := do(ctx)
				if ctx.Err() != nil && err != nil {
					return // the deadline cut the request: not a failure of the service
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				latencies[g] = append(latencies[g], took)
				busy[g] += took
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	r := result{Name: name, Requests: len(all), Errors: int(errs.Load()), Elapsed: elapsed}
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[min(len(all)-1, len(all)*99/100)]
		// Throughput over the time the goroutines spent in measured parts:
		// the wall clock when every request is measured whole.
		var total time.Duration
		for _, b := range busy {
			total += b
		}
		r.PerSecond = float64(len(all)) / (total.Seconds() / float64(conns))
	}
	if e, ok := firstErr.Load().(string); ok {
		r.FirstError = e
	}
	return r
}

// client is an HTTP client sized for conns connections to one host.
func client(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}
}

// call makes one request and decodes a JSON answer into out (when not nil);
// a status other than want is an error.
func call(ctx context.Context, hc *http.Client, method, url string, body any, auth func(*http.Request), want int, out any) (time.Duration, error) {
	var rd io.Reader
	if body != nil {
		raw, ok := body.([]byte)
		if !ok {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				return 0, err
			}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	started := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	took := time.Since(started)
	if err != nil {
		return took, err
	}
	if res.StatusCode != want {
		return took, fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, strings.TrimSpace(truncate(raw, 200)))
	}
	if out != nil {
		return took, json.Unmarshal(raw, out)
	}
	return took, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
