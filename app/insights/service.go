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
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	// Scoring gives a campaign's predictive segment its members, the
	// audience its lift compares.
	Scoring *scoring.Service
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
