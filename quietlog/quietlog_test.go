package quietlog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/quietlog"
)

// TestFor: a library's INFO lines are written at DEBUG, so a process at the
// default level does not show them; its warnings and errors keep their
// level.
func TestFor(t *testing.T) {
	cases := []struct {
		name  string
		level slog.Level // the process's
		write func(*slog.Logger)
		want  string // "" for nothing written
	}{
		{"info at info", slog.LevelInfo, func(l *slog.Logger) { l.Info("producer: counts") }, ""},
		{"info at debug", slog.LevelDebug, func(l *slog.Logger) { l.Info("producer: counts") }, `"level":"DEBUG"`},
		{"warning at info", slog.LevelInfo, func(l *slog.Logger) { l.Warn("slow") }, `"level":"WARN"`},
		{"error at info", slog.LevelInfo, func(l *slog.Logger) { l.With("k", "v").Error("failed") }, `"level":"ERROR","msg":"failed","k":"v"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			c.write(quietlog.For(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: c.level}))))
			if c.want == "" {
				require.Empty(t, buf.String())
				return
			}
			require.True(t, strings.Contains(buf.String(), c.want), "%s", buf.String())
		})
	}
	require.Nil(t, quietlog.For(nil), "no logger: the library's default")
}
