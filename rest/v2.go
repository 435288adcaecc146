package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
)

// customerChurn is GET /v2/customers/{id}/churn: the customer's churn score
// now, under the tenant's newest model.
func (s *server) customerChurn(w http.ResponseWriter, r *http.Request) {
	sc, err := s.app.Insights.CustomerChurn(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	out := map[string]any{
		"customer_id": sc.CustomerID, "risk": sc.Risk, "p_alive": sc.PAlive, "churn_propensity": nil,
		"expected_purchases_90d": sc.ExpectedPurchases90d, "recency_days": sc.RecencyDays, "frequency": sc.Frequency,
		"monetary_value": decimalJSON(&sc.MonetaryValue), "model_fitted_at": optTimestamp(sc.ModelFittedAt),
	}
	if sc.PAlive != nil {
		out["churn_propensity"] = 1 - *sc.PAlive
	}
	if sc.Reason != "" {
		out["reason"] = sc.Reason
	}
	writeJSON(w, http.StatusOK, out)
}

// predictiveSegments is GET /v2/segments/predictive.
func (s *server) predictiveSegments(w http.ResponseWriter, r *http.Request) {
	segs, m, err := s.app.Insights.PredictiveSegments(r.Context())
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	data := make([]map[string]any, len(segs))
	for i, sg := range segs {
		th := map[string]any{"p_alive_from": sg.PAliveFrom, "p_alive_below": sg.PAliveBelow, "min_monetary_value": nil}
		if sg.MinMonetaryValue != nil {
			th["min_monetary_value"] = decimalJSON(sg.MinMonetaryValue)
		}
		data[i] = map[string]any{"key": sg.Key, "name": sg.Name, "description": sg.Description, "customers": sg.Customers,
			"thresholds": th}
	}
	var model any
	if m != nil {
		model = map[string]any{"fitted_at": timestamp(m.FittedAt), "customers": m.Customers,
			"parameters": map[string]float64{"r": m.R, "alpha": m.Alpha, "a": m.A, "b": m.B}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "model": model})
}

// predictiveSegmentCustomers is GET /v2/segments/predictive/{key}/customers:
// the segment's members, paginated as GET /v1/customers.
func (s *server) predictiveSegmentCustomers(w http.ResponseWriter, r *http.Request) {
	var problems apperr.Problems
	after, limit := pageQuery(r.URL.Query(), "cus_", &problems)
	if err := problems.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	conn, err := s.app.Customers.ListCustomers(r.Context(), customers.CustomerFilter{Predictive: chi.URLParam(r, "key")}, after, limit)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	s.writeCustomerPage(w, conn)
}
