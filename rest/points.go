package rest

import (
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/go-chi/chi/v5"
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
	EntryID        string  `json:"entry_id"`
	CustomerID     string  `json:"customer_id"`
	OrderID        string  `json:"order_id"`
	PointsCredited int64   `json:"points_credited"`
	NewBalance     int64   `json:"new_balance"`
	ExpiresAt      *string `json:"expires_at"`
	CreatedAt      string  `json:"created_at"`
}

type debitJSON struct {
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

// movement answers a points operation's error, or marks its replay with
// Idempotent-Replayed; it returns the entry to render, nil when it answered.
func (s *server) movement(w http.ResponseWriter, r *http.Request, m *loyalty.PointsMovement, err error) *ent.PointsEntry {
	if err != nil {
		s.writeV1Error(w, r, err)
		return nil
	}
	if m.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	return m.Entry
}

// creditPoints is POST /points/credit (and /v1/points/credit). A repeated
// call for the same order answers with the first result.
func (s *server) creditPoints(w http.ResponseWriter, r *http.Request) {
	var body creditBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	var p apperr.Problems
	in := loyalty.CreditInput{CustomerID: body.CustomerID, OrderID: body.OrderID,
		Amount: number(&p, "amount", body.Amount), Points: integer(&p, "points", body.Points)}
	if err := p.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	m, err := s.app.Loyalty.CreditPoints(r.Context(), in)
	e := s.movement(w, r, m, err)
	if e == nil {
		return
	}
	writeJSON(w, http.StatusCreated, creditJSON{
		EntryID: e.ID, CustomerID: e.CustomerID, OrderID: body.OrderID, PointsCredited: e.Points,
		NewBalance: e.BalanceAfter, ExpiresAt: optTimestamp(e.ExpiresAt), CreatedAt: timestamp(e.CreatedAt),
	})
}

// debitPoints is POST /points/debit.
func (s *server) debitPoints(w http.ResponseWriter, r *http.Request) {
	var body debitBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	var p apperr.Problems
	var pts int64
	if body.Points == nil {
		p.Add("points", "is required")
	} else if n := integer(&p, "points", body.Points); n != nil {
		pts = *n
	}
	if err := p.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	m, err := s.app.Loyalty.DebitPoints(r.Context(), loyalty.DebitInput{
		CustomerID: body.CustomerID, Points: pts, OrderID: body.OrderID, Reason: body.Reason,
	})
	e := s.movement(w, r, m, err)
	if e == nil {
		return
	}
	writeJSON(w, http.StatusCreated, debitJSON{
		EntryID: e.ID, CustomerID: e.CustomerID, OrderID: e.SourceID, PointsDebited: -e.Points,
		NewBalance: e.BalanceAfter, CreatedAt: timestamp(e.CreatedAt),
	})
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

// reversePoints is POST /points/reverse (and /v1/points/reverse). A
// repeated reversal_id answers the first reversal with
// Idempotent-Replayed.
func (s *server) reversePoints(w http.ResponseWriter, r *http.Request) {
	var body reverseBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	var p apperr.Problems
	in := loyalty.ReverseInput{CustomerID: body.CustomerID, OrderID: body.OrderID, ReversalID: body.ReversalID,
		Amount: number(&p, "amount", body.Amount), Reason: body.Reason}
	if err := p.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	m, err := s.app.Loyalty.ReversePoints(r.Context(), in)
	e := s.movement(w, r, m, err)
	if e == nil {
		return
	}
	out := reverseJSON{EntryID: e.ID, CustomerID: e.CustomerID, OrderID: e.OrderID, ReversalID: e.SourceID,
		PointsReversed: -e.Points, NewBalance: e.BalanceAfter, PointsDebt: e.DebtAfter, CreatedAt: timestamp(e.CreatedAt)}
	if e.Amount != nil {
		n := json.Number(e.Amount.String())
		out.AmountRefunded = &n
	}
	writeJSON(w, http.StatusCreated, out)
}

type expiringJSON struct {
	Points    int64  `json:"points"`
	ExpiresAt string `json:"expires_at"`
}

// pointsBalance is GET /points/balance/{customer_id}.
func (s *server) pointsBalance(w http.ResponseWriter, r *http.Request) {
	b, err := s.app.Loyalty.Balance(r.Context(), chi.URLParam(r, "customer_id"))
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	lots := make([]expiringJSON, len(b.Expiring))
	for i, l := range b.Expiring {
		lots[i] = expiringJSON{Points: l.Points, ExpiresAt: timestamp(l.ExpiresAt)}
	}
	var next *string
	var missing *int64
	if b.NextLevel != "" {
		n := string(b.NextLevel)
		next, missing = &n, &b.PointsToNextLevel
	}
	c := b.Customer
	writeJSON(w, http.StatusOK, map[string]any{
		"customer_id":                  c.ID,
		"points_balance":               c.PointsBalance,
		"points_pending":               c.PointsPending,
		"points_debt":                  c.PointsDebt,
		"level":                        c.Level,
		"next_level":                   next,
		"points_to_next_level":         missing,
		"points_earned_last_12_months": b.EarnedLast12Months,
		"lifetime_value":               json.Number(c.LifetimeValue.String()),
		"expiring_soon":                map[string]any{"points": b.ExpiringPoints, "days": 30, "lots": lots},
	})
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

// pointsStatement is GET /points/statement/{customer_id}.
func (s *server) pointsStatement(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var p apperr.Problems
	after, limit := pageQuery(q, "ptx_", &p)
	var f loyalty.StatementFilter
	if v := q.Get("from"); v != "" {
		t, err := parseInstant(v)
		if err != nil {
			p.Add("from", "must be an ISO 8601 date or date-time")
		}
		f.From = &t
	}
	if v := q.Get("to"); v != "" {
		t, err := parseInstant(v)
		if err != nil {
			p.Add("to", "must be an ISO 8601 date or date-time")
		}
		f.To = &t
	}
	if err := p.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	conn, err := s.app.Loyalty.Statement(r.Context(), chi.URLParam(r, "customer_id"), f, after, limit)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	items := make([]entryJSON, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		e := edge.Node
		item := entryJSON{
			ID: e.ID, Kind: string(e.Kind), Points: e.Points, BalanceAfter: e.BalanceAfter, DebtAfter: e.DebtAfter,
			Source: sourceJSON{Kind: string(e.SourceKind), ID: e.SourceID}, Reason: e.Reason,
			ExpiresAt: optTimestamp(e.ExpiresAt), CreatedAt: timestamp(e.CreatedAt),
		}
		if e.Amount != nil {
			n := json.Number(e.Amount.String())
			item.Amount = &n
		}
		items = append(items, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"customer_id": chi.URLParam(r, "customer_id"), "data": items, "pagination": newPagination(conn.PageInfo, conn.TotalCount),
	})
}
