package pos

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
)

// ErrSaleNotProcessed is a return whose sale is still being processed: it
// is applied after the sale (the worker tries again shortly).
var ErrSaleNotProcessed = errors.New("the sale is not processed yet")

// maxReturnIDLength bounds a return's or cancellation's id.
const maxReturnIDLength = 64

// SaleReturnInput is a return of a sale (Kind return: the units listed) or
// its cancellation (Kind cancellation: every unit not yet returned).
type SaleReturnInput struct {
	Protocol        string
	SaleRef         string // the path's saleId: the receipt number, or the sale's id (sal_…)
	Kind            salereturn.Kind
	ID              string
	StoreID, PosID  string
	Date            *time.Time
	Reason          string
	Items           []ReturnItemInput
	ItemsWereListed bool // a cancellation that lists items is refused: it cancels all
}

// ReturnItemInput is a line of a return: the sale's item id and how many of
// its units come back.
type ReturnItemInput struct {
	ID       string
	Quantity *decimal.Decimal
}

// returnLine is a line of a return as stored.
type returnLine struct {
	LineID   string          `json:"line_id"`
	Quantity decimal.Decimal `json:"quantity"`
}

func (in SaleReturnInput) validate() error {
	var p apperr.Problems
	checkProtocol(&p, in.Protocol, protocolSale, true)
	f := func(name string) string { return string(in.Kind) + "." + name }
	switch id := strings.TrimSpace(in.ID); {
	case id == "":
		p.Add(f("id"), "is required")
	case len(in.ID) > maxReturnIDLength:
		p.Add(f("id"), "must be at most %d characters", maxReturnIDLength)
	}
	if strings.TrimSpace(in.StoreID) == "" {
		p.Add(f("store.id"), "is required")
	}
	if in.Date == nil {
		p.Add(f("date"), "is required (ISO 8601)")
	}
	if len(in.Reason) > 500 {
		p.Add(f("reason"), "must be at most 500 characters")
	}
	if in.Kind == salereturn.KindCancellation {
		if in.ItemsWereListed {
			p.Add(f("items"), "is not taken: a cancellation returns every unit not yet returned")
		}
		return p.Malformed()
	}
	switch n := len(in.Items); {
	case n == 0:
		p.Add(f("items"), "must hold at least one item")
	case n > maxPOSItems:
		p.Add(f("items"), "must hold at most %d items", maxPOSItems)
	}
	seen := map[string]bool{}
	for i, it := range in.Items {
		fi := func(name string) string { return f("items[" + strconv.Itoa(i) + "]." + name) }
		switch {
		case strings.TrimSpace(it.ID) == "":
			p.Add(fi("id"), "is required: the id of the sale's item")
		case seen[it.ID]:
			p.Add(fi("id"), "lists item %s a second time", it.ID)
		}
		seen[it.ID] = true
		if it.Quantity == nil || !it.Quantity.IsPositive() {
			p.Add(fi("quantity"), "is required and must be positive")
		}
	}
	return p.Malformed()
}

// RegisterSaleReturn stores a return or cancellation and its processing job
// in one transaction, after checking what it returns is still returnable
// (under the sale's lock, so concurrent returns of one line never return
// more than it had). The same id for the same sale answers the return
// stored the first time.
func (a *Service) RegisterSaleReturn(ctx context.Context, in SaleReturnInput) (*ent.SaleReturn, error) {
	if err := Rules.RegisterSaleReturn.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	var out *ent.SaleReturn
	received := false
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		s, err := a.lockSale(ctx, tx.Ent, in.SaleRef, in.StoreID)
		if err != nil {
			return err
		}
		prior, err := tx.Ent.SaleReturn.Query().Where(salereturn.SaleID(s.ID), salereturn.ExternalID(in.ID)).Only(ctx)
		if err == nil {
			out = prior
			return nil
		}
		if !ent.IsNotFound(err) {
			return err
		}
		if s.Status == sale.StatusFAILED {
			return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "sale_not_returnable", Field: "saleId",
				Message: "the sale failed processing: it credited nothing, there is nothing to return"}
		}
		items, err := tx.Ent.SaleItem.Query().Where(saleitem.SaleID(s.ID)).Order(ent.Asc(saleitem.FieldID)).All(ctx)
		if err != nil {
			return err
		}
		lines, amount, err := in.lines(items)
		if err != nil {
			return err
		}
		byLine := map[string]*ent.SaleItem{}
		for _, it := range items {
			byLine[it.LineID] = it
		}
		if err := refuseSpentGiftCards(ctx, tx.Ent, byLine, lines); err != nil {
			return err
		}
		for _, l := range lines {
			it := byLine[l.LineID]
			if err := tx.Ent.SaleItem.UpdateOneID(it.ID).SetReturnedQuantity(it.ReturnedQuantity.Add(l.Quantity)).Exec(ctx); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(lines)
		if err != nil {
			return err
		}
		out, err = tx.Ent.SaleReturn.Create().
			SetSaleID(s.ID).SetExternalID(in.ID).SetKind(in.Kind).SetPosID(in.PosID).SetReturnedAt(in.Date.UTC()).
			SetReason(in.Reason).SetLines(raw).SetAmount(amount).SetCreatedAt(a.k.Stamp()).
			Save(ctx)
		if err != nil {
			return err
		}
		rc, err := a.k.Jobs()
		if err != nil {
			return err
		}
		_, err = rc.InsertTx(ctx, tx.SQL, jobs.ProcessSaleReturn{TenantID: s.TenantID, ReturnID: out.ID}, nil)
		received = err == nil
		return err
	})
	if err == nil && received {
		a.k.Recorder().ReturnReceived(string(in.Kind))
	}
	if ent.IsConstraintError(err) {
		// The same return registered by a concurrent request (SQLite
		// serialises them; this is the unique index's backstop).
		s, serr := a.findSale(ctx, a.k.DB.Ent, in.SaleRef, in.StoreID)
		if serr != nil {
			return nil, serr
		}
		return a.k.DB.Ent.SaleReturn.Query().Where(salereturn.SaleID(s.ID), salereturn.ExternalID(in.ID)).Only(ctx)
	}
	return out, err
}

// lines are the units the return takes back and their net value: what was
// paid for them, their share of the line's discounts taken off. Quantities
// beyond what remains returnable are refused naming the item.
func (in SaleReturnInput) lines(items []*ent.SaleItem) ([]returnLine, decimal.Decimal, error) {
	remaining := map[string]decimal.Decimal{}
	byLine := map[string]*ent.SaleItem{}
	for _, it := range items {
		remaining[it.LineID] = it.Quantity.Sub(it.ReturnedQuantity)
		byLine[it.LineID] = it
	}
	var lines []returnLine
	var p apperr.Problems
	if in.Kind == salereturn.KindCancellation {
		for _, it := range items {
			if q := remaining[it.LineID]; q.IsPositive() {
				lines = append(lines, returnLine{LineID: it.LineID, Quantity: q})
			}
		}
		if len(lines) == 0 {
			p.Add("cancellation", "nothing is left to cancel: every unit of the sale was returned or cancelled")
		}
	}
	for i, ri := range in.Items {
		f := "return.items[" + strconv.Itoa(i) + "]"
		left, ok := remaining[ri.ID]
		switch {
		case !ok:
			p.Add(f+".id", "the sale has no item %s", ri.ID)
		case ri.Quantity.GreaterThan(left):
			p.Add(f+".quantity", "at most %s of item %s remain returnable", left.String(), ri.ID)
		default:
			lines = append(lines, returnLine{LineID: ri.ID, Quantity: *ri.Quantity})
		}
	}
	if err := p.Err(); err != nil {
		return nil, decimal.Zero, err
	}
	amount := decimal.Zero
	for _, l := range lines {
		it := byLine[l.LineID]
		net := it.UnitPrice.Mul(it.Quantity).Sub(it.DiscountAmount)
		amount = amount.Add(net.Mul(l.Quantity).DivRound(it.Quantity, 8))
	}
	return lines, amount.Round(2), nil
}

// lockSale finds the sale of a store by receipt number (or id) and, on
// PostgreSQL, locks it until the transaction ends; SQLite's transactions
// are serialised already.
func (a *Service) lockSale(ctx context.Context, c *ent.Client, ref, storeCode string) (*ent.Sale, error) {
	s, err := a.findSale(ctx, c, ref, storeCode)
	if err != nil || a.k.DB.Dialect != dialect.Postgres {
		return s, err
	}
	return c.Sale.Query().Where(sale.ID(s.ID)).ForUpdate(entsql.WithLockTables(sale.Table)).Only(ctx)
}

func (a *Service) findSale(ctx context.Context, c *ent.Client, ref, storeCode string) (*ent.Sale, error) {
	st, err := c.Store.Query().Where(store.Code(storeCode)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "store.id", Message: "no store with code " + storeCode}
	}
	if err != nil {
		return nil, err
	}
	q := c.Sale.Query().Where(sale.StoreID(st.ID))
	if strings.HasPrefix(ref, "sal_") {
		q.Where(sale.ID(ref))
	} else {
		q.Where(sale.ExternalID(ref))
	}
	s, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "saleId",
			Message: "no sale " + ref + " at store " + storeCode}
	}
	return s, err
}
