package audience

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
)

var ana = Facts{
	Level: "gold", Points: 1200, LifetimeValue: 850.5, Purchases: 7, DaysSinceLastPurchase: 12,
	GroupPurchases: map[string]int64{"norte": 5, "sul": 2}, GroupDaysSinceLastPurchase: map[string]int64{"norte": 12, "sul": 90},
	StoreMostVisited: "loja-1", BirthdayMonth: 3, City: "Recife", State: "PE",
	Consents: []string{"email", "whatsapp"}, ChurnRisk: "low", ProbabilityAlive: 0.92, Segments: []string{"seg_vip"},
}

func TestMatch(t *testing.T) {
	never := Facts{Level: "bronze", DaysSinceLastPurchase: -1, ChurnRisk: "unknown", ProbabilityAlive: -1}
	for _, tc := range []struct {
		rule      string
		ana, none bool
		failsNone bool // evaluation fails on the customer without facts
	}{
		{rule: `level == "gold"`, ana: true},
		{rule: `level in ["gold", "diamond"] && points >= 1000`, ana: true},
		{rule: `lifetime_value >= 500`, ana: true}, // int against double: compared as numbers
		{rule: `lifetime_value > 850.5`},
		{rule: `purchases >= 7 && days_since_last_purchase <= 30`, ana: true},
		{rule: `days_since_last_purchase == -1`, none: true},
		{rule: `"norte" in group_purchases && group_purchases["norte"] >= 5`, ana: true},
		{rule: `group_days_since_last_purchase["sul"] > 60`, ana: true, failsNone: true},
		{rule: `store_most_visited == "loja-1"`, ana: true},
		{rule: `birthday_month == 3`, ana: true},
		{rule: `city == "Recife" && state == "PE"`, ana: true},
		{rule: `"email" in consents`, ana: true},
		{rule: `!("sms" in consents)`, ana: true, none: true},
		{rule: `churn_risk == "high" || probability_alive < 0.5`, none: true},
		{rule: `"seg_vip" in segments`, ana: true},
		{rule: `segments.size() == 0`, none: true},
		{rule: `consents.exists(c, c.startsWith("whats"))`, ana: true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			r, err := Compile(tc.rule)
			require.NoError(t, err)
			got, err := r.Match(&ana)
			require.NoError(t, err)
			assert.Equal(t, tc.ana, got, "ana")
			got, err = r.Match(&never)
			if tc.failsNone {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.none, got, "without facts")
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{``, "must not be empty"},
		{`   `, "must not be empty"},
		{`levl == "gold"`, "1:1: undeclared reference to 'levl'"},
		{`level == 3`, "1:7: found no matching overload for '_==_' applied to '(string, int)'"},
		{"points > 10 &&\n  city > 3", "2:8: found no matching overload for '_>_' applied to '(string, int)'"},
		{`points + 1`, "1:1: must be a bool, is int"},
		{`points >`, "1:9: Syntax error"},
		{`consents.size() > "2"`, "1:17: found no matching overload"},
		{strings.Repeat("x", MaxLength+1), "must be at most 4000 bytes"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := Compile(tc.rule)
			var e *apperr.Error
			require.True(t, errors.As(err, &e), "%v", err)
			assert.Equal(t, apperr.KindInvalid, e.Kind)
			assert.Equal(t, "rule", e.Field)
			assert.Contains(t, e.Message, tc.want)
		})
	}
}

func TestDeclarationsAreResolved(t *testing.T) {
	for _, d := range Declarations {
		_, ok := ana.resolve(d.Name)
		assert.True(t, ok, d.Name)
	}
	_, ok := ana.resolve("nothing")
	assert.False(t, ok)
}

func FuzzCompile(f *testing.F) {
	for _, seed := range []string{
		`level == "gold"`, `points > 100 && "email" in consents`, `group_purchases["norte"] / 0 > 1`,
		`lifetime_value >= 500`, `[1,2,3].all(x, x > 0)`, `segments.exists(s, s.matches("^seg_"))`,
		`levl`, `((((`, "points >\n", `"\xff"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r, err := Compile(src)
		if err != nil {
			var e *apperr.Error
			if !errors.As(err, &e) || e.Kind != apperr.KindInvalid || e.Field != "rule" {
				t.Fatalf("Compile(%q): %v is not a problem of the rule", src, err)
			}
			return
		}
		// A checked rule evaluates, to a bool or an error, on any facts.
		if _, err := r.Match(&ana); err != nil {
			return
		}
		_, _ = r.Match(&Facts{})
	})
}

func TestNames(t *testing.T) {
	r, err := Compile(`level == "gold" && "email" in consents || group_purchases.exists(g, g == "norte")`)
	require.NoError(t, err)
	assert.Equal(t, []string{"consents", "group_purchases", "level"}, r.Names())
}
