package scoring

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/predicate"
)

// PredictiveSegment is a segment computed from the churn scores.
type PredictiveSegment struct {
	Key, Name, Description string
	Customers              int
	// Thresholds are what membership takes: p_alive bounds, and for
	// at_risk_high_value the least monetary value.
	PAliveFrom, PAliveBelow *float64
	MinMonetaryValue        *decimal.Decimal
}

// PredictiveSegmentKeys are the keys of the predictive segments, in the
// order they are listed.
var PredictiveSegmentKeys = []string{"churn_risk_high", "churn_risk_medium", "churn_risk_low", "at_risk_high_value"}

// predictiveSegment describes the segment of key and its members' score
// predicate; ok is false for an unknown key.
func (a *Service) predictiveSegment(ctx context.Context, key string) (PredictiveSegment, predicate.CustomerScore, bool, error) {
	switch key {
	case "churn_risk_high":
		return PredictiveSegment{Key: key, Name: "High churn risk", PAliveBelow: opt.Of(churnMediumRisk).Ptr(),
				Description: "Customers unlikely to be still active (p_alive below 0.4): win them back."},
			customerscore.RiskEQ(customerscore.RiskHigh), true, nil
	case "churn_risk_medium":
		return PredictiveSegment{Key: key, Name: "Medium churn risk", PAliveFrom: opt.Of(churnMediumRisk).Ptr(), PAliveBelow: opt.Of(churnLowRisk).Ptr(),
				Description: "Customers who may be drifting away (p_alive from 0.4 to below 0.7)."},
			customerscore.RiskEQ(customerscore.RiskMedium), true, nil
	case "churn_risk_low":
		return PredictiveSegment{Key: key, Name: "Low churn risk", PAliveFrom: opt.Of(churnLowRisk).Ptr(),
				Description: "Customers likely still active (p_alive from 0.7)."},
			customerscore.RiskEQ(customerscore.RiskLow), true, nil
	case "at_risk_high_value":
		seg := PredictiveSegment{Key: key, Name: "High value at risk", PAliveBelow: opt.Of(churnLowRisk).Ptr(),
			Description: "Customers at medium or high churn risk whose average purchase is in the top quarter of the tenant's."}
		m, err := a.latestChurnModel(ctx)
		if err != nil {
			return PredictiveSegment{}, nil, false, err
		}
		if m != nil {
			seg.MinMonetaryValue = &m.HighValueThreshold
		}
		return seg, customerscore.And(customerscore.RiskIn(customerscore.RiskMedium, customerscore.RiskHigh),
			customerscore.HighValue(true)), true, nil
	}
	return PredictiveSegment{}, nil, false, nil
}

// PredictiveSegments lists the predictive segments of the viewer's tenant
// with their members counted, and the model the scores come from (nil when
// none is fitted).
func (a *Service) PredictiveSegments(ctx context.Context) ([]PredictiveSegment, *ent.ChurnModel, error) {
	if err := Rules.PredictiveSegments.Allow(ctx); err != nil {
		return nil, nil, err
	}
	m, err := a.latestChurnModel(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]PredictiveSegment, 0, len(PredictiveSegmentKeys))
	for _, key := range PredictiveSegmentKeys {
		seg, members, _, err := a.predictiveSegment(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		if seg.Customers, err = a.k.DB.Ent.CustomerScore.Query().Where(members).Count(ctx); err != nil {
			return nil, nil, err
		}
		out = append(out, seg)
	}
	return out, m, nil
}

// PredictiveMembers is the customer predicate of a predictive segment; an
// unknown key is not found.
func (a *Service) PredictiveMembers(ctx context.Context, key string) (predicate.Customer, error) {
	_, members, ok, err := a.predictiveSegment(ctx, key)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, apperr.NotFound("predictive segment")
	}
	return customer.HasScoreWith(members), nil
}
