package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// newDataKeyCommands are the keys subcommands of the data key documents are
// sealed with.
func newDataKeyCommands(g *globals) []*cobra.Command {
	create := &cobra.Command{
		Use:   "create-data",
		Short: "Create the data key file documents are sealed with (--data-key-file): for PostgreSQL, before the first start; give every process a copy",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.dataKeyFile == "" {
				return errors.New("--data-key-file (FIDELIZA_DATA_KEY_FILE) names the file to create")
			}
			if err := sealed.Create(g.dataKeyFile); err != nil {
				return err
			}
			return g.print(map[string]string{"data_key_file": g.dataKeyFile, "key_id": "k1"},
				"created "+g.dataKeyFile+" (mode 0600): back it up with the database, for without it the documents cannot be read")
		},
	}
	rotate := &cobra.Command{
		Use: "rotate-data",
		Short: "Add a new data key and seal every document again under it, in batches; interrupted, run it again to finish. " +
			"Other processes read the new key from the file within a second: with PostgreSQL, run it where every process reads the same file",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			ctx := cmd.Context()
			remaining, err := a.DB.RemainingToReseal(ctx)
			if err != nil {
				return err
			}
			resumed := remaining > 0
			if !resumed {
				if _, err := sealed.AddKey(sealed.Path()); err != nil {
					return err
				}
				// Values other processes seal meanwhile under the old key are
				// caught by the second pass below.
				select {
				case <-time.After(2 * sealed.ReloadEvery):
				case <-ctx.Done():
					return ctx.Err()
				}
				if remaining, err = a.DB.RemainingToReseal(ctx); err != nil {
					return err
				}
			}
			key, err := sealed.CurrentKeyID()
			if err != nil {
				return err
			}
			bar := progressbar.NewOptions(remaining, progressbar.OptionSetWriter(g.stderr),
				progressbar.OptionSetDescription("sealing under "+key), progressbar.OptionShowCount(),
				progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
			n, err := a.DB.Reseal(ctx, func(done, _ int) { _ = bar.Set(done) })
			_ = bar.Finish()
			if err != nil {
				return fmt.Errorf("after %d documents (run it again to finish): %w", n, err)
			}
			late, err := a.DB.Reseal(ctx, nil)
			if err != nil {
				return err
			}
			human := fmt.Sprintf("%d documents sealed under the new key %s", n+late, key)
			if resumed {
				human = fmt.Sprintf("%d documents were not under key %s yet and now are; run it again to rotate to a new key", n+late, key)
			}
			return g.print(map[string]any{"key_id": key, "resealed": n + late, "resumed": resumed}, human)
		}),
	}
	return []*cobra.Command{create, rotate}
}
