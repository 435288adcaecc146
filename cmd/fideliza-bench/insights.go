package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The insights page (issue 38): the panel draws its eight charts on the
// server from the dashboards' queries, so the page has rendered when its
// document has loaded and every chart section holds its drawing (or says
// the period has nothing). The dashboards load times it in headless
// Chromium, signed in as the analyst, over the last 365 days.

// insightsLoads is how many times the page is loaded at each size: the
// p50 of a few, after one load that warms the browser's cache of the
// page's stylesheet.
const insightsLoads = 5

// insightsCharts is how many charts the page draws.
const insightsCharts = 8

// insightsRow is the insights page's row in the dashboards' report, and
// insightsServedRow the part of it until the server had sent the document
// (the navigation's responseEnd - requestStart): the rest is the browser's.
const (
	insightsRow       = "insights page 365d"
	insightsServedRow = "insights page 365d, document served"
)

// chromium finds the browser the insights page is timed in: the load needs
// it, so its absence stops the run before anything grows.
func chromium() (string, error) {
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("the dashboards load times the insights page in headless Chromium, and there is none at " +
		"/usr/bin/chromium nor in PATH: install it (apt-get install chromium)")
}

// insightsBrowser is a headless Chromium tab signed in to the panel.
type insightsBrowser struct {
	tab    context.Context
	stop   func()
	base   string
	served []time.Duration // of each load, as the browser timed it
	err    error           // why it could not sign in
}

// insightsDrawn is what a loaded page says of itself.
type insightsDrawn struct {
	Charts int     `json:"charts"` // chart sections with their drawing or "nothing in this period"
	Served float64 `json:"served"` // ms from the request until the document's last byte
}

// openInsights starts the browser at path and signs in to the panel at
// base with token, as an analyst pastes it (on the panel's home: the
// insights page may be what fails). A browser that cannot sign in keeps
// why, and each measure reports it.
func openInsights(ctx context.Context, path, base, token string) *insightsBrowser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	b := &insightsBrowser{tab: tab, stop: func() { cancelTab(); cancelAlloc() }, base: base}
	err := chromedp.Do(tab,
		chromedp.Navigate(base+"/panel/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token),
	)
	if err == nil {
		var res *network.Response
		res, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS("#signin button")))
		if err == nil && res.Status != http.StatusOK {
			err = fmt.Errorf("signing in to the panel: HTTP %d", res.Status)
		}
	}
	if err != nil {
		b.err = fmt.Errorf("headless Chromium: %w", err)
	}
	return b
}

// load times one load of the insights page over the 365 days ending today
// in the tenant's time zone (the demo's, São Paulo): from navigation until
// the document has loaded with every chart drawn.
func (b *insightsBrowser) load(context.Context) (time.Duration, error) {
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	today := time.Now().In(loc)
	q := url.Values{"from": {today.AddDate(0, 0, -364).Format(time.DateOnly)}, "to": {today.Format(time.DateOnly)}}
	started := time.Now()
	res, err := chromedp.Run(b.tab, chromedp.NavigateResponse(b.base+"/panel/insights?"+q.Encode()))
	if err != nil {
		return 0, err
	}
	drawn, err := chromedp.Run(b.tab, chromedp.Evaluate[insightsDrawn](`({
		charts: [...document.querySelectorAll("section.chart")].filter(s => s.querySelector("svg, p.note")).length,
		served: (e => e.responseEnd - e.requestStart)(performance.getEntriesByType("navigation")[0])})`))
	took := time.Since(started)
	switch {
	case err != nil:
		return 0, err
	case res.Status != http.StatusOK:
		return 0, fmt.Errorf("insights page: HTTP %d", res.Status)
	case drawn.Charts != insightsCharts:
		return 0, fmt.Errorf("insights page: %d of %d charts drawn", drawn.Charts, insightsCharts)
	}
	b.served = append(b.served, time.Duration(drawn.Served*float64(time.Millisecond)))
	return took, nil
}

// measure loads the insights page insightsLoads times, after one that is
// not counted: the whole load's times and the document's.
func (b *insightsBrowser) measure(ctx context.Context, size int) (whole, served result) {
	whole = result{Name: fmt.Sprintf("%s at %d", insightsRow, size)}
	served = result{Name: fmt.Sprintf("%s at %d", insightsServedRow, size)}
	err := b.err
	if err == nil {
		_, err = b.load(ctx)
	}
	if err != nil {
		whole.Errors, whole.FirstError = 1, err.Error()
		return whole, served
	}
	b.served = nil
	whole = run(ctx, insightsRow, 1, 10*time.Minute, insightsLoads, b.load)
	whole.Name = fmt.Sprintf("%s at %d", insightsRow, size)
	if n := len(b.served); n > 0 {
		slices.Sort(b.served)
		served.Requests, served.P50, served.P99 = n, b.served[n/2], b.served[min(n-1, n*99/100)]
	}
	return whole, served
}

// insightsTarget: the page over 365 days renders in under a second at the
// largest size measured.
func (r dashReport) insightsTarget() []target {
	rs := r.Results[insightsRow]
	if len(rs) == 0 || len(r.Sizes) == 0 {
		return nil
	}
	x := rs[len(rs)-1]
	return []target{{Row: fmt.Sprintf("%s p50 at %d sales", insightsRow, r.Sizes[len(r.Sizes)-1]), Ratio: ms(x.P50) / 1000,
		Measured: fmt.Sprintf("%.1f ms", ms(x.P50)), Target: "< 1 s",
		Met: x.Requests > 0 && x.Errors == 0 && x.P50 < time.Second}}
}
