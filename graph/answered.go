package graph

import (
	"context"
	"sync"
)

// Answered keeps the errors GraphQL answered to requests made in this
// process (the panel's pages ask it), as the operations returned them:
// over the wire they are only a message and a code, and the caller answers
// them with their kind's status (httperr), as its own operations' errors.
type Answered struct {
	mu   sync.Mutex
	errs []error
}

type answeredKey struct{}

// WithAnswered has the GraphQL requests made with ctx keep their errors in
// a.
func WithAnswered(ctx context.Context, a *Answered) context.Context {
	return context.WithValue(ctx, answeredKey{}, a)
}

// First is the first error answered; err when there is none.
func (a *Answered) First(err error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.errs) > 0 {
		return a.errs[0]
	}
	return err
}

// keepAnswered keeps err in ctx's Answered, when it has one.
func keepAnswered(ctx context.Context, err error) {
	if a, _ := ctx.Value(answeredKey{}).(*Answered); a != nil {
		a.mu.Lock()
		a.errs = append(a.errs, err)
		a.mu.Unlock()
	}
}
