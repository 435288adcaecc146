package audiences

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/audience"
	"github.com/fideliza/fideliza/viewer"
)

// The bounds of a request that evaluates a rule over the tenant's customers
// (a preview, an audience saved), whoever sends it (docs/decisions.md,
// "Audiences' preview budget").
const (
	// RequestCost bounds the CEL cost (its units, as cel-go counts them)
	// of the evaluations in Go one request sums over its customers: well
	// under a second of CPU on an idle core (a unit is 50–150 ns). A rule
	// the database counts (where.go) spends none.
	RequestCost = 5_000_000
	// RequestTime bounds a request's evaluation, in the database or in Go.
	RequestTime = 20 * time.Second
	// PreviewsPerClient bounds the previews each client (OAuth client or
	// back-office user) has in flight at once, in each process.
	PreviewsPerClient = 2
	// previewRetry is when a preview refused for that bound may be sent
	// again.
	previewRetry = 2 * time.Second
)

// errTooLong is the cause of a request's context whose time is spent.
var errTooLong = errors.New("audiences: the request's time is spent")

// tooCostly is the error of a rule over a request's budget: the rule is
// refused, whatever the request.
func tooCostly(why string) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "audience_too_costly", Field: "rule",
		Message: "the rule costs too much to evaluate over this tenant's customers: " + why +
			"; simplify it (fewer or shorter macros over lists), or use what the database counts: comparisons of facts, in, &&, ||, !"}
}

// budget is what is left of a request's CEL cost; nil is no bound (the
// membership kept as facts change, and the periodic recomputation, which
// no client waits for).
type budget struct{ left uint64 }

// bounded is ctx bounded by RequestTime, and the request's budget of cost.
func bounded(ctx context.Context) (context.Context, context.CancelFunc, *budget) {
	ctx, cancel := context.WithTimeoutCause(ctx, RequestTime, errTooLong)
	return ctx, cancel, &budget{left: RequestCost}
}

// match tells whether r selects the customer of f, charging its cost to b.
// It stops when the request's context ends (its client left, or its time
// is spent: see spent) or its cost goes over the budget.
func (b *budget) match(ctx context.Context, r *audience.Rule, f *audience.Facts) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if b == nil {
		in, _ := r.Match(f)
		return in, nil
	}
	in, cost, _ := r.MatchCost(f)
	if cost > b.left {
		b.left = 0
		return false, tooCostly(fmt.Sprintf("evaluated customer by customer it costs more than the %d units of CEL's cost a request may spend", RequestCost))
	}
	b.left -= cost
	return in, nil
}

// spent is err as the request sees it: when ctx's time is spent (whatever
// failed then: the database's statement or an evaluation), the rule is too
// costly.
func spent(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errTooLong) {
		return tooCostly(fmt.Sprintf("its evaluation takes longer than the %s a request may take", RequestTime))
	}
	return err
}

// previews counts each client's previews in flight in this process.
type previews struct {
	mu      sync.Mutex
	running map[string]int
}

// admit lets the viewer's preview run, or refuses it when the viewer has
// PreviewsPerClient in flight; done ends the preview admitted.
func (p *previews) admit(ctx context.Context) (done func(), err error) {
	v, _ := viewer.FromContext(ctx)
	key := v.TenantID + "\x00" + string(v.Role) + "\x00" + v.Subject
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[key] >= PreviewsPerClient {
		return nil, &apperr.Error{Kind: apperr.KindRateLimited, Code: "too_many_previews", RetryAfter: previewRetry,
			Message: fmt.Sprintf("each client may have %d previews in flight at once; retry when one has answered", PreviewsPerClient)}
	}
	if p.running == nil {
		p.running = map[string]int{}
	}
	p.running[key]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.running[key]--; p.running[key] == 0 {
			delete(p.running, key)
		}
	}, nil
}
