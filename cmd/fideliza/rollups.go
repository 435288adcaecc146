package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
)

// newRollupsCommand rebuilds the dashboards' rollups (issue 38) from the
// rows.
func newRollupsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "rollups", Short: "The dashboards' daily rollups"}
	var tenantID string
	rebuild := &cobra.Command{
		Use: "rebuild",
		Short: "Count a tenant's rollups (every tenant's without --tenant) again from its sales, redemptions and ledger, " +
			"in its time zone, one transaction per tenant: the dashboards read the previous ones until it commits",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			started := time.Now()
			ids, err := a.Insights.RebuildRollups(cmd.Context(), tenantID)
			if err != nil {
				return err
			}
			took := time.Since(started).Round(time.Millisecond)
			return g.print(map[string]any{"tenants": ids, "seconds": took.Seconds()},
				fmt.Sprintf("rollups rebuilt in %v: %s", took, strings.Join(ids, ", ")))
		}),
	}
	rebuild.Flags().StringVar(&tenantID, "tenant", "", "the tenant id; every tenant when absent")
	cmd.AddCommand(rebuild)
	return cmd
}
