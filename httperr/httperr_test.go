package httperr_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
)

// TestEveryKindHasAStatus: a new kind without a status fails here (and the
// exhaustive linter flags the switch).
func TestEveryKindHasAStatus(t *testing.T) {
	for _, k := range apperr.Kinds {
		s := httperr.Status(k)
		require.NotEqual(t, http.StatusInternalServerError, s, "kind %s has no status", k)
		require.True(t, s >= 400 && s < 600, "kind %s: %d", k, s)
	}
	require.Equal(t, http.StatusInternalServerError, httperr.Status(0))
}
