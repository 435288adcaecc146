package rest

import (
	"net/url"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
)

type pagination struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
	Total      int     `json:"total"`
}

// newPagination renders a connection's page info as the pagination object.
func newPagination(info entgql.PageInfo[string], total int) pagination {
	p := pagination{HasMore: info.HasNextPage, Total: total}
	if p.HasMore && info.EndCursor != nil {
		var b strings.Builder
		info.EndCursor.MarshalGQL(&b)
		c, _ := strconv.Unquote(b.String())
		p.NextCursor = &c
	}
	return p
}

// parseCursor decodes a next_cursor of a list keyed by id (with a value
// too when valued: a list in another order, which checks it): anything
// else (a tampered or foreign cursor) would reach the keyset comparison of
// the query and fail there or be read as some other value, so it is
// refused.
func parseCursor(v, idPrefix string, valued bool) (*ent.Cursor, bool) {
	c := &ent.Cursor{}
	if err := c.UnmarshalGQL(v); err != nil || !strings.HasPrefix(c.ID, idPrefix) || (c.Value != nil && !valued) {
		return nil, false
	}
	return c, true
}

// pageQuery reads the limit (default 20, 1 to 100) and cursor of a list
// keyed by ids of idPrefix, adding their problems to p.
func pageQuery(q url.Values, idPrefix string, valued bool, p *apperr.Problems) (after *ent.Cursor, limit int) {
	limit = 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			p.Add("limit", "must be an integer between 1 and 100")
		}
		limit = n
	}
	if v := q.Get("cursor"); v != "" {
		var ok bool
		if after, ok = parseCursor(v, idPrefix, valued); !ok {
			p.Add("cursor", "is not a cursor of this list; use next_cursor of the previous page")
		}
	}
	return after, limit
}
