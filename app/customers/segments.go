package customers

import (
	"context"
	"slices"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"

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

// CreateSegment creates a segment in the viewer's tenant: static, or an
// audience when rule is given (its members, those the rule selects now,
// join in the same transaction).
func (a *Service) CreateSegment(ctx context.Context, name string, description, rule *string) (*ent.Segment, error) {
	if err := Policy.Allow(ctx, "CreateSegment"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("name", name, "description", description, "rule", rule); err != nil {
		return nil, err
	}
	if err := a.checkSegment(&name, description, rule); err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err := a.DB.InTx(ctx, func(tx storage.Tx) (err error) {
		if seg, err = tx.Ent.Segment.Create().SetName(name).SetNillableDescription(description).SetNillableRule(rule).Save(ctx); err != nil || rule == nil {
			return err
		}
		return a.Audiences.RecomputeAudience(ctx, tx, seg.ID)
	})
	return seg, err
}

// UpdateSegment renames or describes a segment, or changes an audience's
// rule (its members recomputed in the same transaction); nil leaves a field
// as it is. A static segment stays static: a rule is for an audience.
func (a *Service) UpdateSegment(ctx context.Context, id string, name, description, rule *string) (*ent.Segment, error) {
	if err := Policy.Allow(ctx, "UpdateSegment"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "name", name, "description", description, "rule", rule); err != nil {
		return nil, err
	}
	if err := a.checkSegment(name, description, rule); err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err := a.DB.InTx(ctx, func(tx storage.Tx) error {
		old, err := a.lockSegment(ctx, tx.Ent, id)
		if err != nil {
			return err
		}
		if rule != nil && old.Rule == nil {
			return apperr.Invalid("rule", "a static segment has no rule: create an audience instead")
		}
		if seg, err = tx.Ent.Segment.UpdateOne(old).SetNillableName(name).SetNillableDescription(description).SetNillableRule(rule).Save(ctx); err != nil || rule == nil {
			return err
		}
		return a.Audiences.RecomputeAudience(ctx, tx, seg.ID)
	})
	return seg, err
}

func (a *Service) checkSegment(name, description, rule *string) error {
	if rule != nil {
		if _, err := a.Audiences.Check(*rule); err != nil {
			return err
		}
	}
	var p apperr.Problems
	if name != nil {
		if *name = strings.TrimSpace(*name); *name == "" {
			p.Add("name", "must not be empty")
		}
	}
	if description != nil && len(*description) > 1000 {
		p.Add("description", "must be at most 1000 characters")
	}
	return p.Err()
}

// AddSegmentCustomers adds customers of the viewer's tenant to a segment;
// members stay members. Every id must name a visible customer.
func (a *Service) AddSegmentCustomers(ctx context.Context, segmentID string, customerIDs []string) (*ent.Segment, error) {
	if err := Policy.Allow(ctx, "AddSegmentCustomers"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segment_id", segmentID, "customer_i_ds", customerIDs); err != nil {
		return nil, err
	}
	ids, err := membershipIDs(customerIDs)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.DB.InTx(ctx, func(tx storage.Tx) error {
		if seg, err = a.lockStatic(ctx, tx.Ent, segmentID); err != nil {
			return err
		}
		found, err := tx.Ent.Customer.Query().Where(customer.IDIn(ids...)).IDs(ctx)
		if err != nil {
			return err
		}
		if len(found) != len(ids) {
			missing := without(ids, found)
			return &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "customerIDs",
				Message: "customers not found: " + strings.Join(missing, ", ")}
		}
		if _, err = addMembers(ctx, tx.Ent, seg, found); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, found...) // audiences over static segments
	})
	return seg, err
}

// RemoveSegmentCustomers takes customers out of a segment; ids of
// non-members are ignored.
func (a *Service) RemoveSegmentCustomers(ctx context.Context, segmentID string, customerIDs []string) (*ent.Segment, error) {
	if err := Policy.Allow(ctx, "RemoveSegmentCustomers"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segment_id", segmentID, "customer_i_ds", customerIDs); err != nil {
		return nil, err
	}
	ids, err := membershipIDs(customerIDs)
	if err != nil {
		return nil, err
	}
	var seg *ent.Segment
	err = a.DB.InTx(ctx, func(tx storage.Tx) error {
		if seg, err = a.lockStatic(ctx, tx.Ent, segmentID); err != nil {
			return err
		}
		members, err := seg.QueryCustomers().Where(customer.IDIn(ids...)).IDs(ctx)
		if err != nil || len(members) == 0 {
			return err
		}
		if err := tx.Ent.Segment.UpdateOne(seg).RemoveCustomerIDs(members...).Exec(ctx); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, members...)
	})
	return seg, err
}

// ImportSegmentCPFs adds the customers with the given CPFs to a segment and
// reports the CPFs it could not use.
func (a *Service) ImportSegmentCPFs(ctx context.Context, segmentID string, cpfs []string) (*SegmentImport, error) {
	if err := Policy.Allow(ctx, "ImportSegmentCPFs"); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("segment_id", segmentID, "cpfs", cpfs); err != nil {
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
	err := a.DB.InTx(ctx, func(tx storage.Tx) error {
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

// membershipIDs checks and deduplicates the customer ids of a change.
func membershipIDs(ids []string) ([]string, error) {
	switch {
	case len(ids) == 0:
		return nil, apperr.Invalid("customerIDs", "must name at least one customer")
	case len(ids) > maxMembershipIDs:
		return nil, apperr.Invalid("customerIDs", "at most %d customers per change", maxMembershipIDs)
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
		return nil, apperr.Conflict("audience_members", "segmentID", "an audience's members are kept by its rule; change the rule instead")
	}
	return seg, err
}

// lockSegment reads a segment and, on PostgreSQL, locks its row: membership
// changes of one segment run one after the other, so none adds a member
// twice. SQLite's write transactions are serial already (BEGIN IMMEDIATE).
func (a *Service) lockSegment(ctx context.Context, c *ent.Client, id string) (*ent.Segment, error) {
	q := c.Segment.Query().Where(segment.ID(id))
	if a.DB.Dialect == dialect.Postgres {
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
