package rest

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/auth"

	"github.com/go-chi/chi/v5"
)

// route is one route of the HTTP interface, declared once: the table mounts
// it and is what the tests walk. The JSON routes' handlers are endpoints
// (endpoint.go): how the request is read, the one operation of the
// application it calls, and how its answer is rendered.
type route struct {
	method, pattern string
	// scope is what a bearer token needs (bearer routes); "" for GraphQL,
	// whose fields are checked one by one (graph.RootFieldScopes).
	scope   string
	handler http.HandlerFunc
}

// bearerRoutes are the routes of /v1 and the points paths, authenticated by
// an access token holding the route's scope. The document gives
// /points/credit without the version prefix; every points path is served
// with and without it.
func (s *server) bearerRoutes() []route {
	v1 := s.v1()
	return slices.Concat([]route{
		{"GET", "/v1/customers", customers.Rules.ListCustomers.Scope(), handle(v1, http.StatusOK, readCustomerPage, pagedOp(s.app.Customers.ListCustomers), customerPage)},
		{"POST", "/v1/customers", customers.Rules.CreateCustomer.Scope(), handle(v1, http.StatusCreated, jsonBody[customers.CustomerInput], s.app.Customers.CreateCustomer, newCustomerJSON)},
		{"POST", "/v1/customers/imports", customers.Rules.StartCustomerImport.Scope(), handle(v1, http.StatusAccepted, readCustomerImport, s.startCustomerImport, newCustomerImportJSON)},
		{"GET", "/v1/customers/imports/{id}", customers.Rules.CustomerImport.Scope(), handle(v1, http.StatusOK, pathID, s.app.Customers.CustomerImport, customerImportOut)},
		{"GET", "/v1/customers/imports/{id}/problems", customers.Rules.CustomerImportProblems.Scope(), s.customerImportProblems},
		{"GET", "/v1/customers/{id}", customers.Rules.Customer.Scope(), handle(v1, http.StatusOK, pathID, s.app.Customers.Customer, fullCustomer)},
		{"PUT", "/v1/customers/{id}", customers.Rules.ReplaceCustomer.Scope(), handle(v1, http.StatusOK, readCustomerWrite, onPathOp(s.app.Customers.ReplaceCustomer), fullCustomer)},
		{"PATCH", "/v1/customers/{id}", customers.Rules.PatchCustomer.Scope(), handle(v1, http.StatusOK, readCustomerWrite, onPathOp(s.app.Customers.PatchCustomer), fullCustomer)},
		{"DELETE", "/v1/customers/{id}", privacy.Rules.EraseCustomer.Scope(), handle(v1, http.StatusNoContent, pathID, noContent(s.app.Privacy.EraseCustomer), same[struct{}])},
		{"GET", "/v1/customers/{id}/export", privacy.Rules.WriteCustomerExport.Scope(), s.exportCustomer},
		{"GET", "/v1/customers/{id}/wallets", wallets.Rules.Wallets.Scope(), handleWith(v1, http.StatusOK, pathID, s.app.Wallets.Wallets, renderWallets)},
		{"GET", "/v1/customers/{id}/wallets/{wallet}/entries", wallets.Rules.Entries.Scope(), handleWith(v1, http.StatusOK, readWalletEntries, s.walletEntries, renderWalletEntries)},
		{"POST", "/v1/wallets/holds", wallets.Rules.HoldCashback.Scope(), handle(v1, http.StatusCreated, readWalletHold, s.app.Wallets.HoldCashback, renderWalletHold)},
		{"POST", "/v1/wallets/holds/{id}/capture", wallets.Rules.CaptureHold.Scope(), handle(v1, http.StatusOK, readCapture[wallets.CaptureInput], onPathOp(s.app.Wallets.CaptureHold), renderWalletHold)},
		{"POST", "/v1/wallets/holds/{id}/rollback", wallets.Rules.RollbackHold.Scope(), handle(v1, http.StatusOK, readRollback, onPathOp(s.app.Wallets.RollbackHold), renderWalletHold)},

		{"POST", "/v1/gift-cards", giftcards.Rules.IssueGiftCards.Scope(), handle(v1, http.StatusCreated, readIssue, s.app.GiftCards.IssueGiftCards, renderIssued)},
		{"GET", "/v1/gift-cards", giftcards.Rules.GiftCards.Scope(), handle(v1, http.StatusOK, readGiftCardPage, pagedOp(s.app.GiftCards.GiftCards), giftCardPage)},
		{"POST", "/v1/gift-cards/lookup", giftcards.Rules.GiftCardByCode.Scope(), handle(v1, http.StatusOK, readLookup, s.app.GiftCards.GiftCardByCode, renderGiftCard)},
		{"GET", "/v1/gift-cards/{id}", giftcards.Rules.GiftCard.Scope(), handle(v1, http.StatusOK, pathID, s.app.GiftCards.GiftCard, renderGiftCard)},
		{"GET", "/v1/gift-cards/{id}/entries", giftcards.Rules.GiftCardEntries.Scope(), handleWith(v1, http.StatusOK, pageOnPath("gce_"), pagedOp(s.app.GiftCards.GiftCardEntries), renderGiftCardEntries)},
		{"POST", "/v1/gift-cards/{id}/load", giftcards.Rules.LoadGiftCard.Scope(), handle(v1, http.StatusOK, readLoad, onPathOp(s.app.GiftCards.LoadGiftCard), renderGiftCardMove)},
		{"POST", "/v1/gift-cards/{id}/bind", giftcards.Rules.BindGiftCard.Scope(), handle(v1, http.StatusOK, readBind, onPathOp(s.app.GiftCards.BindGiftCard), renderBound)},
		{"POST", "/v1/gift-cards/{id}/transfer", giftcards.Rules.TransferGiftCard.Scope(), handleWith(v1, http.StatusOK, readTransfer, onPathOp(s.app.GiftCards.TransferGiftCard), renderTransfer)},
		{"POST", "/v1/gift-cards/{id}/cancel", giftcards.Rules.CancelGiftCard.Scope(), handle(v1, http.StatusOK, readCancel, onPathOp(s.app.GiftCards.CancelGiftCard), renderGiftCardMove)},

		{"GET", "/v1/segments", customers.Rules.ListSegments.Scope(), handle(v1, http.StatusOK, readSegmentPage, pagedOp(s.app.Customers.ListSegments), segmentPage)},
		{"POST", "/v1/segments", customers.Rules.CreateSegment.Scope(), handle(v1, http.StatusCreated, readSegment, s.app.Customers.CreateSegment, newSegmentJSON)},
		{"POST", "/v1/segments/preview", audiences.Rules.PreviewAudience.Scope(), handle(v1, http.StatusOK, readPreview, s.app.Audiences.PreviewAudience, renderPreview)},
		{"GET", "/v1/segments/{id}", customers.Rules.Segment.Scope(), handle(v1, http.StatusOK, pathID, s.app.Customers.Segment, renderSegment)},
		{"PATCH", "/v1/segments/{id}", customers.Rules.UpdateSegment.Scope(), handle(v1, http.StatusOK, readSegmentPatch, onPathOp(s.app.Customers.UpdateSegment), renderSegment)},

		{"GET", "/v1/campaigns", campaigns.Rules.ListCampaigns.Scope(), handle(v1, http.StatusOK, readCampaignPage, pagedOp(s.app.Campaigns.ListCampaigns), campaignPage)},
		{"POST", "/v1/campaigns", campaigns.Rules.CreateCampaign.Scope(), handle(v1, http.StatusCreated, readCampaign, s.app.Campaigns.CreateCampaign, newCampaignJSON)},
		{"POST", "/v1/campaigns/validate", checkout.Rules.ValidateCart.Scope(), handleWith(v1, http.StatusOK, readValidate, inputOp[validateRequest](s.app.Checkout.ValidateCart), validateRequest.answer)},
		{"GET", "/v1/campaigns/{id}", campaigns.Rules.Campaign.Scope(), handle(v1, http.StatusOK, pathID, s.app.Campaigns.Campaign, renderCampaign)},
		{"DELETE", "/v1/campaigns/{id}", campaigns.Rules.EndCampaign.Scope(), handle(v1, http.StatusOK, pathID, s.app.Campaigns.EndCampaign, renderCampaign)},
		{"POST", "/v1/campaigns/{id}/redeem", checkout.Rules.RedeemCampaign.Scope(), handle(v1, http.StatusCreated, readRedeem, s.redeem, same[redeemAnswer])},
		{"POST", "/v1/campaigns/{id}/coupons", campaigns.Rules.AddCoupons.Scope(), handleWith(v1, http.StatusCreated, readCoupons, s.app.Campaigns.AddCoupons, renderCouponsAdded)},
		{"GET", "/v1/campaigns/{id}/coupons", campaigns.Rules.ListCoupons.Scope(), s.listCoupons(handle(v1, http.StatusOK, pageOnPath("cpn_"), pagedOp(s.app.Campaigns.ListCoupons), couponPage))},
		{"POST", "/v1/products", campaigns.Rules.ImportProducts.Scope(), handle(v1, http.StatusOK, readProducts, s.app.Campaigns.ImportProducts, renderCatalog)},
		{"POST", "/v1/redemptions/{id}/rollback", loyalty.Rules.RollbackRedemption.Scope(), handle(v1, http.StatusOK, readRollback, onPathOp(s.app.Loyalty.RollbackRedemption), renderRollback)},

		{"POST", "/v1/webhooks", webhooks.Rules.CreateWebhookEndpoint.Scope(), handle(v1, http.StatusCreated, readWebhook, s.app.Webhooks.CreateWebhookEndpoint, newWebhookJSON)},
		{"GET", "/v1/webhooks", webhooks.Rules.WebhookEndpoints.Scope(), handle(v1, http.StatusOK, noRequest, noInput(s.app.Webhooks.WebhookEndpoints), webhookList)},
		{"GET", "/v1/webhooks/{id}", webhooks.Rules.WebhookEndpoint.Scope(), handle(v1, http.StatusOK, pathID, s.app.Webhooks.WebhookEndpoint, renderWebhook)},
		{"PATCH", "/v1/webhooks/{id}", webhooks.Rules.UpdateWebhookEndpoint.Scope(), handle(v1, http.StatusOK, readWebhookPatch, onPathOp(s.app.Webhooks.UpdateWebhookEndpoint), renderWebhook)},
		{"DELETE", "/v1/webhooks/{id}", webhooks.Rules.DeleteWebhookEndpoint.Scope(), handle(v1, http.StatusNoContent, pathID, noContent(s.app.Webhooks.DeleteWebhookEndpoint), same[struct{}])},
		{"POST", "/v1/webhooks/{id}/rotate-secret", webhooks.Rules.RotateWebhookSecret.Scope(), handle(v1, http.StatusOK, pathID, s.app.Webhooks.RotateWebhookSecret, renderRotated)},
		{"GET", "/v1/webhooks/{id}/deliveries", webhooks.Rules.WebhookDeliveries.Scope(), handle(v1, http.StatusOK, pageOnPath("dlv_"), pagedOp(s.app.Webhooks.WebhookDeliveries), deliveryPage)},
		{"POST", "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", webhooks.Rules.RedeliverWebhook.Scope(), handle(v1, http.StatusAccepted, readRedelivery, onPathOp(s.app.Webhooks.RedeliverWebhook), renderDelivery)},

		{"GET", "/graphql", "", s.graphql},
		{"POST", "/graphql", "", s.graphql},
		{"GET", "/v2/customers/{id}/churn", scoring.Rules.CustomerChurn.Scope(), handle(v1, http.StatusOK, pathID, s.app.Scoring.CustomerChurn, renderChurn)},
		{"GET", "/v2/segments/predictive", scoring.Rules.PredictiveSegments.Scope(), handle(v1, http.StatusOK, noRequest, s.predictiveSegments, same[predictiveJSON])},
		{"GET", "/v2/segments/predictive/{key}/customers", customers.Rules.ListCustomers.Scope(), handle(v1, http.StatusOK, readPredictivePage, pagedOp(s.app.Customers.ListCustomers), customerPage)},
	}, s.pointsRoutes(""), s.pointsRoutes("/v1"))
}

func (s *server) pointsRoutes(prefix string) []route {
	v1 := s.v1()
	return []route{
		{"POST", prefix + "/points/credit", loyalty.Rules.CreditPoints.Scope(), handleWith(v1, http.StatusCreated, readCredit, s.app.Loyalty.CreditPoints, renderCredit)},
		{"POST", prefix + "/points/debit", loyalty.Rules.DebitPoints.Scope(), handle(v1, http.StatusCreated, readDebit, s.app.Loyalty.DebitPoints, renderDebit)},
		{"POST", prefix + "/points/reverse", loyalty.Rules.ReversePoints.Scope(), handle(v1, http.StatusCreated, readReverse, s.app.Loyalty.ReversePoints, renderReverse)},
		{"POST", prefix + "/points/holds", loyalty.Rules.HoldOrderPoints.Scope(), handle(v1, http.StatusCreated, readOrderHold, s.app.Loyalty.HoldOrderPoints, renderOrderHold)},
		{"POST", prefix + "/points/holds/{id}/capture", loyalty.Rules.CaptureOrderPoints.Scope(), handle(v1, http.StatusOK, readCapture[loyalty.CaptureInput], onPathOp(s.app.Loyalty.CaptureOrderPoints), renderOrderHold)},
		{"POST", prefix + "/points/holds/{id}/rollback", loyalty.Rules.RollbackOrderPoints.Scope(), handle(v1, http.StatusOK, readRollback, onPathOp(s.app.Loyalty.RollbackOrderPoints), renderOrderHold)},
		{"GET", prefix + "/points/balance/{customer_id}", loyalty.Rules.Balance.Scope(), handle(v1, http.StatusOK, pathCustomerID, s.app.Loyalty.Balance, renderBalance)},
		{"GET", prefix + "/points/statement/{customer_id}", loyalty.Rules.Statement.Scope(), handleWith(v1, http.StatusOK, readStatement, s.statement, renderStatement)},
	}
}

// posPrefix is where the point-of-sale interface lives.
const posPrefix = "/api/v1/tenants/{tenantId}"

// posRouteTable are the routes of the point-of-sale interface, under
// posPrefix, authenticated with HTTP Basic credentials of a POS client of
// the path's tenant. Their scope is the operation's rule, which the operation
// checks (Rules.Op.Allow) and the POS authentication grants to POS clients.
func (s *server) posRouteTable() []route {
	till := s.pos()
	authorize := handleWith(till, http.StatusOK, readAuthorize, inputOp[authorizeRequest](s.app.POS.AuthorizeDiscounts), authorizeRequest.answer)
	return []route{
		{"POST", "/customers/identify", pos.Rules.IdentifyCustomer.Scope(), handleWith(till, http.StatusOK, readIdentify, s.app.POS.IdentifyCustomer, renderIdentification)},
		{"POST", "/discounts/authorizations", pos.Rules.AuthorizeDiscounts.Scope(), authorize},
		{"POST", "/discounts/authorize", pos.Rules.AuthorizeDiscounts.Scope(), authorize},
		{"POST", "/points/holds", pos.Rules.HoldPoints.Scope(), handle(till, http.StatusCreated, readPointsHold, holdOp(s.app.POS.HoldPoints), renderHold)},
		{"DELETE", "/points/holds/{holdId}", pos.Rules.ReleasePointsHold.Scope(), handle(till, http.StatusOK, readHoldID, s.app.POS.ReleasePointsHold, renderHold)},
		{"POST", "/wallets/holds", pos.Rules.HoldWallet.Scope(), handle(till, http.StatusCreated, readTillWalletHold, holdOp(s.app.POS.HoldWallet), renderTillWalletHold)},
		{"DELETE", "/wallets/holds/{holdId}", pos.Rules.ReleaseWalletHold.Scope(), handle(till, http.StatusOK, readHoldID, s.app.POS.ReleaseWalletHold, renderTillWalletHold)},
		{"POST", "/sales", pos.Rules.RegisterSale.Scope(), handleWith(till, http.StatusAccepted, readSale, inputOp[saleRequest](s.app.POS.RegisterSale), saleRequest.answer)},
		{"GET", "/sales/{saleId}", pos.Rules.SaleOutcome.Scope(), handle(till, http.StatusOK, readSaleRef, onPathOp(s.app.POS.SaleOutcome), renderSale)},
		{"POST", "/sales/{saleId}/cancellation", pos.Rules.RegisterSaleReturn.Scope(), handle(till, http.StatusAccepted, readCancellation, s.app.POS.RegisterSaleReturn, renderReturnReceived)},
		{"POST", "/sales/{saleId}/returns", pos.Rules.RegisterSaleReturn.Scope(), handle(till, http.StatusAccepted, readReturn, s.app.POS.RegisterSaleReturn, renderReturnReceived)},
	}
}

// publicRoutes need no token.
func (s *server) publicRoutes() []route {
	return []route{
		{"GET", "/healthz", "", s.healthz},
		{"GET", "/readyz", "", s.readyz},
		{"GET", "/metrics", "", s.metrics}, // Prometheus; keep it off the public internet (docs/metrics.md)
		{"POST", "/auth/token", "", s.token},
		{"GET", "/.well-known/openid-configuration", "", s.discovery},
		{"GET", "/.well-known/jwks.json", "", s.jwks},
		{"GET", "/problems/{id}", "", s.problemPage},
		// GraphQL subscriptions over WebSocket: the token is in connection_init.
		{"GET", "/graphql/ws", "", s.graphql},
		{"GET", "/auth/login", "", s.startSignIn},
		{"GET", auth.SignInPath, "", s.finishSignIn},
	}
}

// routeTable is the tables bound to a server that serves nothing: what the
// maps below, and the tests, read of them.
var routeTable = &server{app: new(app.App)}

func (rt route) key() string { return rt.method + " " + rt.pattern }

// RouteScopes maps every bearer-protected route to the scope it needs (""
// for GraphQL, checked field by field against graph.RootFieldScopes).
var RouteScopes = func() map[string]string {
	m := map[string]string{}
	for _, rt := range routeTable.bearerRoutes() {
		m[rt.key()] = rt.scope
	}
	return m
}()

// POSRoutes are the point-of-sale routes, with their prefix.
var POSRoutes = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range routeTable.posRouteTable() {
		m[rt.method+" "+posPrefix+rt.pattern] = true
	}
	return m
}()

// PublicRoutes need no token: publicRoutes, and the routes of the handlers
// mounted whole (the playground, the OpenAPI documents, the panel), which
// route within themselves.
var PublicRoutes = func() map[string]bool {
	m := map[string]bool{}
	for _, rt := range routeTable.publicRoutes() {
		m[rt.key()] = true
	}
	for _, key := range mountedRoutes {
		m[key] = true
	}
	return m
}()

// mountedRoutes are the routes the mounted handlers serve.
var mountedRoutes = []string{
	"GET /playground/", // the page; its queries need a token
	"GET /playground/assets/*",
	// The OpenAPI documents of /v1 and the POS interface, and their
	// reference page.
	"GET /openapi/",
	"GET /openapi/v1.yaml",
	"GET /openapi/v1.json",
	"GET /openapi/pos.yaml",
	"GET /openapi/pos.json",
	"GET /openapi/v2.yaml",
	"GET /openapi/v2.json",
	// The developer panel authenticates a session cookie holding a user's
	// token, each page checking the role; its forms check their Origin.
	"GET /panel/",
	"GET /panel/assets/*",
	"GET /panel/sso",
	"GET /panel/sign-in", // a single-use sign-in link (serve --demo prints one)
	"POST /panel/session",
	"POST /panel/logout",
	"POST /panel/sandboxes",
	"GET /panel/sandboxes/{id}",
	"POST /panel/sandboxes/{id}/clients",
	"POST /panel/sandboxes/{id}/clients/{clientID}/rotate",
	"POST /panel/sandboxes/{id}/reset",
	"GET /panel/insights",
	"GET /panel/sandboxes/{id}/insights",
	"GET /panel/settings",
	"GET /panel/audit",
	"POST /panel/settings",
	"GET /panel/segments",
	"GET /panel/segments/new",
	"POST /panel/segments",
	"GET /panel/segments/{id}",
	"POST /panel/segments/{id}",
}

// mount mounts a route of the table.
func mount(r chi.Router, rt route) { r.Method(rt.method, rt.pattern, rt.handler) }

// protected mounts a bearer-authenticated route guarded by its scope, its
// client's requests counted against its tenant's rate limit.
func (s *server) protected(r chi.Router, rt route) {
	refuse := refusalFor(rt.pattern)
	mount(r.With(s.bearer(refuse), s.limitClient(refuse), s.requireScope(rt.scope)), rt)
}

// requireScope answers 403 insufficient_scope naming the missing scope.
func (s *server) requireScope(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := kernel.Authorize(r.Context(), scope); err != nil {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="fideliza", error="insufficient_scope", scope=%q`, scope))
				s.writeV1Error(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
