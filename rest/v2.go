package rest

import (
	"context"
	"encoding/json"

	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/ent/customerscore"
)

// churnJSON is GET /v2/customers/{id}/churn: the customer's churn score
// now, under the tenant's newest model. Its fields are in the order of
// their names.
type churnJSON struct {
	ChurnPropensity      *float64           `json:"churn_propensity"`
	CustomerID           string             `json:"customer_id"`
	ExpectedPurchases90d *float64           `json:"expected_purchases_90d"`
	Frequency            int                `json:"frequency"`
	ModelFittedAt        *string            `json:"model_fitted_at"`
	MonetaryValue        *json.Number       `json:"monetary_value"`
	PAlive               *float64           `json:"p_alive"`
	Reason               string             `json:"reason,omitempty"`
	RecencyDays          *int               `json:"recency_days"`
	Risk                 customerscore.Risk `json:"risk"`
}

func renderChurn(sc *scoring.ChurnScore) churnJSON {
	out := churnJSON{
		CustomerID: sc.CustomerID, Risk: sc.Risk, PAlive: sc.PAlive, ExpectedPurchases90d: sc.ExpectedPurchases90d,
		RecencyDays: sc.RecencyDays, Frequency: sc.Frequency, MonetaryValue: decimalJSON(&sc.MonetaryValue),
		ModelFittedAt: optTimestamp(sc.ModelFittedAt), Reason: sc.Reason,
	}
	if sc.PAlive != nil {
		p := 1 - *sc.PAlive
		out.ChurnPropensity = &p
	}
	return out
}

// predictiveJSON is GET /v2/segments/predictive: the segments, and the
// model they come from (null before one is fitted). Its fields, and those
// of the types it holds, are in the order of their names.
type predictiveJSON struct {
	Data  []predictiveSegmentJSON `json:"data"`
	Model *churnModelJSON         `json:"model"`
}

type predictiveSegmentJSON struct {
	Customers   int            `json:"customers"`
	Description string         `json:"description"`
	Key         string         `json:"key"`
	Name        string         `json:"name"`
	Thresholds  thresholdsJSON `json:"thresholds"`
}

type thresholdsJSON struct {
	MinMonetaryValue *json.Number `json:"min_monetary_value"`
	PAliveBelow      *float64     `json:"p_alive_below"`
	PAliveFrom       *float64     `json:"p_alive_from"`
}

type churnModelJSON struct {
	Customers  int                `json:"customers"`
	FittedAt   string             `json:"fitted_at"`
	Parameters churnParameterJSON `json:"parameters"`
}

type churnParameterJSON struct {
	A     float64 `json:"a"`
	Alpha float64 `json:"alpha"`
	B     float64 `json:"b"`
	R     float64 `json:"r"`
}

// predictiveSegments reads the predictive segments and renders them.
func (s *server) predictiveSegments(ctx context.Context, _ struct{}) (predictiveJSON, error) {
	segs, m, err := s.app.Scoring.PredictiveSegments(ctx)
	if err != nil {
		return predictiveJSON{}, err
	}
	out := predictiveJSON{Data: make([]predictiveSegmentJSON, len(segs))}
	for i, sg := range segs {
		out.Data[i] = predictiveSegmentJSON{Key: sg.Key, Name: sg.Name, Description: sg.Description, Customers: sg.Customers,
			Thresholds: thresholdsJSON{PAliveFrom: sg.PAliveFrom, PAliveBelow: sg.PAliveBelow, MinMonetaryValue: decimalJSON(sg.MinMonetaryValue)}}
	}
	if m != nil {
		out.Model = &churnModelJSON{FittedAt: timestamp(m.FittedAt), Customers: m.Customers,
			Parameters: churnParameterJSON{R: m.R, Alpha: m.Alpha, A: m.A, B: m.B}}
	}
	return out, nil
}
