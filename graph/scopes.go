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
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/nodes"
	"github.com/fideliza/fideliza/app/pos"
	privacyctx "github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/privacy"
	"github.com/fideliza/fideliza/httperr"
)

// RootFieldScopes maps every root field of the schema to the scope it needs,
// taken from the rule of the operation the field calls (Rules.Op.Scope);
// "" needs only a valid token. A root field missing here is refused, and a
// test fails until it is added.
var RootFieldScopes = map[string]string{
	"Query.node":               nodes.Rules.Node.Scope(), // then the rule of its type (nodes.TypeRules)
	"Query.nodes":              nodes.Rules.Nodes.Scope(),
	"Query.tenants":            backoffice.Rules.TenantConnection.Scope(), // a viewer sees its own tenant
	"Query.stores":             backoffice.Rules.StoreConnection.Scope(),
	"Query.apiClients":         backoffice.Rules.APIClientConnection.Scope(),
	"Query.customers":          customers.Rules.CustomerConnection.Scope(),
	"Query.customerSearch":     customers.Rules.ListCustomers.Scope(),
	"Query.customerByDocument": customers.Rules.CustomerByDocument.Scope(),
	"Query.segments":           customers.Rules.SegmentConnection.Scope(),
	"Query.campaigns":          campaigns.Rules.CampaignConnection.Scope(),

	"Query.predictiveSegments":   scoring.Rules.PredictiveSegments.Scope(),
	"Query.previewAudience":      audiences.Rules.PreviewAudience.Scope(),
	"Query.pointsLiability":      loyalty.Rules.PointsLiability.Scope(),
	"Query.pointsLiabilityByDay": insights.Rules.PointsLiabilityByDay.Scope(),
	"Query.pointsEntries":        loyalty.Rules.PointsEntryConnection.Scope(),
	"Query.events":               webhooks.Rules.EventConnection.Scope(),
	"Query.customersByLevel":     loyalty.Rules.ByLevel.Scope(),
	"Query.customerImport":       customers.Rules.CustomerImport.Scope(),
	"Query.activeCustomers":      insights.Rules.ActiveCustomers.Scope(),
	"Query.salesByStoreDay":      insights.Rules.SalesByStoreDay.Scope(),
	"Query.sales":                pos.Rules.SaleConnection.Scope(),
	"Query.redemptions":          checkout.Rules.RedemptionConnection.Scope(),
	"Query.products":             campaigns.Rules.ProductConnection.Scope(),
	"Query.customerExport":       privacyctx.Rules.ExportCustomer.Scope(),
	"Query.auditEvents":          backoffice.Rules.AuditEventConnection.Scope(),
	"Mutation.eraseCustomer":     privacyctx.Rules.EraseCustomer.Scope(),

	"Query.pointsSpentByStoreDay": insights.Rules.PointsSpentByStoreDay.Scope(),
	"Query.topCustomers":          insights.Rules.TopCustomers.Scope(),

	"Mutation.createCustomer":     customers.Rules.CreateCustomer.Scope(),
	"Mutation.updateCustomer":     customers.Rules.PatchCustomer.Scope(),
	"Mutation.creditPoints":       loyalty.Rules.CreditPoints.Scope(),
	"Mutation.debitPoints":        loyalty.Rules.DebitPoints.Scope(),
	"Mutation.reversePoints":      loyalty.Rules.ReversePoints.Scope(),
	"Mutation.createCampaign":     campaigns.Rules.CreateCampaign.Scope(),
	"Mutation.pauseCampaign":      campaigns.Rules.PauseCampaign.Scope(),
	"Mutation.resumeCampaign":     campaigns.Rules.ResumeCampaign.Scope(),
	"Mutation.endCampaign":        campaigns.Rules.EndCampaign.Scope(),
	"Mutation.validateCart":       checkout.Rules.ValidateCart.Scope(),
	"Mutation.redeemCampaign":     checkout.Rules.RedeemCampaign.Scope(),
	"Mutation.rollbackRedemption": loyalty.Rules.RollbackRedemption.Scope(),
	"Mutation.addCoupons":         campaigns.Rules.AddCoupons.Scope(),
	"Mutation.importProducts":     campaigns.Rules.ImportProducts.Scope(),
	"Mutation.adjustPoints":       loyalty.Rules.AdjustPoints.Scope(),

	"Query.giftCards":           giftcards.Rules.GiftCardConnection.Scope(),
	"Query.giftCardByCode":      giftcards.Rules.GiftCardByCode.Scope(),
	"Mutation.issueGiftCards":   giftcards.Rules.IssueGiftCards.Scope(),
	"Mutation.loadGiftCard":     giftcards.Rules.LoadGiftCard.Scope(),
	"Mutation.bindGiftCard":     giftcards.Rules.BindGiftCard.Scope(),
	"Mutation.transferGiftCard": giftcards.Rules.TransferGiftCard.Scope(),
	"Mutation.cancelGiftCard":   giftcards.Rules.CancelGiftCard.Scope(),

	"Mutation.createStore":            backoffice.Rules.CreateStore.Scope(),
	"Mutation.updateStore":            backoffice.Rules.UpdateStore.Scope(),
	"Mutation.createAPIClient":        backoffice.Rules.CreateClient.Scope(),
	"Mutation.rotateAPIClientSecret":  backoffice.Rules.RotateClient.Scope(),
	"Mutation.revokeAPIClient":        backoffice.Rules.RevokeClient.Scope(),
	"Mutation.updateTenantSettings":   backoffice.Rules.UpdateTenant.Scope(),
	"Mutation.createSegment":          customers.Rules.CreateSegment.Scope(),
	"Mutation.updateSegment":          customers.Rules.UpdateSegment.Scope(),
	"Mutation.addSegmentCustomers":    customers.Rules.AddSegmentCustomers.Scope(),
	"Mutation.removeSegmentCustomers": customers.Rules.RemoveSegmentCustomers.Scope(),
	"Mutation.importSegmentCustomers": customers.Rules.ImportSegmentCPFs.Scope(),
	"Mutation.refreshChurnScores":     scoring.Rules.RefreshChurnScores.Scope(),

	"Query.webhookEndpoints":         webhooks.Rules.WebhookEndpointConnection.Scope(),
	"Query.webhookDeliveries":        webhooks.Rules.WebhookDeliveryConnection.Scope(),
	"Mutation.createWebhookEndpoint": webhooks.Rules.CreateWebhookEndpoint.Scope(),
	"Mutation.updateWebhookEndpoint": webhooks.Rules.UpdateWebhookEndpoint.Scope(),
	"Mutation.deleteWebhookEndpoint": webhooks.Rules.DeleteWebhookEndpoint.Scope(),
	"Mutation.rotateWebhookSecret":   webhooks.Rules.RotateWebhookSecret.Scope(),
	"Mutation.redeliverWebhook":      webhooks.Rules.RedeliverWebhook.Scope(),
}

// TypeScopes maps every entity type (every type implementing Node) to the
// scope needed to read it below the root, the scope of its rule in
// nodes.TypeRules, which a node fetched by id is checked against: reading a
// customer does not grant reading its ledger or its sales. A test fails
// when an entity type is missing there.
var TypeScopes = typeScopes(nodes.TypeRules)

func typeScopes(rules map[string]kernel.Rule) map[string]string {
	scopes := make(map[string]string, len(rules))
	for typ, rule := range rules {
		scopes[typ] = rule.Scope()
	}
	return scopes
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
