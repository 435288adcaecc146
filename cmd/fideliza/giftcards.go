package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/viewer"
)

func newGiftCardsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "giftcards", Short: "Issue gift cards"}
	var tenantID, amount, expires, note, store string
	var count int
	var inactive bool
	issue := &cobra.Command{
		Use:   "issue",
		Short: "Issue gift cards and print their codes, shown this once",
		Long: fmt.Sprintf("Issues --count cards (at most %d) of --amount R$ each in one transaction and prints each card's "+
			"code: only its hash and last four characters are kept, so the output is the only copy of the codes. "+
			"--inactive issues cards to be sold at a till, spendable once their sale is processed.", giftcards.MaxIssuedAtOnce),
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			in := giftcards.IssueInput{Count: &count, Inactive: inactive, Note: note, StoreCode: store}
			v, err := decimal.NewFromString(amount)
			if err != nil {
				return fmt.Errorf("--amount %q is not an amount in R$, such as 50.00", amount)
			}
			in.Amount = &v
			if expires != "" {
				at, err := expiry(expires)
				if err != nil {
					return err
				}
				in.ExpiresAt = &at
			}
			if err := requireTenant(cmd.Context(), a, tenantID); err != nil {
				return err
			}
			issued, err := a.GiftCards.IssueGiftCards(viewer.TenantContext(cmd.Context(), tenantID), in)
			if err != nil {
				return err
			}
			return printIssued(g, issued)
		}),
	}
	f := issue.Flags()
	f.StringVar(&tenantID, "tenant", "", "tenant id")
	f.IntVar(&count, "count", 1, "how many cards")
	f.StringVar(&amount, "amount", "", "each card's face value in R$, such as 50.00")
	f.StringVar(&expires, "expires", "", "when the cards expire: a date (2027-12-31, the end of that day in UTC) or an RFC 3339 instant; default 12 months from now")
	f.BoolVar(&inactive, "inactive", false, "issue the cards to be sold at a till: they hold nothing until their sale is processed")
	f.StringVar(&store, "store", "", "the store code the cards are issued for")
	f.StringVar(&note, "note", "", "a note kept with each card (the promotion, whom they are for)")
	_ = issue.MarkFlagRequired("tenant")
	_ = issue.MarkFlagRequired("amount")
	cmd.AddCommand(issue)
	return cmd
}

// expiry reads --expires: an RFC 3339 instant, or a date meaning the last
// instant of that day in UTC.
func expiry(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--expires %q is neither a date (2027-12-31) nor an RFC 3339 instant", v)
	}
	return d.Add(24*time.Hour - time.Second), nil
}

// printIssued prints the cards just issued: one JSON object with --json,
// else a line per card, its code first.
func printIssued(g *globals, issued *giftcards.IssuedCards) error {
	type card struct {
		ID        string `json:"id"`
		Code      string `json:"code"`
		Amount    string `json:"amount"`
		Status    string `json:"status"`
		ExpiresAt string `json:"expires_at"`
	}
	cards := make([]card, len(issued.Cards))
	var human strings.Builder
	fmt.Fprintf(&human, "%d gift card(s) issued", len(cards))
	if issued.BatchID != nil {
		fmt.Fprintf(&human, " in batch %s", *issued.BatchID)
	}
	human.WriteString("; their codes are shown only here:\n")
	for i, c := range issued.Cards {
		cards[i] = card{ID: c.Card.ID, Code: giftcard.FormatCode(c.Code), Amount: wallet.Reais(c.Card.InitialCents),
			Status: string(c.Card.Status), ExpiresAt: c.Card.ExpiresAt.UTC().Format(time.RFC3339)}
		fmt.Fprintf(&human, "%s  %s  R$ %s  %s  expires %s\n", cards[i].Code, cards[i].ID, cards[i].Amount, cards[i].Status, cards[i].ExpiresAt)
	}
	return g.print(map[string]any{"batch_id": issued.BatchID, "count": len(cards), "cards": cards}, strings.TrimSuffix(human.String(), "\n"))
}
