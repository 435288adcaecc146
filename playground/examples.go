package playground

import (
	"encoding/json"
	"strings"
	"time"
)

// An Example is a query the playground opens in a tab of its own, the
// first time a browser opens it.
type Example struct {
	// Title says what the query answers; the tab shows it as a comment
	// above the query.
	Title string
	// Query is the GraphQL document, one named operation.
	Query string
	// Days, when not 0, is the period the operation's $from and $to
	// variables cover: the last Days days (of 24 hours) up to now.
	Days int
}

// Examples are the playground's tabs, in order: an analyst's dashboards
// first (read with the analyst role: `fideliza user token --role analyst`),
// then the lists. The first three are the calls serve --demo's banner
// prints.
var Examples = []Example{
	{
		Title: "Sales by store and day, the last 7 days: sales registered, and what was payable after discounts.",
		Query: `query SalesByStoreDay($from: Time!, $to: Time!) {
  salesByStoreDay(from: $from, to: $to) {
    day
    store { code name }
    sales
    amountPayable
  }
}`,
		Days: 7,
	},
	{
		Title: "The 5 customers who spent the most in the last 30 days, with their sales.",
		Query: `query TopCustomers($from: Time!, $to: Time!) {
  topCustomers(from: $from, to: $to, first: 5, by: SPEND) {
    customer { name level }
    spend
    sales
  }
}`,
		Days: 30,
	},
	{
		Title: "Experiments: campaigns with a control group, and what their treated customers bought beyond the held-out ones.",
		Query: `query ExperimentLift {
  campaigns(first: 5, where: {holdoutBasisPointsGT: 0}) {
    edges {
      node {
        name
        holdoutBasisPoints
        lift {
          treatedCustomers
          heldOutCustomers
          revenuePerCustomer { treated heldOut difference low high significant }
          discounts
          netRevenue
        }
      }
    }
  }
}`,
	},
	{
		Title: "Points liability: the unspent points customers could still redeem, in total and by loyalty level.",
		Query: `query PointsLiability {
  pointsLiability {
    total
    byLevel { level customers points }
  }
}`,
	},
	{
		Title: "The 20 newest customers, with their loyalty level and points balance.",
		Query: `query NewestCustomers {
  customers(first: 20, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    edges { node { id name level pointsBalance } }
  }
}`,
	},
	{
		Title: "Campaigns with their type and status: scheduled, active, paused or ended.",
		Query: `query Campaigns {
  campaigns(first: 20) {
    edges { node { id name type status } }
  }
}`,
	},
}

// Tab is the query as the playground's tab shows it: the title as a
// comment, then the query.
func (e Example) Tab() string { return "# " + e.Title + "\n" + e.Query + "\n" }

// Request is the body of a POST /graphql running the example over the
// period ending at now, as one line of JSON: what a curl command sends.
func (e Example) Request(now time.Time) []byte {
	body := map[string]any{"query": strings.Join(strings.Fields(e.Query), " ")}
	if e.Days != 0 {
		now = now.UTC().Truncate(time.Second)
		body["variables"] = map[string]string{
			"from": now.AddDate(0, 0, -e.Days).Format(time.RFC3339), "to": now.Format(time.RFC3339)}
	}
	b, _ := json.Marshal(body) // strings only: it cannot fail
	return b
}

// examplesJSON is the examples as the page's script reads them.
func examplesJSON() (string, error) {
	type tab struct {
		Query string `json:"query"`
		Days  int    `json:"days,omitempty"`
	}
	var tabs []tab
	for _, e := range Examples {
		tabs = append(tabs, tab{Query: e.Tab(), Days: e.Days})
	}
	b, err := json.Marshal(tabs)
	return string(b), err
}
