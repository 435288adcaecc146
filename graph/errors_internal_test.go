package graph

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
)

// TestEveryErrorKindInGraphQL: GraphQL carries each kind's operation code in
// extensions.code (the REST code), and hides causes of errors of no kind.
func TestEveryErrorKindInGraphQL(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, k := range apperr.Kinds {
		e := presentError(context.Background(), log, &apperr.Error{Kind: k, Code: "some_code", Message: "what went wrong", Field: "name"})
		require.Equal(t, "some_code", e.Extensions["code"], "kind %s", k)
		require.Equal(t, "name", e.Extensions["field"])
		require.Equal(t, "what went wrong", e.Message)
	}
	e := presentError(context.Background(), log, errors.New("database on fire"))
	require.Equal(t, "internal_error", e.Extensions["code"])
	require.NotContains(t, e.Message, "fire")
}
