package rest

import (
	"encoding/json"

	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ent"
)

// readIssue reads POST /v1/gift-cards: one card, or count of them.
func readIssue(b *binder) giftcards.IssueInput {
	body := jsonBody[struct {
		Count      *int        `json:"count"`
		Amount     *jsonNumber `json:"amount"`
		ExpiresAt  string      `json:"expires_at"`
		Inactive   bool        `json:"inactive"`
		CustomerID string      `json:"customer_id"`
		StoreCode  string      `json:"store_code"`
		Note       string      `json:"note"`
	}](b)
	p := &b.problems
	return giftcards.IssueInput{Count: body.Count, Amount: number(p, "amount", body.Amount),
		ExpiresAt: instant(p, "expires_at", body.ExpiresAt, dateTime), Inactive: body.Inactive,
		CustomerID: body.CustomerID, StoreCode: body.StoreCode, Note: body.Note}
}

// readLookup reads POST /v1/gift-cards/lookup: the code in the body, never
// in a URL that logs keep.
func readLookup(b *binder) string {
	return jsonBody[struct {
		Code string `json:"code"`
	}](b).Code
}

func readGiftCardPage(b *binder) paged[giftcards.CardsFilter] {
	return paged[giftcards.CardsFilter]{pageRequest: b.page("gcd_"), filter: giftcards.CardsFilter{
		Status: b.query("status"), CustomerID: b.query("customer_id"), BatchID: b.query("batch_id")}}
}

// readLoad reads POST /v1/gift-cards/{id}/load.
func readLoad(b *binder) onPath[giftcards.LoadInput] {
	body := jsonBody[struct {
		Amount    *jsonNumber `json:"amount"`
		LoadID    string      `json:"load_id"`
		StoreCode string      `json:"store_code"`
		Reason    string      `json:"reason"`
	}](b)
	return onPath[giftcards.LoadInput]{id: pathID(b), in: giftcards.LoadInput{Amount: number(&b.problems, "amount", body.Amount),
		LoadID: body.LoadID, StoreCode: body.StoreCode, Reason: body.Reason}}
}

// readBind reads POST /v1/gift-cards/{id}/bind.
func readBind(b *binder) onPath[string] {
	return onPath[string]{id: pathID(b), in: jsonBody[struct {
		CustomerID string `json:"customer_id"`
	}](b).CustomerID}
}

// readTransfer reads POST /v1/gift-cards/{id}/transfer.
func readTransfer(b *binder) onPath[giftcards.TransferInput] {
	body := jsonBody[struct {
		ToGiftCardID string      `json:"to_gift_card_id"`
		Amount       *jsonNumber `json:"amount"`
		TransferID   string      `json:"transfer_id"`
		StoreCode    string      `json:"store_code"`
		Reason       string      `json:"reason"`
	}](b)
	return onPath[giftcards.TransferInput]{id: pathID(b), in: giftcards.TransferInput{ToGiftCardID: body.ToGiftCardID,
		Amount: number(&b.problems, "amount", body.Amount), TransferID: body.TransferID, StoreCode: body.StoreCode, Reason: body.Reason}}
}

// readCancel reads POST /v1/gift-cards/{id}/cancel.
func readCancel(b *binder) onPath[string] {
	return onPath[string]{id: pathID(b), in: jsonBody[struct {
		Reason string `json:"reason"`
	}](b).Reason}
}

// giftCardJSON is a card as /v1 shows it: never its code.
type giftCardJSON struct {
	ID            string      `json:"id"`
	CodeLast4     string      `json:"code_last4"`
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	InitialAmount json.Number `json:"initial_amount"`
	Loaded        json.Number `json:"loaded"`
	Redeemed      json.Number `json:"redeemed"`
	CustomerID    *string     `json:"customer_id"`
	BatchID       *string     `json:"batch_id"`
	StoreCode     *string     `json:"store_code"`
	Note          string      `json:"note"`
	ExpiresAt     string      `json:"expires_at"`
	ActivatedAt   *string     `json:"activated_at"`
	CancelledAt   *string     `json:"cancelled_at"`
	CreatedAt     string      `json:"created_at"`
}

func renderGiftCard(c *ent.GiftCard) giftCardJSON {
	return giftCardJSON{ID: c.ID, CodeLast4: c.CodeLast4, Status: string(c.Status), Balance: money(c.BalanceCents),
		InitialAmount: money(c.InitialCents), Loaded: money(c.LoadedCents), Redeemed: money(c.RedeemedCents),
		CustomerID: c.CustomerID, BatchID: c.BatchID, StoreCode: optString(c.StoreCode), Note: c.Note,
		ExpiresAt: timestamp(c.ExpiresAt), ActivatedAt: optTimestamp(c.ActivatedAt), CancelledAt: optTimestamp(c.CancelledAt),
		CreatedAt: timestamp(c.CreatedAt)}
}

// optString is s, null when empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func giftCardPage(conn *ent.GiftCardConnection) listJSON[giftCardJSON] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.GiftCardEdge) giftCardJSON { return renderGiftCard(e.Node) })
}

// issuedJSON is the answer of issuing: every card with its code, shown
// this once.
type issuedJSON struct {
	BatchID *string          `json:"batch_id"`
	Data    []issuedCardJSON `json:"data"`
}

type issuedCardJSON struct {
	Code     string       `json:"code"`
	GiftCard giftCardJSON `json:"gift_card"`
}

func renderIssued(in *giftcards.IssuedCards) issuedJSON {
	out := issuedJSON{BatchID: in.BatchID, Data: make([]issuedCardJSON, len(in.Cards))}
	for i, c := range in.Cards {
		out.Data[i] = issuedCardJSON{Code: giftcard.FormatCode(c.Code), GiftCard: renderGiftCard(c.Card)}
	}
	return out
}

// giftCardEntryJSON is a line of a card's statement.
type giftCardEntryJSON struct {
	ID           string      `json:"id"`
	Kind         string      `json:"kind"`
	Amount       json.Number `json:"amount"`
	BalanceAfter json.Number `json:"balance_after"`
	Source       sourceJSON  `json:"source"`
	StoreCode    *string     `json:"store_code"`
	Reason       string      `json:"reason"`
	CreatedAt    string      `json:"created_at"`
}

func renderGiftCardEntry(e *ent.GiftCardEntry) *giftCardEntryJSON {
	if e == nil {
		return nil
	}
	return &giftCardEntryJSON{ID: e.ID, Kind: string(e.Kind), Amount: money(e.AmountCents), BalanceAfter: money(e.BalanceAfterCents),
		Source: sourceJSON{Kind: string(e.SourceKind), ID: &e.SourceID}, StoreCode: optString(e.StoreCode), Reason: e.Reason,
		CreatedAt: timestamp(e.CreatedAt)}
}

// giftCardEntriesJSON is a page of a card's statement.
type giftCardEntriesJSON struct {
	GiftCardID string `json:"gift_card_id"`
	listJSON[*giftCardEntryJSON]
}

func renderGiftCardEntries(q paged[string], conn *ent.GiftCardEntryConnection) giftCardEntriesJSON {
	return giftCardEntriesJSON{GiftCardID: q.filter, listJSON: pageOf(conn.Edges, conn.PageInfo, conn.TotalCount,
		func(e *ent.GiftCardEntryEdge) *giftCardEntryJSON { return renderGiftCardEntry(e.Node) })}
}

// giftCardMoveJSON is a card after a move and the entry the move wrote
// (null when it moved no cents).
type giftCardMoveJSON struct {
	replayMark
	GiftCard giftCardJSON       `json:"gift_card"`
	Entry    *giftCardEntryJSON `json:"entry"`
}

func renderGiftCardMove(m *giftcards.Moved) giftCardMoveJSON {
	return giftCardMoveJSON{replayMark: replayMark{m.Replayed}, GiftCard: renderGiftCard(m.Card), Entry: renderGiftCardEntry(m.Entry)}
}

// renderBound is a card just bound: the card.
func renderBound(m *giftcards.Moved) giftCardJSON { return renderGiftCard(m.Card) }

// transferJSON is a transfer between two cards: each card after it with
// its entry.
type transferJSON struct {
	replayMark
	TransferID string           `json:"transfer_id"`
	Amount     json.Number      `json:"amount"`
	From       giftCardMoveJSON `json:"from"`
	To         giftCardMoveJSON `json:"to"`
}

func renderTransfer(q onPath[giftcards.TransferInput], t *giftcards.Transferred) transferJSON {
	return transferJSON{replayMark: replayMark{t.Replayed}, TransferID: q.in.TransferID, Amount: money(t.To.Entry.AmountCents),
		From: renderGiftCardMove(t.From), To: renderGiftCardMove(t.To)}
}
