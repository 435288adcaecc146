package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/storage"
)

// TestGiftCardsIssueFromTheCLI: `giftcards issue` issues a batch and prints
// each code once (JSON and human forms), which the database does not hold;
// its refusals are the operation's.
func TestGiftCardsIssueFromTheCLI(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Presente", func(t *testing.T, u, tid string, logs *syncBuffer) {
		got := fideliza(t, logs, u, "giftcards", "issue", "--tenant", tid, "--count", "3", "--amount", "50.00",
			"--expires", "2030-12-31", "--inactive", "--note", "Natal")
		require.EqualValues(t, 3, got["count"])
		require.NotNil(t, got["batch_id"])
		cards := got["cards"].([]any)
		require.Len(t, cards, 3)
		first := cards[0].(map[string]any)
		require.Equal(t, [3]any{"50.00", "inactive", "2030-12-31T23:59:59Z"}, [3]any{first["amount"], first["status"], first["expires_at"]})
		code, ok := giftcard.NormalizeCode(first["code"].(string))
		require.True(t, ok, "a code of %d characters", giftcard.CodeLength)

		db, err := storage.Open(context.Background(), u)
		require.NoError(t, err)
		defer db.Close()
		require.Equal(t, []string{giftcard.HashCode(code)},
			queryStrings(t, db.SQL, "SELECT code_hash FROM gift_cards WHERE id = '"+first["id"].(string)+"'"), "the hash is kept, not the code")

		var out, errs strings.Builder
		cmd := newRootCommand(&out, &errs)
		cmd.SetArgs([]string{"--database-url", u, "giftcards", "issue", "--tenant", tid, "--amount", "25"})
		require.NoError(t, cmd.ExecuteContext(context.Background()))
		lines := strings.Split(out.String(), "\n")
		require.Contains(t, lines[0], "1 gift card(s) issued; their codes are shown only here")
		require.Regexp(t, `^[0-9A-Z]{4}(-[0-9A-Z]{4}){4}  gcd_[0-9a-z]{26}  R\$ 25\.00  active  expires `, lines[1])

		for _, args := range [][]string{
			{"--amount", "0"}, {"--amount", "dez"}, {"--amount", "10", "--count", "1001"}, {"--amount", "10", "--expires", "amanhã"},
		} {
			cmd := newRootCommand(&out, &errs)
			cmd.SetArgs(append([]string{"--database-url", u, "giftcards", "issue", "--tenant", tid}, args...))
			require.Error(t, cmd.ExecuteContext(context.Background()), "%v", args)
		}
	})
}
