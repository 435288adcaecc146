package crashtest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Customers is how many customers a Tenant has; the i-th sale (Line) is
// its customer i modulo Customers's.
const Customers = 12

// Sale is what a test registered and expects of one sale.
type Sale struct {
	ID       string
	Customer string // customer id
	Points   int64
	// What its return or cancellation, registered with it and so before it
	// is processed, takes back, and the sale's status in the end.
	ReturnID string
	Reversed int64
	Status   string
}

// Tenant is the tenant the crash tests sell to: its id and its customers'
// documents and ids.
type Tenant struct {
	ID        string
	Docs, IDs []string
}

// NewTenant creates a tenant, its store LOJA-01 and Customers customers.
func NewTenant(t *testing.T, a *app.App) Tenant {
	t.Helper()
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, "Mercado Crash", nil)
	require.NoError(t, err)
	_, err = a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
	require.NoError(t, err)
	out := Tenant{ID: tn.ID, Docs: make([]string, Customers), IDs: make([]string, Customers)}
	for i := range Customers {
		out.Docs[i] = CPF(i)
		c, err := a.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tn.ID), customers.CustomerInput{
			Name: opt.Of(fmt.Sprintf("Cliente %d", i)), Email: opt.Of(fmt.Sprintf("cliente%d@example.com", i)),
			CPF: opt.Of(out.Docs[i]),
		})
		require.NoError(t, err)
		out.IDs[i] = c.ID
	}
	return out
}

// LineOf is the one line of a sale and what it earns.
type LineOf struct {
	Customer           int // index into the tenant's customers
	Price, Qty, Amount decimal.Decimal
	Points             int64
}

// Line is the one line of the i-th sale.
func Line(i int) LineOf {
	price := decimal.New(int64(1050+i*37%9000), -2) // R$ 10.50 … R$ 100.49
	qty := decimal.NewFromInt(int64(1 + i%3))
	amount := price.Mul(qty)
	// 1 point per whole real paid: the tenant's default rate.
	return LineOf{Customer: i % Customers, Price: price, Qty: qty, Amount: amount, Points: amount.Floor().IntPart()}
}

// CPF is the i-th valid CPF: 9 digits from i and its check digits.
func CPF(i int) string {
	base := fmt.Sprintf("%09d", 239000000+i*7919)
	digit := func(s string) byte {
		sum := 0
		for j := range len(s) {
			sum += int(s[j]-'0') * (len(s) + 1 - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base)
	return base + string(d1) + string(digit(base+string(d1)))
}

// FundWallets credits each of the tenant's customers cashback cents and
// issues cards gift cards of cardCents each, answering their codes.
func FundWallets(t *testing.T, dbURL string, tn Tenant, cents int64, cards int, cardCents int64) []string {
	t.Helper()
	db := Open(t, dbURL)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	ctx := viewer.TenantContext(context.Background(), tn.ID)
	w := wallet.Wallets{Dialect: db.Dialect, Now: time.Now}
	for _, id := range tn.IDs {
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error {
			_, err := w.Credit(ctx, tx.Ent, wallet.Move{CustomerID: id, Unit: wallet.Cashback, Cents: cents,
				SourceKind: walletentry.SourceKindOrder, SourceID: new("seed"), Reason: "seed"})
			return err
		}))
	}
	issued, err := a.GiftCards.IssueGiftCards(ctx, giftcards.IssueInput{Count: &cards, Amount: new(wallet.Amount(cardCents))})
	require.NoError(t, err)
	codes := make([]string, len(issued.Cards))
	for i, c := range issued.Cards {
		codes[i] = c.Code
	}
	return codes
}

// TakePoints makes the tenant's programme take points as payment at the
// till, and credits each of its customers points (an order's credit).
func TakePoints(t *testing.T, dbURL string, tn Tenant, points int64) {
	t.Helper()
	db := Open(t, dbURL)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	_, err := a.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), tn.ID,
		backoffice.TenantSettings{PointsSpendChannels: &[]string{"pdv"}})
	require.NoError(t, err)
	ctx := viewer.TenantContext(context.Background(), tn.ID)
	for _, id := range tn.IDs {
		_, err := a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: id, OrderID: "seed", Points: &points})
		require.NoError(t, err)
	}
}
