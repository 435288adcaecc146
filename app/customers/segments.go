package customers

import (
	"context"
	"slices"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/storage"
)

// Limits of a membership change: one request, one bounded statement.
const (
	maxMembershipIDs = 1000
	maxImportCPFs    = 10000
)

// SegmentImport is what ImportSegmentCPFs did.
type SegmentImport struct {
	Segment        *ent.Segment
	Added          int
	AlreadyMembers int
	NotFound       []string // valid CPFs of no customer, as given
	Invalid        []string // entries that are no CPF, as given
}

// SegmentInput is a segment's create or change; a nil field is absent (a
// change leaves it as it is). Members are customer ids.
type SegmentInput struct {
	Name        *string
	Description *string
	// Rule makes an audience, whose members are kept by it; nil for a
	// static segment.
	Rule *string
	// AddMembers are the customers a static segment gains (on create, its
	// first members); RemoveMembers those it loses (ids of non-members are
	// ignored).
	AddMembers, RemoveMembers []string
}

// CreateSegment creates a segment in the viewer's tenant: static, with its
// first members if any, or an audience when a rule is given (its members,
// those the rule selects now, join in the same transaction).
func (a *Service) CreateSegment(ctx context.Context, in SegmentInput) (*ent.Segment, error) {
	if err := Rules.CreateSegment.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("name", in.Name, "description", in.Description, "rule", in.Rule, "members", in.AddMembers); err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, apperr.Invalid("name", "is required")
	}
	if err := a.checkSegment(in); err != nil {
		return nil, err
	}
	add, err := changeIDs("members", in.AddMembers, in.Rule != nil)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) (err error) {
		if seg, err = tx.Ent.Segment.Create().SetName(*in.Name).SetNillableDescription(in.Description).SetNillableRule(in.Rule).Save(ctx); err != nil {
			return err
		}
		if in.Rule != nil {
			return a.Audiences.RecomputeAudience(ctx, tx, seg.ID)
		}
		return a.changeMembers(ctx, tx, seg, "members", add, nil)
	})
	return seg, err
}

// UpdateSegment renames or describes a segment, changes an audience's rule
// (its members recomputed in the same transaction), or adds and removes a
// static segment's members, all at once. A static segment stays static: a
// rule is for an audience, whose members are its rule's.
func (a *Service) UpdateSegment(ctx context.Context, id string, in SegmentInput) (*ent.Segment, error) {
	if err := Rules.UpdateSegment.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "name", in.Name, "description", in.Description, "rule", in.Rule,
		"add_members", in.AddMembers, "remove_members", in.RemoveMembers); err != nil {
		return nil, err
	}
	if err := a.checkSegment(in); err != nil {
		return nil, err
	}
	add, err := changeIDs("add_members", in.AddMembers, false)
	if err != nil {
		return nil, err
	}
	remove, err := changeIDs("remove_members", in.RemoveMembers, false)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		old, err := a.lockSegment(ctx, tx.Ent, id)
		if err != nil {
			return err
		}
		switch {
		case in.Rule != nil && old.Rule == nil:
			return apperr.Invalid("rule", "a static segment has no rule: create an audience instead")
		case old.Rule != nil && len(add) > 0:
			return audienceMembers("add_members")
		case old.Rule != nil && len(remove) > 0:
			return audienceMembers("remove_members")
		}
		if seg, err = tx.Ent.Segment.UpdateOne(old).SetNillableName(in.Name).SetNillableDescription(in.Description).SetNillableRule(in.Rule).Save(ctx); err != nil {
			return err
		}
		if in.Rule != nil {
			return a.Audiences.RecomputeAudience(ctx, tx, seg.ID)
		}
		return a.changeMembers(ctx, tx, seg, "add_members", add, remove)
	})
	return seg, err
}

// changeIDs checks and deduplicates the customer ids of a change of field;
// none is a change of nothing. An audience takes none.
func changeIDs(field string, ids []string, audience bool) ([]string, error) {
	switch {
	case len(ids) == 0:
		return nil, nil
	case audience:
		return nil, apperr.Invalid(field, "an audience's members are kept by its rule: give members or a rule, not both")
	}
	return membershipIDs(field, ids)
}

// changeMembers adds the customers of add (every id a visible customer,
// else a problem of addField) to seg and removes those of remove.
func (a *Service) changeMembers(ctx context.Context, tx storage.Tx, seg *ent.Segment, addField string, add, remove []string) error {
	if len(add) > 0 {
		missing, err := a.addCustomers(ctx, tx, seg, add)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			return apperr.Invalid(addField, "customers not found: %s", strings.Join(missing, ", "))
		}
	}
	return a.removeCustomers(ctx, tx, seg, remove)
}

// ListSegments lists the segments of the viewer's tenant, newest first;
// kind "static" or "audience" keeps those only.
func (a *Service) ListSegments(ctx context.Context, kind string, after *ent.Cursor, first int) (*ent.SegmentConnection, error) {
	if err := Rules.ListSegments.Allow(ctx); err != nil {
		return nil, err
	}
	afterID := ""
	if after != nil {
		afterID = after.ID
	}
	// The cursor is an id a client sends back: no database stores a NUL or
	// invalid UTF-8 in it (the panel passes it as given).
	if err := kernel.Guarded("type", kind, "after", afterID); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if !kernel.ValidPageSize(first) {
		p.Add("limit", "must be between 1 and %d", kernel.MaxPageSize)
	}
	q := a.k.DB.Ent.Segment.Query()
	switch kind {
	case "":
	case "static":
		q.Where(segment.RuleIsNil())
	case "audience":
		q.Where(segment.RuleNotNil())
	default:
		p.Add("type", "must be static or audience")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return q.Paginate(ctx, after, &first, nil, nil, ent.WithSegmentOrder(&ent.SegmentOrder{
		Direction: entgql.OrderDirectionDesc, Field: ent.DefaultSegmentOrder.Field,
	}))
}

// Segment reads a segment of the viewer's tenant.
func (a *Service) Segment(ctx context.Context, id string) (*ent.Segment, error) {
	if err := Rules.Segment.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	seg, err := a.k.DB.Ent.Segment.Get(ctx, id)
	return seg, kernel.NotFoundAs(err, "segment")
}

func (a *Service) checkSegment(in SegmentInput) error {
	if in.Rule != nil {
		if _, err := a.Audiences.Check(*in.Rule); err != nil {
			return err
		}
	}
	var p apperr.Problems
	if in.Name != nil {
		if *in.Name = strings.TrimSpace(*in.Name); *in.Name == "" {
			p.Add("name", "must not be empty")
		}
	}
	if in.Description != nil && len(*in.Description) > 1000 {
		p.Add("description", "must be at most 1000 characters")
	}
	return p.Err()
}

// AddSegmentCustomers adds customers of the viewer's tenant to a segment;
// members stay members. Every id must name a visible customer.
func (a *Service) AddSegmentCustomers(ctx context.Context, segmentID string, customerIDs []string) (*ent.Segment, error) {
	if err := Rules.AddSegmentCustomers.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segmentID", segmentID, "customerIDs", customerIDs); err != nil {
		return nil, err
	}
	ids, err := membershipIDs("customerIDs", customerIDs)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if seg, err = a.lockStatic(ctx, tx.Ent, segmentID); err != nil {
			return err
		}
		missing, err := a.addCustomers(ctx, tx, seg, ids)
		if err == nil && len(missing) > 0 {
			err = &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "customerIDs",
				Message: "customers not found: " + strings.Join(missing, ", ")}
		}
		return err
	})
	return seg, err
}

// RemoveSegmentCustomers takes customers out of a segment; ids of
// non-members are ignored.
func (a *Service) RemoveSegmentCustomers(ctx context.Context, segmentID string, customerIDs []string) (*ent.Segment, error) {
	if err := Rules.RemoveSegmentCustomers.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segmentID", segmentID, "customerIDs", customerIDs); err != nil {
		return nil, err
	}
	ids, err := membershipIDs("customerIDs", customerIDs)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if seg, err = a.lockStatic(ctx, tx.Ent, segmentID); err != nil {
			return err
		}
		return a.removeCustomers(ctx, tx, seg, ids)
	})
	return seg, err
}

// ImportSegmentCPFs adds the customers with the given CPFs to a segment and
// reports the CPFs it could not use.
func (a *Service) ImportSegmentCPFs(ctx context.Context, segmentID string, cpfs []string) (*SegmentImport, error) {
	if err := Rules.ImportSegmentCPFs.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segmentID", segmentID, "cpfs", cpfs); err != nil {
		return nil, err
	}
	if len(cpfs) > maxImportCPFs {
		return nil, apperr.Invalid("cpfs", "at most %d CPFs per import", maxImportCPFs)
	}
	res := &SegmentImport{NotFound: []string{}, Invalid: []string{}}
	given := map[string]string{} // digits → as given
	for _, raw := range cpfs {
		d, err := document.ParseCPF(raw)
		if err != nil {
			res.Invalid = append(res.Invalid, raw)
			continue
		}
		if _, dup := given[d]; !dup {
			given[d] = raw
		}
	}
	digits := make([]string, 0, len(given))
	for d := range given {
		digits = append(digits, d)
	}
	slices.Sort(digits)
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		seg, err := a.lockStatic(ctx, tx.Ent, segmentID)
		if err != nil {
			return err
		}
		res.Segment, res.NotFound = seg, nil // a run again after a conflict lists afresh
		found, err := tx.Ent.Customer.Query().
			Where(customer.DocumentTypeEQ(customer.DocumentTypeCPF), oneOf(customer.FieldDocumentIndex, DocumentIndexes(digits))).
			Select(customer.FieldID, customer.FieldDocument).All(ctx)
		if err != nil {
			return err
		}
		ids := make([]string, len(found))
		known := map[string]bool{}
		for i, c := range found {
			ids[i], known[c.Document] = c.ID, true
		}
		for _, d := range digits {
			if !known[d] {
				res.NotFound = append(res.NotFound, given[d])
			}
		}
		if res.Added, err = addMembers(ctx, tx.Ent, seg, ids); err != nil {
			return err
		}
		res.AlreadyMembers = len(ids) - res.Added
		return a.Audiences.Refresh(ctx, tx, ids...)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// membershipIDs checks and deduplicates the customer ids of a change of
// field.
func membershipIDs(field string, ids []string) ([]string, error) {
	switch {
	case len(ids) == 0:
		return nil, apperr.Invalid(field, "must name at least one customer")
	case len(ids) > maxMembershipIDs:
		return nil, apperr.Invalid(field, "at most %d customers per change", maxMembershipIDs)
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// lockStatic is lockSegment for a change of members by hand: an audience's
// members are its rule's.
func (a *Service) lockStatic(ctx context.Context, c *ent.Client, id string) (*ent.Segment, error) {
	seg, err := a.lockSegment(ctx, c, id)
	if err == nil && seg.Rule != nil {
		return nil, audienceMembers("segmentID")
	}
	return seg, err
}

// audienceMembers refuses a change by hand of an audience's members.
func audienceMembers(field string) error {
	return apperr.Conflict("audience_members", field, "an audience's members are kept by its rule; change the rule instead")
}

// lockSegment reads a segment and, on PostgreSQL, locks its row: membership
// changes of one segment run one after the other, so none adds a member
// twice. SQLite's write transactions are serial already (BEGIN IMMEDIATE).
func (a *Service) lockSegment(ctx context.Context, c *ent.Client, id string) (*ent.Segment, error) {
	q := c.Segment.Query().Where(segment.ID(id))
	if a.k.DB.Dialect == dialect.Postgres {
		q.ForUpdate()
	}
	seg, err := q.Only(ctx)
	return seg, kernel.NotFoundAs(err, "segment")
}

// without returns the ids not in drop.
func without(ids, drop []string) []string {
	set := make(map[string]bool, len(drop))
	for _, id := range drop {
		set[id] = true
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return set[id] })
}

// addCustomers adds the customers of ids to seg, unless some id names no
// visible customer: those ids are returned and nothing is added. The
// audiences over static segments follow in tx.
func (a *Service) addCustomers(ctx context.Context, tx storage.Tx, seg *ent.Segment, ids []string) (missing []string, err error) {
	found, err := tx.Ent.Customer.Query().Where(customer.IDIn(ids...)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(found) != len(ids) {
		return without(ids, found), nil
	}
	if _, err = addMembers(ctx, tx.Ent, seg, found); err != nil {
		return nil, err
	}
	return nil, a.Audiences.Refresh(ctx, tx, found...) // audiences over static segments
}

// removeCustomers takes the members among ids out of seg; the audiences
// over static segments follow in tx.
func (a *Service) removeCustomers(ctx context.Context, tx storage.Tx, seg *ent.Segment, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	members, err := seg.QueryCustomers().Where(customer.IDIn(ids...)).IDs(ctx)
	if err != nil || len(members) == 0 {
		return err
	}
	if err := tx.Ent.Segment.UpdateOne(seg).RemoveCustomerIDs(members...).Exec(ctx); err != nil {
		return err
	}
	return a.Audiences.Refresh(ctx, tx, members...)
}

// addMembers adds the customers of ids not yet in seg and returns how many
// joined.
func addMembers(ctx context.Context, c *ent.Client, seg *ent.Segment, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	members, err := seg.QueryCustomers().Where(customer.IDIn(ids...)).IDs(ctx)
	if err != nil {
		return 0, err
	}
	joining := without(ids, members)
	if len(joining) == 0 {
		return 0, nil
	}
	return len(joining), c.Segment.UpdateOne(seg).AddCustomerIDs(joining...).Exec(ctx)
}
