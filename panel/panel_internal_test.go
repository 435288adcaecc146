package panel

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
)

// TestEveryErrorKindInThePanel: the panel shows each kind with its one
// status and the operation's message.
func TestEveryErrorKindInThePanel(t *testing.T) {
	p := &panel{log: slog.New(slog.DiscardHandler)}
	r := httptest.NewRequest(http.MethodGet, "/panel", nil)
	for _, k := range apperr.Kinds {
		status, msg := p.explain(r, &apperr.Error{Kind: k, Code: "some_code", Message: "what went wrong"})
		require.Equal(t, httperr.Status(k), status, "kind %s", k)
		require.Equal(t, "What went wrong.", msg)
	}
	status, msg := p.explain(r, errors.New("database on fire"))
	require.Equal(t, http.StatusInternalServerError, status)
	require.NotContains(t, msg, "fire")
}
