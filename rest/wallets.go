package rest

import (
	"context"
	"encoding/json"

	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
)

// money renders cents as /v1 renders money: a JSON number in R$, here with
// exactly two decimal places.
func money(cents int64) json.Number { return json.Number(wallet.Reais(cents)) }

// walletsJSON is GET /v1/customers/{id}/wallets.
type walletsJSON struct {
	CustomerID string       `json:"customer_id"`
	Data       []walletJSON `json:"data"`
}

type walletJSON struct {
	Unit            string            `json:"unit"`
	Balance         json.Number       `json:"balance"`
	Pending         json.Number       `json:"pending"`
	Spendable       json.Number       `json:"spendable"`
	Debt            json.Number       `json:"debt"`
	ExpiringSoonest *walletExpiryJSON `json:"expiring_soonest"`
	GiftCard        *walletCardJSON   `json:"gift_card"`
}

// walletCardJSON names the card of a gift_card wallet.
type walletCardJSON struct {
	ID        string `json:"id"`
	CodeLast4 string `json:"code_last4"`
}

type walletExpiryJSON struct {
	Amount    json.Number `json:"amount"`
	ExpiresAt string      `json:"expires_at"`
}

func renderWallets(customerID string, bs []wallets.Balance) walletsJSON {
	out := walletsJSON{CustomerID: customerID, Data: make([]walletJSON, len(bs))}
	for i, b := range bs {
		out.Data[i] = walletJSON{Unit: string(b.Unit), Balance: money(b.Balance), Pending: money(b.Pending),
			Spendable: money(b.Spendable), Debt: money(b.Debt)}
		if b.Expiring != nil {
			out.Data[i].ExpiringSoonest = &walletExpiryJSON{Amount: money(b.Expiring.Cents), ExpiresAt: timestamp(b.Expiring.ExpiresAt)}
		}
		if c := b.GiftCard; c != nil {
			out.Data[i].GiftCard = &walletCardJSON{ID: c.ID, CodeLast4: c.CodeLast4}
		}
	}
	return out
}

// walletEntriesRequest is GET /v1/customers/{id}/wallets/{wallet}/entries.
type walletEntriesRequest struct {
	customerID string
	unit       wallet.Unit
	paged[wallets.EntriesFilter]
}

func readWalletEntries(b *binder) walletEntriesRequest {
	q := walletEntriesRequest{customerID: pathID(b), unit: wallet.Unit(b.path("wallet"))}
	q.pageRequest = b.page("wtx_")
	q.filter = wallets.EntriesFilter{
		From: instant(&b.problems, "from", b.query("from"), dateOrDateTime),
		To:   instant(&b.problems, "to", b.query("to"), dateOrDateTime),
	}
	return q
}

func (s *server) walletEntries(ctx context.Context, q walletEntriesRequest) (*ent.WalletEntryConnection, error) {
	return s.app.Wallets.Entries(ctx, q.customerID, q.unit, q.filter, q.after, q.limit)
}

// walletEntriesJSON is a page of a wallet's statement.
type walletEntriesJSON struct {
	CustomerID string `json:"customer_id"`
	Wallet     string `json:"wallet"`
	listJSON[walletEntryJSON]
}

type walletEntryJSON struct {
	ID           string      `json:"id"`
	Kind         string      `json:"kind"`
	Amount       json.Number `json:"amount"`
	BalanceAfter json.Number `json:"balance_after"`
	DebtAfter    json.Number `json:"debt_after"`
	Source       sourceJSON  `json:"source"`
	StoreCode    *string     `json:"store_code"`
	Reason       string      `json:"reason"`
	PendingUntil *string     `json:"pending_until"`
	ExpiresAt    *string     `json:"expires_at"`
	CreatedAt    string      `json:"created_at"`
}

func renderWalletEntries(q walletEntriesRequest, conn *ent.WalletEntryConnection) walletEntriesJSON {
	return walletEntriesJSON{CustomerID: q.customerID, Wallet: string(q.unit), listJSON: pageOf(conn.Edges, conn.PageInfo, conn.TotalCount,
		func(edge *ent.WalletEntryEdge) walletEntryJSON {
			e := edge.Node
			out := walletEntryJSON{
				ID: e.ID, Kind: string(e.Kind), Amount: money(e.AmountCents), BalanceAfter: money(e.BalanceAfterCents),
				DebtAfter: money(e.DebtAfterCents), Source: sourceJSON{Kind: string(e.SourceKind), ID: e.SourceID},
				Reason: e.Reason, PendingUntil: optTimestamp(e.PendingUntil), ExpiresAt: optTimestamp(e.ExpiresAt),
				CreatedAt: timestamp(e.CreatedAt),
			}
			if e.StoreCode != "" {
				out.StoreCode = &e.StoreCode
			}
			return out
		})}
}
