package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
)

// newDataKeyCommands are the keys subcommands of the data key documents and
// signing keys are sealed with.
func newDataKeyCommands(g *globals) []*cobra.Command {
	create := &cobra.Command{
		Use:   "create-data",
		Short: "Create the data key file documents and signing keys are sealed with (--data-key-file): for PostgreSQL, before the first start; give every process a copy",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.dataKeyFile == "" {
				return errors.New("--data-key-file (FIDELIZA_DATA_KEY_FILE) names the file to create")
			}
			if err := sealed.Create(g.dataKeyFile); err != nil {
				return err
			}
			return g.print(map[string]string{"data_key_file": g.dataKeyFile, "key_id": "k1"},
				"created "+g.dataKeyFile+" (mode 0600): back it up apart from the database, for without it the documents and signing keys cannot be read")
		},
	}
	add := &cobra.Command{
		Use: "add-data",
		Short: "Add a data key to the file, staged: every process can open what it seals, but it seals only after " +
			"keys rotate-data; for a key file copied to each machine, copy the file everywhere between the two",
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := storage.DataKeyPath(g.databaseURL, g.dataKeyFile)
			if err != nil {
				return err
			}
			id, err := sealed.AddKey(path, true)
			if err != nil {
				return err
			}
			return g.print(map[string]any{"data_key_file": path, "key_id": id, "staged": true},
				fmt.Sprintf("key %s added to %s, staged: give every process this file, then run keys rotate-data", id, path))
		},
	}
	rotate := &cobra.Command{
		Use: "rotate-data",
		Short: "Make the staged data key (keys add-data) or a new one seal, and seal every document and signing key again under it, in batches; " +
			"interrupted, run it again to finish. Other processes read the file again within a second",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			var bar *progressbar.ProgressBar
			r, err := a.DB.RotateDataKey(cmd.Context(), func(done, total int) {
				if bar == nil {
					bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(g.stderr),
						progressbar.OptionSetDescription("sealing documents and signing keys"), progressbar.OptionShowCount(),
						progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
				}
				_ = bar.Set(done)
			})
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return fmt.Errorf("after %d documents and signing keys (run it again to finish): %w", r.Resealed, err)
			}
			human := fmt.Sprintf("%d documents and signing keys sealed under the new key %s", r.Resealed, r.KeyID)
			if r.Resumed {
				human = fmt.Sprintf("%d documents and signing keys were not under key %s yet and now are; run it again to rotate to a new key", r.Resealed, r.KeyID)
			}
			return g.print(map[string]any{"key_id": r.KeyID, "resealed": r.Resealed, "promoted": r.Promoted, "resumed": r.Resumed}, human)
		}),
	}
	return []*cobra.Command{create, add, rotate}
}
