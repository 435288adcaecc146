package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/graph/apperr"
)

// RootFieldScopes maps every root field of the schema to the scope it needs;
// "" needs only a valid token. A root field missing here is refused, and a
// test fails until it is added.
var RootFieldScopes = map[string]string{
	"Query.node":           "", // checked per type by nodeScope
	"Query.nodes":          "", // checked per type by nodeScope
	"Query.tenants":        "", // a viewer sees its own tenant
	"Query.stores":         "campaigns:read",
	"Query.apiClients":     ScopeBackoffice,
	"Query.customers":      "customers:read",
	"Query.customerSearch": "customers:read",
	"Query.segments":       "customers:read",
	"Query.campaigns":      "campaigns:read",

	"Query.pointsLiability": "loyalty:read",
	"Query.sales":           ScopeBackoffice,
	"Query.redemptions":     "campaigns:read",

	"Mutation.createCustomer": "customers:write",
	"Mutation.updateCustomer": "customers:write",
	"Mutation.creditPoints":   "loyalty:write",
	"Mutation.debitPoints":    "loyalty:write",
	"Mutation.createCampaign": "campaigns:write",
	"Mutation.pauseCampaign":  "campaigns:write",
	"Mutation.resumeCampaign": "campaigns:write",
	"Mutation.endCampaign":    "campaigns:write",
	"Mutation.validateCart":   "campaigns:read",
	"Mutation.redeemCampaign": "campaigns:write",
	"Mutation.adjustPoints":   ScopeBackofficeWrite,
}

// FieldScopes guards fields below the root whose data another scope owns:
// reading a customer does not grant reading its ledger.
var FieldScopes = map[string]string{
	"Customer.pointsEntries": "loyalty:read",
}

// authorizeField refuses a field of FieldScopes whose scope the viewer lacks.
func authorizeField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if scope, ok := FieldScopes[fc.Object+"."+fc.Field.Name]; ok {
		if err := Authorize(ctx, scope); err != nil {
			return nil, err
		}
	}
	return next(ctx)
}

// nodeScope is the scope needed to read a node fetched by id.
func nodeScope(n ent.Noder) string {
	switch n.(type) {
	case *ent.Customer, *ent.Segment:
		return "customers:read"
	case *ent.Campaign, *ent.Store, *ent.Redemption:
		return "campaigns:read"
	case *ent.Tenant:
		return ""
	case *ent.Sale, *ent.SaleItem:
		return ScopeBackoffice
	default:
		return ScopeBackoffice
	}
}

// authorizeRootField refuses a root field whose scope the viewer lacks.
func authorizeRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	fc := graphql.GetRootFieldContext(ctx)
	if fc == nil || strings.HasPrefix(fc.Field.Name, "__") {
		return next(ctx) // introspection
	}
	object := "Query"
	if graphql.GetOperationContext(ctx).Operation.Operation == ast.Mutation {
		object = "Mutation"
	}
	scope, ok := RootFieldScopes[object+"."+fc.Field.Name]
	err := Authorize(ctx, scope)
	if !ok {
		err = apperr.Forbidden("insufficient_scope", fmt.Sprintf("%s.%s has no scope", object, fc.Field.Name))
	}
	if err != nil {
		graphql.AddError(ctx, err)
		return graphql.Null
	}
	return next(ctx)
}

// presentError gives every error an extensions.code matching the REST error
// codes, and hides internal causes.
func presentError(ctx context.Context, log *slog.Logger, err error) *gqlerror.Error {
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if e, ok := apperr.As(err); ok {
		gqlErr.Message = e.Message
		gqlErr.Extensions = map[string]any{"code": e.Code}
		if e.Field != "" {
			gqlErr.Extensions["field"] = e.Field
		}
		if len(e.Details) > 0 {
			gqlErr.Extensions["details"] = e.Details
		}
		return gqlErr
	}
	var ge *gqlerror.Error
	if errors.As(err, &ge) && ge.Extensions["code"] != nil {
		return gqlErr // parse and validation errors keep gqlgen's codes
	}
	switch {
	case ent.IsNotFound(err):
		gqlErr.Message, gqlErr.Extensions = "not found", map[string]any{"code": "not_found"}
	case ent.IsValidationError(err):
		gqlErr.Extensions = map[string]any{"code": "validation_error"}
	case errors.Is(err, privacy.Deny):
		gqlErr.Message, gqlErr.Extensions = "not allowed", map[string]any{"code": "forbidden"}
	default:
		log.ErrorContext(ctx, "graphql error", "path", gqlErr.Path.String(), "error", err)
		gqlErr.Message, gqlErr.Extensions = "internal error", map[string]any{"code": "internal_error"}
	}
	return gqlErr
}
