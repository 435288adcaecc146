package schema_test

import (
	"context"
	"strconv"
	"time"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/churnmodel"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/customerimportchunk"
	"github.com/fideliza/fideliza/ent/customerimportproblem"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/viewer"
)

// saleAndImportKinds are the kinds of sales, churn models and customer
// imports.
func saleAndImportKinds() []kind {
	return []kind{
		{
			// After stores and customers: a sale is made at a store of its
			// tenant and credited to a customer of it. The name is the
			// failure reason, a mutable string.
			table: sale.Table,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				st, err := storeOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				cu, err := customerOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSale(c, st).SetCustomerID(cu).SetFailureReason(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.Sale.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Sale.Get(ctx, id)
				if err != nil || r.FailureReason == nil {
					return "", err
				}
				return *r.FailureReason, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Sale.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.Sale.UpdateOneID(id).SetFailureReason(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.Sale.Update().SetFailureReason(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error { return c.Sale.DeleteOneID(id).Exec(ctx) },
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				// The sales' items and payments refer to them (no cascade).
				v, _ := viewer.FromContext(ctx)
				if err := deleteSaleLinesOf(ctx, c, v.TenantID); err != nil {
					return 0, err
				}
				return c.Sale.Delete().Exec(ctx)
			},
		},
		{
			// After sales: an item is a line of a sale of its tenant. The
			// name is the description, an immutable field.
			table:     saleitem.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				sa, err := saleOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSaleItem(c, sa).SetDescription(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.SaleItem.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleItem.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Description, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SaleItem.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.SaleItem.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.SaleItem.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.SaleItem.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.SaleItem.Delete().Exec(ctx) },
		},
		{
			// After sales: a payment is of a sale of its tenant. The name is
			// the NSU, an immutable field.
			table:     salepayment.Table,
			immutable: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				sa, err := saleOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := newSalePayment(c, sa).SetNsu(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.SalePayment.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SalePayment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Nsu, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.SalePayment.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.SalePayment.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.SalePayment.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.SalePayment.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.SalePayment.Delete().Exec(ctx) },
		},
		{
			// A model's name is its customers count, an immutable field.
			table:     churnmodel.Table,
			immutable: true,
			notNode:   true,
			value:     func() string { return strconv.FormatInt(seq.Add(1), 10) },
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				n, err := strconv.Atoi(name)
				if err != nil {
					return "", err
				}
				m := c.ChurnModel.Create().SetFittedAt(time.Now().UTC()).SetCustomers(n).SetR(0.2).SetAlpha(4).SetA(0.8).SetB(2.4).
					SetLogLikelihood(-1)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) { return c.ChurnModel.Query().IDs(ctx) },
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ChurnModel.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.Customers), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.ChurnModel.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.ChurnModel.UpdateOneID(id).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.ChurnModel.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.ChurnModel.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.ChurnModel.Delete().Exec(ctx) },
		},
		{
			// The name is the error, a mutable field.
			table:   customerimport.Table,
			notNode: true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				m := c.CustomerImport.Create().SetFormat(customerimport.FormatCsv).SetError(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return r.ID, nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				return c.CustomerImport.Query().Where(notImportHolder).IDs(ctx)
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImport.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.Error, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImport.Get(ctx, id)
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			update: func(ctx context.Context, c *ent.Client, id, name string) error {
				return c.CustomerImport.UpdateOneID(id).SetError(name).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, name string) (int, error) {
				return c.CustomerImport.Update().Where(notImportHolder).SetError(name).Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImport.DeleteOneID(id).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.CustomerImport.Delete().Where(notImportHolder).Exec(ctx)
			},
		},
		{
			// A change of the change feed: its name is its instant, an
			// immutable field.
			table:      change.Table,
			appendOnly: true,
			ledger:     true,
			notNode:    true,
			value:      uniquePublishedAt,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				at, err := time.Parse(time.RFC3339, name)
				if err != nil {
					return "", err
				}
				m := c.Change.Create().SetPart(change.PartCampaigns).SetCreatedAt(at)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.ID), nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				ids, err := c.Change.Query().IDs(ctx)
				return itoas(ids), err
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Change.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.CreatedAt.UTC().Format(time.RFC3339), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.Change.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing, and must
			// still be refused.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.Change.UpdateOneID(atoi(id)).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.Change.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.Change.DeleteOneID(atoi(id)).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.Change.Delete().Exec(ctx) },
		},
		{
			// The name is the chunk's data, an immutable field.
			table:     customerimportchunk.Table,
			immutable: true,
			notNode:   true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				imp, err := importOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.CustomerImportChunk.Create().SetImportID(imp).SetSeq(0).SetData([]byte(name))
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.ID), nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				ids, err := c.CustomerImportChunk.Query().IDs(ctx)
				return itoas(ids), err
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportChunk.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return string(r.Data), nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportChunk.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.CustomerImportChunk.UpdateOneID(atoi(id)).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.CustomerImportChunk.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImportChunk.DeleteOneID(atoi(id)).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) { return c.CustomerImportChunk.Delete().Exec(ctx) },
		},
		{
			// The name is the message, an immutable field.
			table:     customerimportproblem.Table,
			immutable: true,
			notNode:   true,
			create: func(ctx context.Context, c *ent.Client, tenantID, name string) (string, error) {
				imp, err := importOf(ctx, c, tenantID)
				if err != nil {
					return "", err
				}
				m := c.CustomerImportProblem.Create().SetImportID(imp).SetLine(2).SetMessage(name)
				if tenantID != "" {
					m.SetTenantID(tenantID)
				}
				r, err := m.Save(ctx)
				if err != nil {
					return "", err
				}
				return strconv.Itoa(r.ID), nil
			},
			list: func(ctx context.Context, c *ent.Client) ([]string, error) {
				ids, err := c.CustomerImportProblem.Query().IDs(ctx)
				return itoas(ids), err
			},
			get: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportProblem.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.Message, nil
			},
			tenantOf: func(ctx context.Context, c *ent.Client, id string) (string, error) {
				r, err := c.CustomerImportProblem.Get(ctx, atoi(id))
				if err != nil {
					return "", err
				}
				return r.TenantID, nil
			},
			// Every field is immutable: the update sets nothing.
			update: func(ctx context.Context, c *ent.Client, id, _ string) error {
				return c.CustomerImportProblem.UpdateOneID(atoi(id)).Exec(ctx)
			},
			updateAll: func(ctx context.Context, c *ent.Client, _ string) (int, error) {
				return c.CustomerImportProblem.Update().Save(ctx)
			},
			delete: func(ctx context.Context, c *ent.Client, id string) error {
				return c.CustomerImportProblem.DeleteOneID(atoi(id)).Exec(ctx)
			},
			deleteAll: func(ctx context.Context, c *ent.Client) (int, error) {
				return c.CustomerImportProblem.Delete().Exec(ctx)
			},
		},
	}
}
