package rest

import (
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
)

// segmentBody is the segment JSON of create and PATCH (a JSON merge patch:
// only the fields present change). members are customer ids (cus_…): the
// first members of a static segment on create; add_members and
// remove_members change them on PATCH.
type segmentBody struct {
	Name          opt.Field[string]   `json:"name"`
	Description   opt.Field[string]   `json:"description"`
	Rule          opt.Field[string]   `json:"rule"`
	Members       opt.Field[[]string] `json:"members"`
	AddMembers    opt.Field[[]string] `json:"add_members"`
	RemoveMembers opt.Field[[]string] `json:"remove_members"`
}

// input translates the body of create (patch false) or PATCH. name and
// rule cannot be cleared (a static segment takes no rule, an audience
// keeps one): null is refused; a null description clears it; a null list
// of members is no members.
func (b segmentBody) input(patch bool) (customers.SegmentInput, error) {
	var p apperr.Problems
	refuse := func(field string, refused bool, problem string) {
		if refused {
			p.Add(field, "%s", problem)
		}
	}
	refuse("name", b.Name.Null, "must not be null")
	refuse("rule", b.Rule.Null, "must not be null")
	refuse("members", patch && b.Members.Set, "is set on create; use add_members and remove_members")
	refuse("add_members", !patch && b.AddMembers.Set, "is for PATCH; give the first members as members")
	refuse("remove_members", !patch && b.RemoveMembers.Set, "is for PATCH")
	in := customers.SegmentInput{Name: b.Name.Ptr(), Description: b.Description.Ptr(), Rule: b.Rule.Ptr(),
		AddMembers: b.AddMembers.Value, RemoveMembers: b.RemoveMembers.Value}
	if !patch {
		in.AddMembers = b.Members.Value
	}
	if b.Description.Null {
		empty := ""
		in.Description = &empty
	}
	return in, p.Err()
}

// segmentJSON is a segment as every answer shows it. Its members are listed
// by GET /v1/customers?segment_id=.
type segmentJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Type        string  `json:"type"`
	Rule        *string `json:"rule"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

// segmentCreated is the 201 body of create, at its Location.
type segmentCreated struct {
	location
	segmentJSON
}

func renderSegment(seg *ent.Segment) segmentJSON {
	kind := "static"
	if seg.Rule != nil {
		kind = "audience"
	}
	return segmentJSON{ID: seg.ID, Name: seg.Name, Description: seg.Description, Type: kind, Rule: seg.Rule,
		CreatedAt: timestamp(seg.CreatedAt), UpdatedAt: timestamp(seg.UpdatedAt)}
}

func newSegmentJSON(seg *ent.Segment) segmentCreated {
	return segmentCreated{location: location("/v1/segments/" + seg.ID), segmentJSON: renderSegment(seg)}
}

// readSegment reads POST /v1/segments.
func readSegment(b *binder) customers.SegmentInput {
	in, err := jsonBody[segmentBody](b).input(false)
	b.refuse(err)
	return in
}

// readSegmentPatch reads PATCH /v1/segments/{id}.
func readSegmentPatch(b *binder) onPath[customers.SegmentInput] {
	in, err := jsonBody[segmentBody](b).input(true)
	b.refuse(err)
	return onPath[customers.SegmentInput]{id: pathID(b), in: in}
}

// readSegmentPage reads GET /v1/segments.
func readSegmentPage(b *binder) paged[string] {
	return paged[string]{pageRequest: b.page("seg_"), filter: b.query("type")}
}

func segmentPage(conn *ent.SegmentConnection) listJSON[segmentJSON] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.SegmentEdge) segmentJSON { return renderSegment(e.Node) })
}

// readPreview reads POST /v1/segments/preview: the rule to preview.
func readPreview(b *binder) string {
	var body struct {
		Rule opt.Field[string] `json:"rule"`
	}
	b.body(&body)
	if !body.Rule.Present() {
		b.problems.Add("rule", "is required")
	}
	return body.Rule.Value
}

// previewJSON is an audience's preview: how many customers its rule
// selects now and a few of them, masked (id, level, document).
type previewJSON struct {
	Count  int                 `json:"count"`
	Sample []previewMemberJSON `json:"sample"`
}

type previewMemberJSON struct {
	ID             string `json:"id"`
	Level          string `json:"level"`
	MaskedDocument string `json:"masked_document"`
}

func renderPreview(p *audiences.Preview) previewJSON {
	out := previewJSON{Count: p.Count, Sample: make([]previewMemberJSON, len(p.Sample))}
	for i, m := range p.Sample {
		out.Sample[i] = previewMemberJSON{ID: m.ID, Level: m.Level, MaskedDocument: m.MaskedDocument}
	}
	return out
}
