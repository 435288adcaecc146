package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// exportCustomer is GET /v1/customers/{id}/export, the data subject's copy
// of a customer's data (see App.WriteCustomerExport). An error before the
// first byte is answered as such; after it, the document ends early (the
// client sees invalid JSON, and the log says why).
func (s *server) exportCustomer(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	begun := false
	err := s.app.Privacy.WriteCustomerExport(r.Context(), id, w, func() {
		begun = true
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="customer-`+id+`.json"`)
	})
	switch {
	case err != nil && !begun:
		s.writeV1Error(w, r, err)
	case err != nil:
		s.log.ErrorContext(r.Context(), "customer export stopped", "request_id", RequestID(r.Context()), "customer_id", id, "error", err)
	}
}
