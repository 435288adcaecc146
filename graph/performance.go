package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/ent"
)

// Campaign.performance is read a page at a time: the campaigns a
// connection returns in an operation form a page, and the first of them
// whose performance is asked reads it for the whole page (a statement for
// the rollups' whole days, one for each edge of the period), which the
// others then take. Read one by one, each campaign of a page would take a
// connection of its own at once, and a page of a hundred would empty the
// pool.
// A campaign reached otherwise (a redemption's, a node) is read alone.

// performancePages is one operation's pages of campaigns.
type performancePages struct {
	mu    sync.Mutex
	pages map[string]*performancePage // by campaign id
}

// performancePage is a page of campaigns and the reads of their
// performance, by period.
type performancePage struct {
	ids   []string
	mu    sync.Mutex
	reads map[performancePeriod]*performanceRead
}

// performancePeriod is a performance field's arguments, as instants in
// RFC 3339; "" stands for an open side.
type performancePeriod struct{ from, to string }

func periodBound(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// performanceRead is the read of a page's performance over a period, done
// by the first campaign that asks; done closes when sums and err are set.
type performanceRead struct {
	done chan struct{}
	sums map[string]*insights.CampaignPerformance
	err  error
}

type performancePagesKey struct{}

// withPerformancePages gives an operation its pages of campaigns.
func withPerformancePages(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, performancePagesKey{}, &performancePages{pages: map[string]*performancePage{}}))
}

// addPerformancePage records the campaigns of a connection as a page of
// ctx's operation.
func addPerformancePage(ctx context.Context, conn *ent.CampaignConnection) {
	pp, _ := ctx.Value(performancePagesKey{}).(*performancePages)
	if pp == nil || conn == nil || len(conn.Edges) == 0 {
		return
	}
	page := &performancePage{reads: map[performancePeriod]*performanceRead{}}
	for _, e := range conn.Edges {
		if e.Node != nil {
			page.ids = append(page.ids, e.Node.ID)
		}
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	for _, id := range page.ids {
		pp.pages[id] = page
	}
}

// campaignPerformance is the performance of c within [from, to): read with
// its page's when a connection of the operation returned it, else alone.
func (r *campaignResolver) campaignPerformance(ctx context.Context, c *ent.Campaign, from, to *time.Time) (*insights.CampaignPerformance, error) {
	var page *performancePage
	if pp, _ := ctx.Value(performancePagesKey{}).(*performancePages); pp != nil {
		pp.mu.Lock()
		page = pp.pages[c.ID]
		pp.mu.Unlock()
	}
	if page == nil {
		sums, err := r.app.Insights.CampaignsPerformance(ctx, []string{c.ID}, from, to)
		if err != nil {
			return nil, err
		}
		return sums[c.ID], nil
	}
	period := performancePeriod{from: periodBound(from), to: periodBound(to)}
	page.mu.Lock()
	read, started := page.reads[period]
	if !started {
		read = &performanceRead{done: make(chan struct{})}
		page.reads[period] = read
	}
	page.mu.Unlock()
	if !started {
		func() {
			defer close(read.done) // even when the read panics: the others then see no sums
			read.sums, read.err = r.app.Insights.CampaignsPerformance(ctx, page.ids, from, to)
		}()
	}
	select {
	case <-read.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if read.err != nil {
		return nil, read.err
	}
	if read.sums == nil {
		return nil, errors.New("the performance of the campaign's page could not be read")
	}
	return read.sums[c.ID], nil
}
