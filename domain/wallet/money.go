package wallet

import "github.com/shopspring/decimal"

// Amount is cents as R$, exact.
func Amount(cents int64) decimal.Decimal { return decimal.New(cents, -2) }

// Reais renders cents as R$ with two decimal places ("12.30"), as every
// amount of the events and answers.
func Reais(cents int64) string { return Amount(cents).StringFixed(2) }

// Cents is an amount in R$ in whole cents, rounded half away from zero (a
// cashback of 5 % on R$ 10.99 is R$ 0.55): a wallet holds whole cents.
func Cents(amount decimal.Decimal) int64 { return amount.Shift(2).Round(0).IntPart() }
