package audiences

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/audience"
)

// TestWhereTranslates: the rules of the subset translate into SQL (the
// preview counts in the database) and the others do not (the preview
// evaluates them in Go); app.TestAudiencePreviewCountedInTheDatabase shows
// both mean what the rule does.
func TestWhereTranslates(t *testing.T) {
	t.Parallel()
	tr := &translation{now: time.Now(), loc: time.UTC, groups: map[string][]string{"norte": {"sto_1"}}}
	for _, tc := range []struct {
		rule       string
		translated bool
	}{
		{`true`, true},
		{`level == "gold" && (points >= 100 || !(city == ""))`, true},
		{`"gold" == level`, true},
		{`level in ["gold", "diamond"]`, true},
		{`lifetime_value >= 1000 && level == "bronze"`, true},
		{`group_purchases["norte"] >= 3 && days_since_last_purchase <= 180`, true},
		{`group_days_since_last_purchase["sul"] < 30`, true},
		{`"norte" in group_purchases && "email" in consents && "seg_1" in segments`, true},
		{`churn_risk != "low" && probability_alive > 0.5 && birthday_month == 3 && state == "PE"`, true},
		{`points > 2.5 && purchases <= 3u`, true},
		{`purchases * 2 >= 4`, false},
		{`size(consents) >= 2`, false},
		{`store_most_visited == "LOJA-01"`, false},
		{`consents.exists(c, c == "sms")`, true},
		{`consents.all(c, c in ["sms", "email"] || c.startsWith("whats")) && consents.exists(c, c != "sms" && level == "gold")`, true},
		{`group_purchases.exists(g, group_purchases[g] >= 2 && g.endsWith("te"))`, true},
		{`group_days_since_last_purchase.all(g, group_days_since_last_purchase[g] <= 30)`, true},
		{`segments.exists(s, s.startsWith("seg_") && s != "seg_1")`, true},
		{`segments.all(s, s in ["seg_1", "seg_2"])`, true},
		{`consents.exists(c, segments.exists(s, s == c))`, true},
		{`segments.exists(s, s == city)`, false},
		{`segments.exists(s, s.endsWith("1"))`, false},
		{`segments.exists(s, consents.exists(c, c == s))`, false},
		{`consents.exists_one(c, c == "sms")`, false},
		{`consents.exists(c, c.size() > 3)`, false},
		{`consents.exists(c, c > "m")`, false},
		{`consents.exists(c, consents.exists(d, consents.exists(e, consents.exists(f, consents.exists(h, c == h)))))`, false},
		{`city < "S"`, false},
		{`days_since_last_purchase in [0, 180]`, true},
		{`points == 2 ? true : false`, false},
		{`purchases == points`, false},
		{`1 < 2`, false},
		{`level in []`, false},
		{`lifetime_value >= 1e300`, false},
		{`days_since_last_purchase <= 9223372036854775807`, false},
		{`points >= 9223372036854775807.0`, false},
	} {
		r, err := audience.Compile(tc.rule)
		require.NoError(t, err, tc.rule)
		_, ok := tr.where(r)
		assert.Equal(t, tc.translated, ok, tc.rule)
	}
}
