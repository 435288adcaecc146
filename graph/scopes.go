package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	privacyctx "github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/httperr"
)

// RootFieldScopes maps every root field of the schema to the scope it needs,
// taken from the policy table of the operation the field calls;
// "" needs only a valid token. A root field missing here is refused, and a
// test fails until it is added.
var RootFieldScopes = map[string]string{
	"Query.node":               "", // checked per type by nodeScope
	"Query.nodes":              "", // checked per type by nodeScope
	"Query.tenants":            "", // a viewer sees its own tenant
	"Query.stores":             "campaigns:read",
	"Query.apiClients":         kernel.ScopeBackoffice,
	"Query.customers":          customers.Policy.Scope("ListCustomers"),
	"Query.customerSearch":     customers.Policy.Scope("ListCustomers"),
	"Query.customerByDocument": customers.Policy.Scope("CustomerByDocument"),
	"Query.segments":           "customers:read",
	"Query.campaigns":          campaigns.Policy.Scope("ListCampaigns"),

	"Query.predictiveSegments":   insights.Policy.Scope("PredictiveSegments"),
	"Query.previewAudience":      audiences.Policy.Scope("PreviewAudience"),
	"Query.pointsLiability":      loyalty.Policy.Scope("PointsLiability"),
	"Query.pointsLiabilityByDay": insights.Policy.Scope("PointsLiabilityByDay"),
	"Query.pointsEntries":        "loyalty:read",
	"Query.events":               kernel.ScopeBackoffice,
	"Query.customersByLevel":     loyalty.Policy.Scope("ByLevel"),
	"Query.customerImport":       customers.Policy.Scope("CustomerImport"),
	"Query.activeCustomers":      insights.Policy.Scope("ActiveCustomers"),
	"Query.salesByStoreDay":      insights.Policy.Scope("SalesByStoreDay"),
	"Query.sales":                kernel.ScopeBackoffice,
	"Query.redemptions":          "campaigns:read",
	"Query.products":             "campaigns:read",
	"Query.customerExport":       privacyctx.Policy.Scope("ExportCustomer"),
	"Query.auditEvents":          kernel.ScopeBackofficeWrite,
	"Mutation.eraseCustomer":     privacyctx.Policy.Scope("EraseCustomer"),

	"Query.pointsSpentByStoreDay": insights.Policy.Scope("PointsSpentByStoreDay"),
	"Query.topCustomers":          insights.Policy.Scope("TopCustomers"),

	"Mutation.createCustomer":     customers.Policy.Scope("CreateCustomer"),
	"Mutation.updateCustomer":     customers.Policy.Scope("PatchCustomer"),
	"Mutation.creditPoints":       loyalty.Policy.Scope("CreditPoints"),
	"Mutation.debitPoints":        loyalty.Policy.Scope("DebitPoints"),
	"Mutation.reversePoints":      loyalty.Policy.Scope("ReversePoints"),
	"Mutation.createCampaign":     campaigns.Policy.Scope("CreateCampaign"),
	"Mutation.pauseCampaign":      campaigns.Policy.Scope("PauseCampaign"),
	"Mutation.resumeCampaign":     campaigns.Policy.Scope("ResumeCampaign"),
	"Mutation.endCampaign":        campaigns.Policy.Scope("EndCampaign"),
	"Mutation.validateCart":       checkout.Policy.Scope("ValidateCart"),
	"Mutation.redeemCampaign":     checkout.Policy.Scope("RedeemCampaign"),
	"Mutation.rollbackRedemption": loyalty.Policy.Scope("RollbackRedemption"),
	"Mutation.addCoupons":         campaigns.Policy.Scope("AddCoupons"),
	"Mutation.importProducts":     campaigns.Policy.Scope("ImportProducts"),
	"Mutation.adjustPoints":       loyalty.Policy.Scope("AdjustPoints"),

	"Mutation.createStore":            backoffice.Policy.Scope("CreateStore"),
	"Mutation.updateStore":            backoffice.Policy.Scope("UpdateStore"),
	"Mutation.createAPIClient":        backoffice.Policy.Scope("CreateClient"),
	"Mutation.rotateAPIClientSecret":  backoffice.Policy.Scope("RotateClient"),
	"Mutation.revokeAPIClient":        backoffice.Policy.Scope("RevokeClient"),
	"Mutation.updateTenantSettings":   backoffice.Policy.Scope("UpdateTenant"),
	"Mutation.createSegment":          customers.Policy.Scope("CreateSegment"),
	"Mutation.updateSegment":          customers.Policy.Scope("UpdateSegment"),
	"Mutation.addSegmentCustomers":    customers.Policy.Scope("AddSegmentCustomers"),
	"Mutation.removeSegmentCustomers": customers.Policy.Scope("RemoveSegmentCustomers"),
	"Mutation.importSegmentCustomers": customers.Policy.Scope("ImportSegmentCPFs"),
	"Mutation.refreshChurnScores":     insights.Policy.Scope("RefreshChurnScores"),

	"Query.webhookEndpoints":         webhooks.Policy.Scope("WebhookEndpoints"),
	"Query.webhookDeliveries":        webhooks.Policy.Scope("WebhookDeliveries"),
	"Mutation.createWebhookEndpoint": webhooks.Policy.Scope("CreateWebhookEndpoint"),
	"Mutation.updateWebhookEndpoint": webhooks.Policy.Scope("UpdateWebhookEndpoint"),
	"Mutation.deleteWebhookEndpoint": webhooks.Policy.Scope("DeleteWebhookEndpoint"),
	"Mutation.rotateWebhookSecret":   webhooks.Policy.Scope("RotateWebhookSecret"),
	"Mutation.redeliverWebhook":      webhooks.Policy.Scope("RedeliverWebhook"),
}

// TypeScopes maps every entity type (every type implementing Node) to the
// scope needed to read it below the root: reading a customer does not grant
// reading its ledger or its sales. A node fetched by id needs the same
// scope; a test fails when an entity type is missing here.
var TypeScopes = map[string]string{
	"Tenant":        "", // a viewer sees its own tenant
	"Customer":      "customers:read",
	"Segment":       "customers:read",
	"PointsEntry":   "loyalty:read",
	"Campaign":      "campaigns:read",
	"Redemption":    "campaigns:read",
	"Store":         "campaigns:read",
	"Product":       "campaigns:read",
	"Coupon":        "campaigns:read",
	"ConsentChange": "customers:read",
	"AuditEvent":    kernel.ScopeBackofficeWrite,
	"Sale":          kernel.ScopeBackoffice,
	"SaleItem":      kernel.ScopeBackoffice,
	"SalePayment":   kernel.ScopeBackoffice,
	"SaleReturn":    kernel.ScopeBackoffice,
	"CustomerScore": "customers:read",
	"APIClient":     kernel.ScopeBackoffice,
	"Event":         kernel.ScopeBackoffice,

	"WebhookEndpoint": "webhooks:read",
	"WebhookDelivery": "webhooks:read",
	"WebhookAttempt":  "webhooks:read",
}

// checkField runs before every field's resolver: it refuses an edge between
// entities whose target type's scope the viewer lacks, and bounds
// connection pages.
func checkField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if scope, ok := edgeScope(fc); ok {
		if err := kernel.Authorize(ctx, scope); err != nil {
			return nil, err
		}
	}
	if err := boundPage(fc); err != nil {
		return nil, err
	}
	return next(boundCount(ctx, fc))
}

// edgeScope returns the scope of the entity an edge of an entity leads to
// (a connection counts as its nodes' type).
func edgeScope(fc *graphql.FieldContext) (string, bool) {
	if _, entity := TypeScopes[fc.Object]; !entity || fc.Field.Definition == nil {
		return "", false
	}
	scope, ok := TypeScopes[strings.TrimSuffix(fc.Field.Definition.Type.Name(), "Connection")]
	return scope, ok
}

// nodeScope is the scope needed to read a node fetched by id.
func nodeScope(n ent.Noder) string {
	scope, ok := TypeScopes[strings.TrimPrefix(fmt.Sprintf("%T", n), "*ent.")]
	if !ok {
		return kernel.ScopeBackofficeWrite // an entity nobody listed: operators only
	}
	return scope
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
	err := kernel.Authorize(ctx, scope)
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
	keepAnswered(ctx, err)
	gqlErr := graphql.DefaultErrorPresenter(ctx, err)
	if e, ok := httperr.As(err); ok {
		if e.Cause != nil {
			log.ErrorContext(ctx, "graphql error", "path", gqlErr.Path.String(), "code", e.Code, "error", e.Cause)
		}
		gqlErr.Message = e.Message
		gqlErr.Extensions = map[string]any{"code": e.Code}
		if e.Field != "" {
			gqlErr.Extensions["field"] = e.Field
		}
		if len(e.Details) > 0 {
			gqlErr.Extensions["details"] = e.Details
		}
		if e.RetryAfter > 0 {
			gqlErr.Extensions["retryAfter"] = max(int(math.Ceil(e.RetryAfter.Seconds())), 1)
		}
		return gqlErr
	}
	var ge *gqlerror.Error
	switch {
	case errors.As(err, &ge) && ge.Extensions["code"] != nil:
		gqlErr.Extensions["code"] = requestErrorCode(ge.Extensions["code"])
		return gqlErr
	case errors.As(err, &ge) && len(ge.Path) == 0 && ge.Err == nil:
		// The transport's own refusal of the request (a body that is not
		// JSON, a batch, variables that are not an object): the client's
		// error. gqlgen quotes the whole body in the message; personal
		// data does not travel back in an error, cut it off.
		if cut, _, found := strings.Cut(gqlErr.Message, " body:"); found {
			gqlErr.Message = cut
		}
		gqlErr.Extensions = map[string]any{"code": codeInvalidQuery}
		return gqlErr
	case errors.As(err, &ge) && argumentError(ctx, ge):
		// An argument that does not coerce to its type (an unknown enum
		// value, a Decimal the guard refuses): the input's error.
		gqlErr.Extensions = map[string]any{"code": "validation_error"}
		return gqlErr
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

// argumentError says whether ge is about an argument of the field being
// resolved: gqlgen puts the argument's path below the field's.
func argumentError(ctx context.Context, ge *gqlerror.Error) bool {
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && len(ge.Path) > len(fc.Path())
}

// requestErrorCode names gqlgen's and entgql's own errors in the lower-case
// style of the other codes.
func requestErrorCode(code any) any {
	switch code {
	case errcode.ParseFailed, errcode.ValidationFailed:
		return codeInvalidQuery
	case "COMPLEXITY_LIMIT_EXCEEDED":
		return codeTooComplex
	case "NOT_FOUND": // entgql's node lookup
		return "not_found"
	}
	return code
}
