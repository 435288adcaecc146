package storage

import (
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"modernc.org/sqlite"

	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/domain/rollup"
)

// The functions the rollups' triggers call on SQLite (migration 0027);
// PostgreSQL has them in SQL. A tool other than the service writing sales,
// redemptions or ledger entries into a SQLite file must register them too.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("fideliza_day", 2, sqliteDay)
	sqlite.MustRegisterDeterministicScalarFunction("fideliza_cents", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		cents, _, err := sqliteMoney(args[0])
		return cents, err
	})
	sqlite.MustRegisterDeterministicScalarFunction("fideliza_sub", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		_, sub, err := sqliteMoney(args[0])
		return sub, err
	})
}

// sqliteTimeLayouts are how SQLite holds instants: the driver's
// _time_format=sqlite, and SQLite's own functions' text.
var sqliteTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano}

// sqliteDay is fideliza_day(at, zone): the local day of at in the IANA zone.
func sqliteDay(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	zone, ok := args[1].(string)
	if !ok {
		return nil, fmt.Errorf("fideliza_day: the zone is %T, not text", args[1])
	}
	loc, err := points.Zone(zone)
	if err != nil {
		return nil, err
	}
	switch at := args[0].(type) {
	case time.Time:
		return rollup.Day(at, loc), nil
	case string:
		for _, layout := range sqliteTimeLayouts {
			if t, err := time.Parse(layout, at); err == nil {
				return rollup.Day(t, loc), nil
			}
		}
		return nil, fmt.Errorf("fideliza_day: %q is not an instant", at)
	}
	return nil, fmt.Errorf("fideliza_day: the instant is %T", args[0])
}

// sqliteMoney reads a decimal column (text, or a number SQLite made of it)
// as whole cents and the rest in 10^-8 R$.
func sqliteMoney(v driver.Value) (cents, sub int64, err error) {
	var d decimal.Decimal
	switch v := v.(type) {
	case nil:
		return 0, 0, nil
	case string:
		d, err = decimal.NewFromString(v)
	case []byte:
		d, err = decimal.NewFromString(string(v))
	case int64:
		d = decimal.NewFromInt(v)
	default:
		return 0, 0, fmt.Errorf("rollup money: %T is not a decimal", v)
	}
	if err != nil {
		return 0, 0, err
	}
	return rollup.Cents(d)
}
