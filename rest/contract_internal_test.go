package rest

import (
	"net/http"
	"testing"

	"github.com/fideliza/fideliza/openapi/openapitest"
)

// contractCheck wraps a test server's handler so that every response to an
// operation of the OpenAPI documents (openapi/v1.yaml, openapi/pos.yaml) is
// checked against them: a response that drifts from its document fails tb.
// Benchmarks are left unwrapped, as they measure the service, not the
// validator. The tests of package rest_test have the same helper
// (contract_test.go).
func contractCheck(tb testing.TB, h http.Handler) http.Handler {
	if _, ok := tb.(*testing.B); ok {
		return h
	}
	return openapitest.Middleware(tb, h)
}
