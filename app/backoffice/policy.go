package backoffice

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the back-office context.
var Rules = kernel.NamedRules(struct {
	CreateTenant, UpdateTenant, CreateStore, UpdateStore, CreateClient, RotateClient, RevokeClient kernel.Rule
	RecentAuditEvents, TenantsAllowingOrigin, PruneSigningKeys, ManagedTenants, InSandbox          kernel.Rule
	SandboxClients, CreateSandbox, CreateSandboxClient, RotateSandboxClient, ResetSandbox          kernel.Rule
	SeedDemoTenant                                                                                 kernel.Rule
	APIClientConnection, AuditEventConnection, StoreConnection, TenantConnection, Tenant           kernel.Rule
}{
	CreateTenant:          kernel.System, // the admin CLI
	UpdateTenant:          kernel.Scope(kernel.ScopeBackofficeWrite),
	CreateStore:           kernel.Scope(kernel.ScopeBackofficeWrite),
	UpdateStore:           kernel.Scope(kernel.ScopeBackofficeWrite),
	CreateClient:          kernel.Scope(kernel.ScopeBackofficeWrite),
	RotateClient:          kernel.Scope(kernel.ScopeBackofficeWrite),
	RevokeClient:          kernel.Scope(kernel.ScopeBackofficeWrite),
	RecentAuditEvents:     kernel.Scope(kernel.ScopeBackofficeWrite),
	TenantsAllowingOrigin: kernel.System,
	PruneSigningKeys:      kernel.System,
	ManagedTenants:        kernel.Scope(kernel.ScopeBackoffice),
	InSandbox:             kernel.Scope(kernel.ScopeBackoffice),
	SandboxClients:        kernel.Scope(kernel.ScopeBackoffice),
	CreateSandbox:         kernel.Scope(kernel.ScopeBackofficeWrite),
	CreateSandboxClient:   kernel.Scope(kernel.ScopeBackofficeWrite),
	RotateSandboxClient:   kernel.Scope(kernel.ScopeBackofficeWrite),
	ResetSandbox:          kernel.Scope(kernel.ScopeBackofficeWrite),
	SeedDemoTenant:        kernel.System,

	// The GraphQL connections (connections.go).
	APIClientConnection:  kernel.Scope(kernel.ScopeBackoffice),
	AuditEventConnection: kernel.Scope(kernel.ScopeBackofficeWrite),
	StoreConnection:      kernel.Scope("campaigns:read"),
	TenantConnection:     kernel.Scope(""), // a viewer sees its own tenant

	Tenant: kernel.System, // the admin CLI
})
