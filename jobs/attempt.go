package jobs

import "context"

// Attempt is which attempt of its job an operation runs: the worker puts
// it in the operation's context, so that every operation of a job has the
// one signature func(ctx, args) error and reads the attempt only when its
// last failure must be recorded for good (a sale left FAILED, an import
// ended failed, a webhook delivery failed).
type Attempt struct {
	N   int // 1 for the first attempt
	Max int // the job's MaxAttempts
}

// Last says no attempt follows this one. An operation called outside a
// job (the demo, the CLI, a test) runs no job's last attempt.
func (a Attempt) Last() bool { return a.Max > 0 && a.N >= a.Max }

type attemptKey struct{}

// WithAttempt returns ctx carrying the attempt a.
func WithAttempt(ctx context.Context, a Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// AttemptOf is the attempt ctx carries: the zero Attempt outside a job.
func AttemptOf(ctx context.Context) Attempt {
	a, _ := ctx.Value(attemptKey{}).(Attempt)
	return a
}
