package loyalty_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// Environment variables of the model test: the seed of a run to replay, and
// how many steps to take.
const (
	envLedgerSeed  = "FIDELIZA_LEDGER_SEED"
	envLedgerSteps = "FIDELIZA_LEDGER_STEPS"
)

// brt is the zone the ledger's clock answers in, so any path that forgets
// to store UTC shows up as a mismatch on SQLite (times are text).
var brt = time.FixedZone("-03", -3*60*60)

// The model tenants' programme time zones: the default, and one a day apart
// from UTC's dates half the time.
var (
	saoPaulo = mustZone("America/Sao_Paulo")
	tokyo    = mustZone("Asia/Tokyo")
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}

// ---------------------------------------------------------------------------
// The model: what the ledger must hold, computed from the spec alone.

func ledgerSeed(t *testing.T) uint64 {
	if s := os.Getenv(envLedgerSeed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, envLedgerSeed)
		return seed
	}
	return 20260301
}

func ledgerSteps(t *testing.T) int {
	if s := os.Getenv(envLedgerSteps); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, envLedgerSteps)
		return n
	}
	if testing.Short() {
		return 300
	}
	if raceEnabled() {
		// The race detector instruments the SQLite engine (transpiled C) and
		// makes every statement about ten times slower, and this test runs
		// in one goroutine, so it has no races to find: a shorter walk keeps
		// the -race suite within a minute. Plain runs take the full walk.
		return 500
	}
	return 2000
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// TestLedgerModel drives random credits, duplicate credits, debits,
// adjustments, refunds (reversals, whole or partial, repeated), POS sales
// (some processed twice) and their returns and cancellations (some beyond what remains, some sent
// again), clock moves and expiry runs against an in-memory model of the
// spec, and compares every row after every step: the balance less the debt
// is the sum of the ledger, the balance is the sum of the lots and never
// negative, nothing is spent while a debt is open and credits settle it
// first, an order is credited once, each return is applied once, a
// customer's purchases and last purchase count each sale once until it is
// returned or cancelled whole, and
// debits, reversals and expirations take exactly the points the model
// takes, those expiring first first.
func TestLedgerModel(t *testing.T) {
	t.Parallel()
	seed, steps := ledgerSeed(t), ledgerSteps(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		t.Logf("seed %d (%s to replay), %d steps", seed, envLedgerSeed, steps)
		started := time.Now()
		// A month end, so that adding months normalises dates (Jan 31 + 1 month).
		clock := testclock.NewStored(time.Date(2025, 1, 31, 23, 30, 0, 123456000, time.UTC), brt)
		a := app.New(&app.Config{DB: db, Clock: clock.Now})
		m := &ledgerModel{
			t: t, app: a, db: db, clock: clock, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), seed: seed,
			counts: map[string]int{},
		}
		sys := viewer.SystemContext(context.Background())
		settings := []modelTenant{
			{expiryMonths: 12, zone: saoPaulo, rate: decimal.NewFromInt(1), silver: 1000, gold: 5000, diamond: 20000}, // the defaults
			{expiryMonths: 2, zone: tokyo, rate: decimal.RequireFromString("1.5"), silver: 300, gold: 2000, diamond: 8000},
		}
		for i := range settings {
			mt := settings[i]
			tn, err := a.Backoffice.CreateTenant(sys, fmt.Sprintf("Loja %d", i), nil)
			require.NoError(t, err)
			if i > 0 {
				tn, err = db.Ent.Tenant.UpdateOneID(tn.ID).SetPointsExpiryMonths(mt.expiryMonths).SetPointsPerReal(mt.rate).SetTimeZone(mt.zone.String()).
					SetSilverThreshold(mt.silver).SetGoldThreshold(mt.gold).SetDiamondThreshold(mt.diamond).Save(sys)
				require.NoError(t, err)
			}
			require.Equal(t, mt.expiryMonths, tn.PointsExpiryMonths)
			require.True(t, mt.rate.Equal(tn.PointsPerReal))
			require.Equal(t, []int64{mt.silver, mt.gold, mt.diamond}, []int64{tn.SilverThreshold, tn.GoldThreshold, tn.DiamondThreshold})
			mt.id, mt.store = tn.ID, fmt.Sprintf("LOJA-%d", i)
			_, err = a.Backoffice.CreateStore(sys, tn.ID, mt.store, "Loja")
			require.NoError(t, err)
			m.tenants = append(m.tenants, &mt)
			for j := 0; j < 3; j++ {
				cpf := apptest.CPF(len(m.customers))
				id := apptest.Customer(t, a, tn.ID, len(m.customers))
				m.customers = append(m.customers, &modelCustomer{id: id, cpf: cpf, tenant: &mt, credits: map[string]firstMove{},
					orders: map[string]*modelOrder{}, reversals: map[string]firstMove{},
					debits: map[string]firstMove{}, level: points.Bronze, lifetime: decimal.Zero,
					seen: seenLedger{expired: map[string]bool{}}})
			}
		}

		for m.step = 1; m.step <= steps; m.step++ {
			c := m.customers[m.rng.IntN(len(m.customers))]
			r := m.rng.IntN(100)
			switch {
			case r < 28:
				m.credit(c)
			case r < 34:
				m.duplicateCredit(c)
			case r < 41:
				m.reverse(c)
			case r < 45:
				m.sale(c)
			case r < 49:
				m.saleReturn(c)
			case r < 63:
				m.debit(c)
			case r < 75:
				m.adjust(c)
			case r < 92:
				m.advance()
				if m.rng.IntN(4) > 0 {
					m.runExpiry()
				}
				if m.rng.IntN(4) == 0 {
					m.runLevels()
				}
			default:
				m.runExpiry()
			}
			if r < 75 {
				m.check(c)
			} else {
				m.checkAfterJobs()
			}
			if m.step%100 == 0 {
				for _, c := range m.customers {
					m.check(c)
				}
				m.checkGlobal()
			}
		}
		m.checkGlobal()
		for _, c := range m.customers {
			m.check(c)
		}
		levels := map[points.Level]int{}
		for _, c := range m.customers {
			levels[c.level]++
			m.counts["level moves"] += c.levelMoves
		}
		t.Logf("%d steps in %s, clock %s → %s; %v; final levels %v", steps, time.Since(started).Round(time.Millisecond),
			"2025-01-31", m.now().Format(time.DateOnly), m.counts, levels)
		// The run must have exercised what it claims to.
		for _, what := range []string{"credit", "duplicate credit", "debit", "debit insufficient", "adjust +", "adjust -", "lot expired",
			"duplicate debit", "reverse", "reverse into debt", "reverse refused", "duplicate reversal", "debit while owing",
			"sale", "return", "cancellation", "return refused", "return again"} {
			if steps >= 500 {
				require.Positive(t, m.counts[what], "the run never did %q", what)
			}
		}
	})
}

// ---------------------------------------------------------------------------
// Concurrency.
