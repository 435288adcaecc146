package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/viewer"
)

type requestIDKey struct{}

// RequestID returns the correlation id of the request in ctx.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// correlate takes the caller's X-Correlation-Id (or X-Request-Id) when it is a
// sane token, or makes one, and echoes it as both headers.
func correlate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Correlation-Id")
		if !saneID(id) {
			id = r.Header.Get("X-Request-Id")
		}
		if !saneID(id) {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		if r.Header.Get("X-Correlation-Id") != "" {
			w.Header().Set("X-Correlation-Id", id)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func saneID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// accessLog writes one structured line per request, with its correlation id
// and the principal that made it: at DEBUG when it succeeded (a busy
// service would log nothing else), INFO for the client's errors, ERROR for
// the server's.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			who := &principal{}
			next.ServeHTTP(ww, r.WithContext(context.WithValue(r.Context(), principalKey{}, who)))
			level := slog.LevelDebug
			switch {
			case ww.Status() >= 500:
				level = slog.LevelError
			case ww.Status() >= 400:
				level = slog.LevelInfo
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", RequestID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("duration", time.Since(start)),
				slog.String("tenant_id", who.v.TenantID),
				slog.String("subject", who.v.Subject),
			)
		})
	}
}

// principal lets the authentication middleware, deeper in the chain, tell the
// access log who made the request.
type (
	principal    struct{ v viewer.Viewer }
	principalKey struct{}
)

func withViewer(r *http.Request, v viewer.Viewer) *http.Request {
	if p, ok := r.Context().Value(principalKey{}).(*principal); ok {
		p.v = v
	}
	return r.WithContext(viewer.NewContext(r.Context(), v))
}

// recoverer turns a panic into a 500 written by answer, in the error format
// of the interface, and logs the stack; the process goes on serving.
func recoverer(log *slog.Logger, answer func(http.ResponseWriter, *http.Request)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(p)
				}
				log.ErrorContext(r.Context(), "panic", "request_id", RequestID(r.Context()),
					"panic", p, "stack", string(debug.Stack()))
				answer(w, r)
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// internalV1 is the 500 of the /v1 interface (and of every path outside the
// point-of-sale one).
func internalV1(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusInternalServerError, v1Error{
		Error: "internal_error", Message: "an unexpected error occurred; quote request id " + RequestID(r.Context()),
	})
}

// internalProblem is the 500 of the point-of-sale interface.
func internalProblem(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, r, http.StatusInternalServerError, "internal-error",
		"an unexpected error occurred; quote the correlation id "+RequestID(r.Context()), nil)
}

// statusClientClosed is logged for a request whose client went away before
// the answer (nginx's 499); the client never sees it.
const statusClientClosed = 499

// unexpected handles an error without a kind. When the client hung up (or
// its deadline passed) nobody reads an answer and it is no failure of the
// service: it is logged as such and unexpected answers false. Otherwise it
// logs the error and answers true: the caller writes its 500.
// logCause logs what lies under an operation's error, when something does
// (a database failing to serve): the client is told only the kind.
func (s *server) logCause(r *http.Request, e *apperr.Error) {
	if e.Cause != nil {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(r.Context()), "code", e.Code, "error", e.Cause)
	}
}

func (s *server) unexpected(w http.ResponseWriter, r *http.Request, err error) bool {
	if r.Context().Err() != nil {
		s.log.InfoContext(r.Context(), "client went away", "request_id", RequestID(r.Context()), "error", err)
		w.WriteHeader(statusClientClosed)
		return false
	}
	s.log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(r.Context()), "error", err)
	return true
}

// traceRoute names the request's server span after the route it matched,
// once the router has matched it (installed when tracing is on).
func traceRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if rctx := chi.RouteContext(r.Context()); rctx != nil {
			tracing.Route(r.Context(), r.Method, rctx.RoutePattern())
		}
	})
}
