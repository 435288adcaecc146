package panel

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/httperr"
)

// segmentsPageSize is how many segments the list shows a page.
const segmentsPageSize = 50

// segmentForm is the form of an audience (or a static segment's name and
// description) as typed, with the preview asked for or the rule's problem.
type segmentForm struct {
	ID                string // "" for a new audience
	Name, Description string
	Rule              string
	Static            bool // a static segment: no rule to edit
	Preview           *audiences.Preview
	RuleProblem       *ruleProblem
}

// ruleProblem is a rule refused, told where: its line and column (1-based,
// as the operations name them), that line, and a caret under the column.
type ruleProblem struct {
	Line, Column int
	Message      string
	Source       string // the rule's line
	Caret        string // spaces, then ^ under the column
}

// rulePosition reads the line:column an operation's message starts with.
var rulePosition = regexp.MustCompile(`^(\d+):(\d+): (.*)$`)

// ruleProblemOf is the problem of the rule among err's details, located in
// rule; nil when err is no problem of the rule.
func ruleProblemOf(err error, rule string) *ruleProblem {
	e, ok := httperr.As(err)
	if !ok {
		return nil
	}
	for _, d := range e.Details {
		if d.Field != "rule" {
			continue
		}
		m := rulePosition.FindStringSubmatch(d.Message)
		if m == nil {
			return &ruleProblem{Message: d.Message}
		}
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		rp := &ruleProblem{Line: line, Column: col, Message: m[3]}
		if lines := strings.Split(rule, "\n"); line >= 1 && line <= len(lines) {
			rp.Source = lines[line-1]
			rp.Caret = strings.Repeat(" ", max(col-1, 0)) + "^"
		}
		return rp
	}
	return nil
}

// segments lists the tenant's segments, newest first, a page at a time.
func (p *panel) segments(w http.ResponseWriter, r *http.Request) {
	var after *ent.Cursor
	if c := r.URL.Query().Get("after"); c != "" {
		after = &ent.Cursor{ID: c}
	}
	conn, err := p.app.Customers.ListSegments(r.Context(), "", after, segmentsPageSize)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	data := page{Title: "Segments and audiences"}
	for _, e := range conn.Edges {
		data.Segments = append(data.Segments, e.Node)
	}
	if conn.PageInfo.HasNextPage && conn.PageInfo.EndCursor != nil {
		data.NextSegments = conn.PageInfo.EndCursor.ID
	}
	p.render(w, r, http.StatusOK, "segments", data)
}

// newSegment shows an empty audience form.
func (p *panel) newSegment(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "segment", page{Title: "New audience", SegmentForm: &segmentForm{}})
}

// segment shows a segment's form: an audience's rule to edit and preview,
// a static segment's name and description.
func (p *panel) segment(w http.ResponseWriter, r *http.Request) {
	seg, err := p.app.Customers.Segment(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		p.fail(w, r, err)
		return
	}
	f := &segmentForm{ID: seg.ID, Name: seg.Name, Description: seg.Description, Static: seg.Rule == nil}
	if seg.Rule != nil {
		f.Rule = *seg.Rule
	}
	data := page{Title: seg.Name, SegmentForm: f, Flash: flashes[r.URL.Query().Get("done")]}
	p.render(w, r, http.StatusOK, "segment", data)
}

// saveSegment previews the form's rule (button preview) or saves the form:
// a new audience (POST /segments) or a change (POST /segments/{id}).
// Refused, the form comes back as typed with the problem.
func (p *panel) saveSegment(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	_, hasRule := r.PostForm["rule"]
	f := &segmentForm{ID: chi.URLParam(r, "id"), Name: r.PostFormValue("name"),
		Description: r.PostFormValue("description"), Rule: r.PostFormValue("rule"), Static: !hasRule}
	title := "New audience"
	if f.ID != "" {
		title = f.Name
	}
	refused := func(err error) {
		status, msg := p.explain(r, err)
		if f.RuleProblem = ruleProblemOf(err, f.Rule); f.RuleProblem != nil {
			msg = "The rule was refused: see the problem under it."
		}
		p.render(w, r, status, "segment", page{Title: title, Error: msg, SegmentForm: f})
	}
	if r.PostFormValue("action") == "preview" {
		prev, err := p.app.Audiences.PreviewAudience(r.Context(), f.Rule)
		if err != nil {
			refused(err)
			return
		}
		f.Preview = prev
		p.render(w, r, http.StatusOK, "segment", page{Title: title, SegmentForm: f})
		return
	}
	in := customers.SegmentInput{Name: &f.Name, Description: &f.Description}
	if hasRule {
		in.Rule = &f.Rule
	}
	var seg *ent.Segment
	var err error
	if f.ID == "" {
		seg, err = p.app.Customers.CreateSegment(r.Context(), in)
	} else {
		seg, err = p.app.Customers.UpdateSegment(r.Context(), f.ID, in)
	}
	if err != nil {
		refused(err)
		return
	}
	http.Redirect(w, r, Base+"/segments/"+seg.ID+"?done=segment-saved", http.StatusSeeOther)
}
