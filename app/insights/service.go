// Package insights is the reporting context: the dashboards and their
// rollups, the campaigns' performance and lift, points spent and the top
// customers. It sits on the top floor: it reads the contexts it reports
// on, and none of them reads it.
package insights

import (
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/scoring"
)

// Service owns the operations of the insights context.
type Service struct {
	*kernel.Kernel
	// Scoring gives a campaign's predictive segment its members, the
	// audience its lift compares.
	Scoring *scoring.Service
}
