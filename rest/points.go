package rest

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
	"github.com/fideliza/fideliza/ent"
)

// creditBody is POST /points/credit.
type creditBody struct {
	CustomerID string      `json:"customer_id"`
	OrderID    string      `json:"order_id"`
	Amount     *jsonNumber `json:"amount"`
	Points     *jsonNumber `json:"points"`
}

// debitBody is POST /points/debit.
type debitBody struct {
	CustomerID string      `json:"customer_id"`
	Points     *jsonNumber `json:"points"`
	OrderID    *string     `json:"order_id"`
	Reason     string      `json:"reason"`
}

// jsonNumber is a field that takes a JSON number and nothing else. A
// json.Number alone would also take a string holding a number ("10"), and
// would answer a string that holds none as malformed JSON; here both are a
// value of the wrong type, a 422 on the field.
type jsonNumber string

var numberType = reflect.TypeFor[float64]() // named "a number" in the error

// MarshalJSON writes the number as it was read (or rendered).
func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func (n *jsonNumber) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*n = jsonNumber(b)
		return nil
	}
	kind := "value"
	if len(b) > 0 {
		switch b[0] {
		case '"':
			kind = "string"
		case 't', 'f':
			kind = "bool"
		case '{':
			kind = "object"
		case '[':
			kind = "array"
		}
	}
	return &json.UnmarshalTypeError{Value: kind, Type: numberType}
}

type creditJSON struct {
	replayMark
	EntryID        string  `json:"entry_id"`
	CustomerID     string  `json:"customer_id"`
	OrderID        string  `json:"order_id"`
	PointsCredited int64   `json:"points_credited"`
	NewBalance     int64   `json:"new_balance"`
	ExpiresAt      *string `json:"expires_at"`
	CreatedAt      string  `json:"created_at"`
}

type debitJSON struct {
	replayMark
	EntryID       string  `json:"entry_id"`
	CustomerID    string  `json:"customer_id"`
	OrderID       *string `json:"order_id"`
	PointsDebited int64   `json:"points_debited"`
	NewBalance    int64   `json:"new_balance"`
	CreatedAt     string  `json:"created_at"`
}

// number reads a JSON number as a decimal, or reports it as a problem.
func number(p *apperr.Problems, field string, n *jsonNumber) *decimal.Decimal {
	if n == nil {
		return nil
	}
	return guard.Number(p, field, string(*n))
}

// integer reads a JSON number that must be a whole number.
func integer(p *apperr.Problems, field string, n *jsonNumber) *int64 {
	d := number(p, field, n)
	if d == nil {
		return nil
	}
	if !d.IsInteger() || d.Abs().GreaterThan(decimal.NewFromInt(1<<53)) {
		p.Add(field, "must be a whole number")
		return nil
	}
	v := d.IntPart()
	return &v
}

// readCredit reads POST /points/credit (and /v1/points/credit). A
// repeated call for the same order answers with the first result.
func readCredit(b *binder) loyalty.CreditInput {
	body := jsonBody[creditBody](b)
	return loyalty.CreditInput{CustomerID: body.CustomerID, OrderID: body.OrderID,
		Amount: number(&b.problems, "amount", body.Amount), Points: integer(&b.problems, "points", body.Points)}
}

func renderCredit(in loyalty.CreditInput, m *loyalty.PointsMovement) creditJSON {
	e := m.Entry
	return creditJSON{
		replayMark: replayMark{m.Replayed}, EntryID: e.ID, CustomerID: e.CustomerID, OrderID: in.OrderID, PointsCredited: e.Points,
		NewBalance: e.BalanceAfter, ExpiresAt: optTimestamp(e.ExpiresAt), CreatedAt: timestamp(e.CreatedAt),
	}
}

// readDebit reads POST /points/debit.
func readDebit(b *binder) loyalty.DebitInput {
	body := jsonBody[debitBody](b)
	in := loyalty.DebitInput{CustomerID: body.CustomerID, OrderID: body.OrderID, Reason: body.Reason}
	if body.Points == nil {
		b.problems.Add("points", "is required")
	} else if n := integer(&b.problems, "points", body.Points); n != nil {
		in.Points = *n
	}
	return in
}

func renderDebit(m *loyalty.PointsMovement) debitJSON {
	e := m.Entry
	return debitJSON{
		replayMark: replayMark{m.Replayed}, EntryID: e.ID, CustomerID: e.CustomerID, OrderID: e.SourceID, PointsDebited: -e.Points,
		NewBalance: e.BalanceAfter, CreatedAt: timestamp(e.CreatedAt),
	}
}

// reverseBody is POST /points/reverse.
type reverseBody struct {
	CustomerID string      `json:"customer_id"`
	OrderID    string      `json:"order_id"`
	ReversalID string      `json:"reversal_id"`
	Amount     *jsonNumber `json:"amount"`
	Reason     string      `json:"reason"`
}

type reverseJSON struct {
	replayMark
	EntryID        string       `json:"entry_id"`
	CustomerID     string       `json:"customer_id"`
	OrderID        *string      `json:"order_id"`
	ReversalID     *string      `json:"reversal_id"`
	PointsReversed int64        `json:"points_reversed"`
	AmountRefunded *json.Number `json:"amount_refunded"`
	NewBalance     int64        `json:"new_balance"`
	PointsDebt     int64        `json:"points_debt"`
	CreatedAt      string       `json:"created_at"`
}

// readReverse reads POST /points/reverse (and /v1/points/reverse). A
// repeated reversal_id answers the first reversal with
// Idempotent-Replayed.
func readReverse(b *binder) loyalty.ReverseInput {
	body := jsonBody[reverseBody](b)
	return loyalty.ReverseInput{CustomerID: body.CustomerID, OrderID: body.OrderID, ReversalID: body.ReversalID,
		Amount: number(&b.problems, "amount", body.Amount), Reason: body.Reason}
}

func renderReverse(m *loyalty.PointsMovement) reverseJSON {
	e := m.Entry
	return reverseJSON{replayMark: replayMark{m.Replayed}, EntryID: e.ID, CustomerID: e.CustomerID, OrderID: e.OrderID,
		ReversalID: e.SourceID, PointsReversed: -e.Points, AmountRefunded: decimalJSON(e.Amount), NewBalance: e.BalanceAfter,
		PointsDebt: e.DebtAfter, CreatedAt: timestamp(e.CreatedAt)}
}

type expiringJSON struct {
	Points    int64  `json:"points"`
	ExpiresAt string `json:"expires_at"`
}

// balanceJSON is GET /points/balance/{customer_id}; its fields, and those
// of expiring_soon, are in the order of their names.
type balanceJSON struct {
	CustomerID         string           `json:"customer_id"`
	ExpiringSoon       expiringSoonJSON `json:"expiring_soon"`
	Level              string           `json:"level"`
	LifetimeValue      json.Number      `json:"lifetime_value"`
	NextLevel          *string          `json:"next_level"`
	PointsBalance      int64            `json:"points_balance"`
	PointsDebt         int64            `json:"points_debt"`
	EarnedLast12Months int64            `json:"points_earned_last_12_months"`
	PointsPending      int64            `json:"points_pending"`
	PointsToNextLevel  *int64           `json:"points_to_next_level"`
}

type expiringSoonJSON struct {
	Days   int            `json:"days"`
	Lots   []expiringJSON `json:"lots"`
	Points int64          `json:"points"`
}

func renderBalance(b *loyalty.PointsBalance) balanceJSON {
	c := b.Customer
	out := balanceJSON{
		CustomerID: c.ID, PointsBalance: c.PointsBalance, PointsPending: c.PointsPending, PointsDebt: c.PointsDebt,
		Level: string(c.Level), EarnedLast12Months: b.EarnedLast12Months, LifetimeValue: json.Number(c.LifetimeValue.String()),
		ExpiringSoon: expiringSoonJSON{Points: b.ExpiringPoints, Days: 30, Lots: make([]expiringJSON, len(b.Expiring))},
	}
	for i, l := range b.Expiring {
		out.ExpiringSoon.Lots[i] = expiringJSON{Points: l.Points, ExpiresAt: timestamp(l.ExpiresAt)}
	}
	if b.NextLevel != "" {
		n := string(b.NextLevel)
		out.NextLevel, out.PointsToNextLevel = &n, &b.PointsToNextLevel
	}
	return out
}

type entryJSON struct {
	ID           string       `json:"id"`
	Kind         string       `json:"kind"`
	Points       int64        `json:"points"`
	BalanceAfter int64        `json:"balance_after"`
	DebtAfter    int64        `json:"debt_after"`
	Source       sourceJSON   `json:"source"`
	Reason       string       `json:"reason"`
	Amount       *json.Number `json:"amount"`
	ExpiresAt    *string      `json:"expires_at"`
	CreatedAt    string       `json:"created_at"`
}

type sourceJSON struct {
	Kind string  `json:"kind"`
	ID   *string `json:"id"`
}

// statementRequest is GET /points/statement/{customer_id}.
type statementRequest struct {
	customerID string
	paged[loyalty.StatementFilter]
}

func readStatement(b *binder) statementRequest {
	q := statementRequest{customerID: pathCustomerID(b)}
	q.pageRequest = b.page("ptx_")
	q.filter = loyalty.StatementFilter{
		From: instant(&b.problems, "from", b.query("from"), dateOrDateTime),
		To:   instant(&b.problems, "to", b.query("to"), dateOrDateTime),
	}
	return q
}

func (s *server) statement(ctx context.Context, q statementRequest) (*ent.PointsEntryConnection, error) {
	return s.app.Loyalty.Statement(ctx, q.customerID, q.filter, q.after, q.limit)
}

// statementJSON is a page of a customer's statement.
type statementJSON struct {
	CustomerID string `json:"customer_id"`
	listJSON[entryJSON]
}

func renderStatement(q statementRequest, conn *ent.PointsEntryConnection) statementJSON {
	return statementJSON{CustomerID: q.customerID, listJSON: pageOf(conn.Edges, conn.PageInfo, conn.TotalCount,
		func(edge *ent.PointsEntryEdge) entryJSON {
			e := edge.Node
			return entryJSON{
				ID: e.ID, Kind: string(e.Kind), Points: e.Points, BalanceAfter: e.BalanceAfter, DebtAfter: e.DebtAfter,
				Source: sourceJSON{Kind: string(e.SourceKind), ID: e.SourceID}, Reason: e.Reason, Amount: decimalJSON(e.Amount),
				ExpiresAt: optTimestamp(e.ExpiresAt), CreatedAt: timestamp(e.CreatedAt),
			}
		})}
}
