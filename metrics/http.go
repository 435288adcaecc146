package metrics

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// Unmatched is the route label of requests no route matched (404s and 405s
// of unknown paths): the raw path is never a label.
const Unmatched = "unmatched"

// HTTP is chi middleware counting and timing each request under the route
// pattern chi matched ("/v1/customers/{id}"), read once the handler ran.
func (r *Registry) HTTP(next http.Handler) http.Handler {
	if r == nil {
		return next
	}
	r.init()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, req.ProtoMajor)
		defer func() {
			// A panic that reaches here (http.ErrAbortHandler) is counted as
			// a 500 and goes on up.
			status := ww.Status()
			if p := recover(); p != nil {
				r.observeHTTP(routeOf(req), methodLabel(req.Method), http.StatusInternalServerError, time.Since(start).Seconds())
				panic(p)
			}
			if status == 0 {
				status = http.StatusOK
			}
			r.observeHTTP(routeOf(req), methodLabel(req.Method), status, time.Since(start).Seconds())
		}()
		next.ServeHTTP(ww, req)
	})
}

func routeOf(req *http.Request) string {
	rctx := chi.RouteContext(req.Context())
	if rctx == nil {
		return Unmatched
	}
	if p := rctx.RoutePattern(); p != "" {
		return p
	}
	return Unmatched
}

// methodLabel keeps the method label to the standard methods: any other
// method a client invents is "OTHER".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
