// Package quietlog gives libraries (River's client and migrator) a logger
// whose INFO lines, routine reports such as the producer's counts every few
// seconds, are written at DEBUG; their warnings and errors stay.
package quietlog

import (
	"context"
	"log/slog"
)

// For returns log demoting INFO to DEBUG; nil stays nil (the library's own
// default).
func For(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(quieter{log.Handler()})
}

type quieter struct{ slog.Handler }

func demoted(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return q.Handler.Enabled(ctx, demoted(l))
}

func (q quieter) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demoted(r.Level)
	return q.Handler.Handle(ctx, r)
}

func (q quieter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(attrs)}
}
func (q quieter) WithGroup(name string) slog.Handler { return quieter{q.Handler.WithGroup(name)} }
