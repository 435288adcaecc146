package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A guide shows, after a call (an sh block), what the call prints: json
// and text blocks, its sample answers. The test compares them with what the
// call printed, so that a guide cannot go stale silently:
//
//   - JSON: the same shape (objects with the same keys, arrays of the same
//     length) and the same values, except that "…" in a string stands for
//     any text (ids, tokens and secrets are abbreviated: "cus_…"), a date
//     and time (RFC 3339) matches any date and time, and two times of one
//     object must keep their distance: the same calendar months, the rest
//     to within a day (points that expire in 8 months, not 12);
//   - text: line by line, with "…" standing for any text.
//
// An HTML comment just before a sample changes how it is read:
//
//	<!-- answer: varies KEY… -->  the values of these keys, at any depth,
//	                               differ from run to run: only their JSON
//	                               type is compared;
//	<!-- answer: webhook -->       the sample is a webhook the receiver got
//	                               (the event of its "type"), not what the
//	                               call printed.

// sampleAnswer is a json or text block that shows an answer.
type sampleAnswer struct {
	line    int    // of the opening fence, for the messages
	lang    string // json or text
	body    string
	varies  []string
	webhook bool
}

// answerDirective is the HTML comment that changes how the next sample is
// read.
var answerDirective = regexp.MustCompile(`^<!--\s*answer:\s*(.*?)\s*-->\s*$`)

// parseDirective applies the words of an answer directive to a.
func (a *sampleAnswer) parseDirective(words string) error {
	f := strings.Fields(words)
	switch {
	case len(f) == 1 && f[0] == "webhook":
		a.webhook = true
	case len(f) > 1 && f[0] == "varies":
		a.varies = f[1:]
	default:
		return fmt.Errorf("unknown answer directive %q: want \"varies KEY…\" or \"webhook\"", words)
	}
	return nil
}

// answerSlack is how far two times of one object may move apart from the
// sample's distance beyond whole calendar months: points expire at the
// tenant's midnight, so the rest depends on the hour of the call.
const answerSlack = 24 * time.Hour

// compareAnswers compares out, what a block printed, with the samples
// shown after it (webhook samples excepted), in order, and returns the
// differences, each prefixed with the sample's line.
func compareAnswers(out string, samples []sampleAnswer) []string {
	var problems []string
	rest := out
	for _, s := range samples {
		if s.webhook {
			continue
		}
		report := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf("line %d: ", s.line)+fmt.Sprintf(format, args...))
		}
		switch s.lang {
		case "json":
			wants, err := decodeJSONValues(s.body)
			if err != nil {
				report("the sample is not JSON: %v", err)
				return problems
			}
			for _, want := range wants {
				rest = strings.TrimLeft(rest, " \t\r\n")
				if rest == "" {
					report("the call printed nothing more where the guide shows %s", compact(want))
					return problems
				}
				dec := json.NewDecoder(strings.NewReader(rest))
				dec.UseNumber()
				var got any
				if err := dec.Decode(&got); err != nil {
					report("the call printed %q where the guide shows JSON", firstLine(rest))
					return problems
				}
				rest = rest[dec.InputOffset():]
				for _, p := range matchJSON(".", want, got, s.varies) {
					report("%s", p)
				}
			}
		case "text":
			for _, want := range strings.Split(s.body, "\n") {
				if strings.TrimSpace(want) == "" {
					continue
				}
				rest = strings.TrimLeft(rest, "\r\n")
				got, after, _ := strings.Cut(rest, "\n")
				rest = after
				if !wildcard(want).MatchString(got) {
					report("the call printed %q where the guide shows %q", got, want)
				}
			}
		}
	}
	if extra := strings.TrimSpace(rest); extra != "" {
		problems = append(problems, fmt.Sprintf("the call printed more than the guide shows after it: %q", firstLine(extra)))
	}
	return problems
}

// decodeJSONValues reads one JSON value, or several (JSON Lines).
func decodeJSONValues(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var values []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, errors.New("empty")
	}
	return values, nil
}

// matchJSON returns how got differs from the sample want, at path (jq's
// notation).
func matchJSON(path string, want, got any, varies []string) []string {
	differ := func(format string, args ...any) []string {
		return []string{path + ": " + fmt.Sprintf(format, args...)}
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return differ("the guide shows an object, the call printed %s", compact(got))
		}
		var problems []string
		for _, k := range slices.Sorted(maps.Keys(w)) {
			sub := memberPath(path, k)
			gv, ok := g[k]
			switch {
			case !ok:
				problems = append(problems, sub+": the guide shows it, the answer has no such key")
			case slices.Contains(varies, k):
				if kind(w[k]) != kind(gv) {
					problems = append(problems, fmt.Sprintf("%s: the guide shows %s, the call printed %s", sub, kind(w[k]), compact(gv)))
				}
			default:
				problems = append(problems, matchJSON(sub, w[k], gv, varies)...)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				problems = append(problems, fmt.Sprintf("%s: the answer has it (%s), the guide does not show it", memberPath(path, k), compact(g[k])))
			}
		}
		return append(problems, matchDistances(path, w, g)...)
	case []any:
		g, ok := got.([]any)
		if !ok {
			return differ("the guide shows an array, the call printed %s", compact(got))
		}
		if len(w) != len(g) {
			return differ("the guide shows %d elements, the call printed %d: %s", len(w), len(g), compact(got))
		}
		var problems []string
		for i := range w {
			problems = append(problems, matchJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], varies)...)
		}
		return problems
	case string:
		g, ok := got.(string)
		switch {
		case !ok:
			return differ("the guide shows %q, the call printed %s", w, compact(got))
		case strings.Contains(w, "…"):
			if !wildcard(w).MatchString(g) {
				return differ("the guide shows %q, the call printed %q", w, g)
			}
		case isTime(w):
			if !isTime(g) {
				return differ("the guide shows a time, the call printed %q", g)
			}
		case w != g:
			return differ("the guide shows %q, the call printed %q", w, g)
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return differ("the guide shows %s, the call printed %s", w, compact(got))
		}
	default: // true, false, null
		if want != got {
			return differ("the guide shows %s, the call printed %s", compact(want), compact(got))
		}
	}
	return nil
}

// matchDistances checks that the times of an object keep the sample's
// distances to each other.
func matchDistances(path string, want, got map[string]any) []string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w, _ := want[k].(string)
		g, _ := got[k].(string)
		if isTime(w) && isTime(g) {
			keys = append(keys, k)
		}
	}
	var problems []string
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			wm, wr := monthsAndRest(parseTime(want[a]), parseTime(want[b]))
			gm, gr := monthsAndRest(parseTime(got[a]), parseTime(got[b]))
			if wm != gm || (wr-gr).Abs() > answerSlack {
				problems = append(problems, fmt.Sprintf("%s: from %s to %s the guide shows %s, the call printed %s",
					path, a, b, distance(wm, wr), distance(gm, gr)))
			}
		}
	}
	return problems
}

// monthsAndRest splits the time from a to b into whole calendar months and
// the rest, negative when b is before a.
func monthsAndRest(a, b time.Time) (int, time.Duration) {
	if b.Before(a) {
		m, r := monthsAndRest(b, a)
		return -m, -r
	}
	m := (b.Year()-a.Year())*12 + int(b.Month()-a.Month())
	for m > 0 && a.AddDate(0, m, 0).After(b) {
		m--
	}
	return m, b.Sub(a.AddDate(0, m, 0))
}

func distance(months int, rest time.Duration) string {
	return fmt.Sprintf("%d months and %s", months, rest.Round(time.Second))
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func parseTime(v any) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, v.(string))
	return t.UTC()
}

func sameNumber(a, b json.Number) bool {
	x, okA := new(big.Rat).SetString(a.String())
	y, okB := new(big.Rat).SetString(b.String())
	return okA && okB && x.Cmp(y) == 0
}

// wildcard is the pattern of a sample's text where "…" stands for any text.
func wildcard(sample string) *regexp.Regexp {
	parts := strings.Split(sample, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// kind is the JSON type of a decoded value.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "null"
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// memberPath is the path of an object's member, in jq's notation.
func memberPath(path, key string) string {
	if identifier.MatchString(key) {
		return strings.TrimSuffix(path, ".") + "." + key
	}
	return fmt.Sprintf("%s[%q]", path, key)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestCompareAnswers: a sample that differs from the answer in a key, a
// value, a length, a time's distance or a text line is reported; ids,
// times and the keys declared to vary are not.
func TestCompareAnswers(t *testing.T) {
	const printed = `{
  "entry_id": "ptx_01jd3m0c4mp41gnb0nu5p01nt5",
  "points_credited": 135,
  "latency_ms": 7,
  "expires_at": "2025-11-11T03:00:00Z",
  "created_at": "2025-03-10T14:02:11.5Z",
  "lots": [{"sku": "7891000100103", "quantity": 2}]
}
{"names":["Ana","Bruno"]}
2004 customers exported
`
	const sample = `{
  "entry_id": "ptx_…",
  "points_credited": 135,
  "latency_ms": 2,
  "expires_at": "2027-07-22T03:00:00Z",
  "created_at": "2026-11-21T23:29:37.416983Z",
  "lots": [{"sku": "7891000100103", "quantity": 2.0}]
}
{"names": ["Ana", "Bruno"]}
`
	const text = "2004 customers exported\n"
	answers := func(json, text string, varies ...string) []sampleAnswer {
		return []sampleAnswer{{line: 10, lang: "json", body: json, varies: varies}, {line: 20, lang: "text", body: text}}
	}
	tests := []struct {
		name   string
		sample []sampleAnswer
		want   []string // substrings of the problems, one each
	}{
		{name: "the same answer", sample: answers(sample, text, "latency_ms")},
		{name: "a value that varies, not declared", sample: answers(sample, text),
			want: []string{`line 10: .latency_ms: the guide shows 2, the call printed 7`}},
		{name: "a wrong value", sample: answers(strings.Replace(sample, "135", "136", 1), text, "latency_ms"),
			want: []string{`.points_credited: the guide shows 136, the call printed 135`}},
		{name: "a wrong key", sample: answers(strings.Replace(sample, `"points_credited"`, `"points"`, 1), text, "latency_ms"),
			want: []string{`.points: the guide shows it, the answer has no such key`, `.points_credited: the answer has it (135), the guide does not show it`}},
		{name: "a wrong prefix", sample: answers(strings.Replace(sample, "ptx_…", "pts_…", 1), text, "latency_ms"),
			want: []string{`.entry_id: the guide shows "pts_…"`}},
		{name: "a nested value", sample: answers(strings.Replace(sample, `"7891000100103"`, `"7891000100104"`, 1), text, "latency_ms"),
			want: []string{`.lots[0].sku: the guide shows "7891000100104"`}},
		{name: "a shorter array", sample: answers(strings.Replace(sample, `"Ana", "Bruno"`, `"Ana"`, 1), text, "latency_ms"),
			want: []string{`.names: the guide shows 1 elements, the call printed 2`}},
		{name: "points expiring in 12 months, not 8", sample: answers(strings.Replace(sample, "2027-07-22", "2027-11-22", 1), text, "latency_ms"),
			want: []string{`from created_at to expires_at the guide shows 12 months`}},
		{name: "a time that is not one", sample: answers(strings.Replace(sample, `"2027-07-22T03:00:00Z"`, `"soon"`, 1), text, "latency_ms"),
			want: []string{`.expires_at: the guide shows "soon", the call printed "2025-11-11T03:00:00Z"`}},
		{name: "a wrong text line", sample: answers(sample, "2005 customers exported\n", "latency_ms"),
			want: []string{`line 20: the call printed "2004 customers exported" where the guide shows "2005 customers exported"`}},
		{name: "an answer not shown", sample: answers(sample, "", "latency_ms"),
			want: []string{`the call printed more than the guide shows after it: "2004 customers exported"`}},
		{name: "an answer shown but not printed", sample: append(answers(sample, text, "latency_ms"), sampleAnswer{line: 30, lang: "json", body: "{}"}),
			want: []string{`line 30: the call printed nothing more where the guide shows {}`}},
		{name: "JSON where the call printed text", sample: []sampleAnswer{{line: 40, lang: "json", body: sample}, {line: 41, lang: "json", body: sample}},
			want: []string{`line 40: .latency_ms`, `line 41: .: the guide shows an object, the call printed 2004`,
				`line 41: the call printed "customers exported" where the guide shows JSON`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compareAnswers(printed, tt.sample)
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				require.Contains(t, got[i], w)
			}
		})
	}
}

// TestMonthsAndRest: the distance in calendar months, whatever the months'
// lengths.
func TestMonthsAndRest(t *testing.T) {
	at := func(s string) time.Time { return parseTime(s) }
	for _, tt := range []struct {
		from, to string
		months   int
		rest     time.Duration
	}{
		{"2026-11-21T23:29:37Z", "2027-07-22T03:00:00Z", 8, 3*time.Hour + 30*time.Minute + 23*time.Second},
		{"2025-02-28T10:00:00Z", "2025-10-28T10:00:00Z", 8, 0},
		{"2025-01-15T10:00:00Z", "2025-03-15T10:00:00Z", 2, 0}, // 59 days
		{"2025-07-15T10:00:00Z", "2025-09-15T10:00:00Z", 2, 0}, // 62 days
		{"2025-03-01T10:00:00Z", "2025-03-01T09:00:00Z", 0, -time.Hour},
		{"2027-07-22T03:00:00Z", "2026-11-21T23:29:37Z", -8, -(3*time.Hour + 30*time.Minute + 23*time.Second)},
	} {
		m, r := monthsAndRest(at(tt.from), at(tt.to))
		require.Equal(t, tt.months, m, "%s to %s", tt.from, tt.to)
		require.Equal(t, tt.rest, r, "%s to %s", tt.from, tt.to)
	}
}
