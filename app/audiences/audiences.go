// Package audiences is the audiences context: segments whose members a rule
// over the customers' facts keeps (domain/audience), their preview, and the
// membership kept true: for the customers whose facts a transaction changed
// (Refresh, in that transaction) and for every customer (RecomputeAudiences,
// periodic). Members are stored as a static segment's are (customer_segments),
// so campaigns, validate and authorize read them as they read any segment's,
// and never evaluate a rule.
package audiences

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/audience"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
)

// SampleSize is how many customers a preview shows.
const SampleSize = 10

// Service owns the operations of the audiences context.
type Service struct {
	k        *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	compiled sync.Map       // rule source → *audience.Rule
	previews previews
}

// Check compiles a rule: an unknown fact or a type mismatch is invalid,
// naming its line:column.
func (a *Service) Check(src string) (*audience.Rule, error) {
	if r, ok := a.compiled.Load(src); ok {
		return r.(*audience.Rule), nil
	}
	r, err := audience.Compile(src)
	if err != nil {
		return nil, err
	}
	a.compiled.Store(src, r)
	return r, nil
}

// Member is a customer of a preview, masked: its id, level and document
// with only its last two characters visible; no name nor contact.
type Member struct {
	ID, MaskedDocument, Level string
}

// Preview is how many customers a rule selects now, and a few of them.
type Preview struct {
	Count  int
	Sample []Member
}

// PreviewAudience evaluates rule over every customer of the viewer's tenant
// without saving anything, within a request's bounds (budget.go): a client
// has at most PreviewsPerClient in flight, and one stops when its client
// leaves, its time is spent or its cost is over the budget.
func (a *Service) PreviewAudience(ctx context.Context, rule string) (*Preview, error) {
	if err := Rules.PreviewAudience.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("rule", rule); err != nil {
		return nil, err
	}
	r, err := a.Check(rule)
	if err != nil {
		return nil, err
	}
	done, err := a.previews.admit(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, cancel, b := bounded(ctx)
	defer cancel()
	p, err := a.preview(ctx, r, b)
	return p, spent(ctx, err)
}

// preview is PreviewAudience's count and sample of r, charged to b.
func (a *Service) preview(ctx context.Context, r *audience.Rule, b *budget) (*Preview, error) {
	if p, ok, err := a.previewInDatabase(ctx, r); ok || err != nil {
		return p, err
	}
	rd, err := a.reader(ctx, a.k.DB.Ent, []*audience.Rule{r})
	if err != nil {
		return nil, err
	}
	p := &Preview{Sample: []Member{}}
	var sample []string
	err = rd.pages(ctx, func(_ scope, ids []string, facts []audience.Facts) error {
		for i := range facts {
			ok, err := b.match(ctx, r, &facts[i])
			if err != nil {
				return err
			}
			if ok {
				p.Count++
				if len(sample) < SampleSize {
					sample = append(sample, ids[i])
				}
			}
		}
		return nil
	})
	if err != nil || len(sample) == 0 {
		return p, err
	}
	p.Sample, err = members(ctx, a.k.DB.Ent.Customer.Query().Where(customer.IDIn(sample...)))
	return p, err
}

// previewInDatabase previews r by counting in the database and reading
// the sample alone, when r translates into a WHERE (where.go); ok is false
// when it does not.
func (a *Service) previewInDatabase(ctx context.Context, r *audience.Rule) (p *Preview, ok bool, err error) {
	tn, loc, err := a.zone(ctx, a.k.DB.Ent)
	if err != nil {
		return nil, false, err
	}
	t := &translation{tenantID: tn.ID, now: a.k.Now(), loc: loc, groups: map[string][]string{}}
	if slices.ContainsFunc(r.Names(), func(n string) bool { return strings.HasPrefix(n, "group_") }) {
		stores, err := readStores(ctx, a.k.DB.Ent)
		if err != nil {
			return nil, false, err
		}
		for _, st := range stores {
			for _, g := range st.Groups {
				t.groups[g] = append(t.groups[g], st.ID)
			}
		}
	}
	w, ok := t.where(r)
	if !ok {
		return nil, false, nil
	}
	p = &Preview{}
	if p.Count, err = a.k.DB.Ent.Customer.Query().Where(w).Count(ctx); err != nil {
		return nil, true, err
	}
	p.Sample, err = members(ctx, a.k.DB.Ent.Customer.Query().Where(w).Limit(SampleSize))
	return p, true, err
}

// members are the customers of q, masked, in id order.
func members(ctx context.Context, q *ent.CustomerQuery) ([]Member, error) {
	custs, err := q.Order(ent.Asc(customer.FieldID)).
		Select(customer.FieldDocument, customer.FieldDocumentType, customer.FieldLevel).All(ctx)
	m := []Member{}
	for _, c := range custs {
		m = append(m, Member{ID: c.ID, Level: string(c.Level),
			MaskedDocument: document.Mask(document.Type(c.DocumentType), c.Document)})
	}
	return m, err
}

// zone is the viewer's tenant, read through c, and its time zone.
func (a *Service) zone(ctx context.Context, c *ent.Client) (*ent.Tenant, *time.Location, error) {
	t, err := a.k.SettingsIn(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	loc, err := points.Zone(t.TimeZone)
	return t, loc, err
}

// reader reads facts through c for the rules, in the viewer's tenant's
// time zone.
func (a *Service) reader(ctx context.Context, c *ent.Client, rules []*audience.Rule) (*reader, error) {
	_, loc, err := a.zone(ctx, c)
	if err != nil {
		return nil, err
	}
	// Outside a transaction, pages may be read on several connections.
	r := &reader{c: c, concurrent: c == a.k.DB.Ent, now: a.k.Now(), loc: loc, needs: needsOf(rules)}
	if r.needs.sales {
		r.stores, err = readStores(ctx, c)
	}
	return r, err
}

// audiencesOf are the audiences of the viewer's tenant (or the one id) and
// their rules.
func (a *Service) audiencesOf(ctx context.Context, c *ent.Client, id string) ([]*ent.Segment, []*audience.Rule, error) {
	q := c.Segment.Query().Where(segment.RuleNotNil()).Order(ent.Asc(segment.FieldID)).Select(segment.FieldRule)
	if id != "" {
		q.Where(segment.ID(id))
	}
	segs, err := q.All(ctx)
	if err != nil {
		return nil, nil, err
	}
	rules := make([]*audience.Rule, len(segs))
	for i, s := range segs {
		if rules[i], err = a.Check(*s.Rule); err != nil {
			return nil, nil, fmt.Errorf("audience %s: %w", s.ID, err)
		}
	}
	return segs, rules, nil
}

// Refresh recomputes, in tx, the audiences' membership of the customers
// whose facts tx changed (a sale processed, a return, a level, consents,
// a profile): when tx commits, their membership is current. Call it after
// the change's writes.
func (a *Service) Refresh(ctx context.Context, tx storage.Tx, customerIDs ...string) error {
	if len(customerIDs) == 0 {
		return nil
	}
	segs, rules, err := a.audiencesOf(ctx, tx.Ent, "")
	if err != nil || len(segs) == 0 {
		return err
	}
	ids := slices.Clone(customerIDs)
	slices.Sort(ids)
	return a.apply(ctx, tx, segs, rules, scope{ids: slices.Compact(ids)})
}

// RecomputeAudience recomputes one audience for every customer of the
// viewer's tenant, in tx (a rule just saved), within a request's bounds as
// a preview (budget.go): a rule over them is refused, audience_too_costly.
func (a *Service) RecomputeAudience(ctx context.Context, tx storage.Tx, id string) error {
	ctx, cancel, b := bounded(ctx)
	defer cancel()
	return spent(ctx, a.recomputeAudience(ctx, tx, id, b))
}

func (a *Service) recomputeAudience(ctx context.Context, tx storage.Tx, id string, b *budget) error {
	segs, rules, err := a.audiencesOf(ctx, tx.Ent, id)
	if err != nil || len(segs) == 0 {
		return err
	}
	rd, err := a.reader(ctx, tx.Ent, rules)
	if err != nil {
		return err
	}
	return rd.pages(ctx, func(sc scope, ids []string, facts []audience.Facts) error {
		return a.write(ctx, tx, segs, rules, sc, ids, facts, b)
	})
}

// RecomputeAudiences recomputes every audience of every active tenant, a
// page of customers per transaction; a tenant that fails does not stop the
// others. It catches what no Refresh saw: days passing (days since the
// last purchase), churn scores refitted, static segments' changes.
func (a *Service) RecomputeAudiences(ctx context.Context, _ jobs.RecomputeAudiences) error {
	if err := Rules.RecomputeAudiences.Allow(ctx); err != nil {
		return err
	}
	return a.k.EachActiveTenant(ctx, "audiences of", a.recomputeTenant)
}

// RecomputeTenant recomputes every audience of the viewer's tenant, as
// RecomputeAudiences does, after a change over all its customers (their
// churn scores refitted).
func (a *Service) RecomputeTenant(ctx context.Context) error {
	return a.recomputeTenant(ctx)
}

func (a *Service) recomputeTenant(ctx context.Context) error {
	segs, rules, err := a.audiencesOf(ctx, a.k.DB.Ent, "")
	if err != nil || len(segs) == 0 {
		return err
	}
	rd, err := a.reader(ctx, a.k.DB.Ent, rules)
	if err != nil {
		return err
	}
	return rd.pages(ctx, func(sc scope, _ []string, _ []audience.Facts) error {
		return a.k.DB.InTx(ctx, func(tx storage.Tx) error { return a.apply(ctx, tx, segs, rules, sc) })
	})
}

// apply reads the facts of the customers of sc in tx and writes their
// membership of segs.
func (a *Service) apply(ctx context.Context, tx storage.Tx, segs []*ent.Segment, rules []*audience.Rule, sc scope) error {
	rd, err := a.reader(ctx, tx.Ent, rules)
	if err != nil {
		return err
	}
	ids, facts, err := rd.facts(ctx, &sc)
	if err != nil {
		return err
	}
	return a.write(ctx, tx, segs, rules, sc, ids, facts, nil)
}

// write makes the members of segs among the customers of sc (ids, with
// their facts) those their rules match. The rows go straight to the
// membership table: the audiences and customers were read through the
// tenant's policy just before, and a segment's row is not locked by every
// sale that changes its members. The rules' evaluations are charged to b.
func (a *Service) write(ctx context.Context, tx storage.Tx, segs []*ent.Segment, rules []*audience.Rule, sc scope, ids []string, facts []audience.Facts, b *budget) error {
	segIDs := make([]string, len(segs))
	for i, s := range segs {
		segIDs[i] = s.ID
	}
	current, err := tx.Ent.Segment.Query().Where(segment.IDIn(segIDs...)).Select(segment.FieldID).
		WithCustomers(func(q *ent.CustomerQuery) { q.Where(sc.customer()...).Select(customer.FieldID) }).All(ctx)
	if err != nil {
		return err
	}
	members := map[string]map[string]bool{}
	for _, s := range current {
		members[s.ID] = map[string]bool{}
		for _, c := range s.Edges.Customers {
			members[s.ID][c.ID] = true
		}
	}
	var add, drop [][2]string
	for j, s := range segs {
		for i := range facts {
			in, err := b.match(ctx, rules[j], &facts[i])
			if err != nil {
				return err
			}
			switch was := members[s.ID][ids[i]]; {
			case in && !was:
				add = append(add, [2]string{ids[i], s.ID})
			case !in && was:
				drop = append(drop, [2]string{ids[i], s.ID})
			}
		}
	}
	return a.writeRows(ctx, tx, add, drop)
}

// rowsPerStatement bounds a statement's parameters (SQLite allows 32,766).
const rowsPerStatement = 500

func (a *Service) writeRows(ctx context.Context, tx storage.Tx, add, drop [][2]string) error {
	for part := range slices.Chunk(add, rowsPerStatement) {
		q, args := pairs("INSERT INTO customer_segments (customer_id, segment_id) VALUES ", "($%d, $%d)", ", ", part)
		if _, err := tx.SQL.ExecContext(ctx, q+" ON CONFLICT DO NOTHING", args...); err != nil {
			return err
		}
	}
	for part := range slices.Chunk(drop, rowsPerStatement) {
		q, args := pairs("DELETE FROM customer_segments WHERE ", "(customer_id = $%d AND segment_id = $%d)", " OR ", part)
		if _, err := tx.SQL.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// pairs is a statement over (customer, segment) pairs, each written as
// each with its two parameters' numbers, joined by sep.
func pairs(head, each, sep string, ps [][2]string) (string, []any) {
	var b strings.Builder
	b.WriteString(head)
	args := make([]any, 0, 2*len(ps))
	for i, p := range ps {
		if i > 0 {
			b.WriteString(sep)
		}
		fmt.Fprintf(&b, each, 2*i+1, 2*i+2)
		args = append(args, p[0], p[1])
	}
	return b.String(), args
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
