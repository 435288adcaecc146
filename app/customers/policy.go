package customers

import "github.com/fideliza/fideliza/app/kernel"

// Rules says who may call each operation of the customers context.
var Rules = kernel.NamedRules(struct {
	ListCustomers, Customer, CustomerByDocument, CreateCustomer, ReplaceCustomer, PatchCustomer       kernel.Rule
	StartCustomerImport, CustomerImport, CustomerImportProblems, ListSegments, Segment, CreateSegment kernel.Rule
	UpdateSegment, AddSegmentCustomers, RemoveSegmentCustomers, ImportSegmentCPFs, ImportCustomers    kernel.Rule
	RunCustomerImport                                                                                 kernel.Rule
	CustomerConnection, SegmentConnection                                                             kernel.Rule
}{
	ListCustomers:          kernel.Scope("customers:read"),
	Customer:               kernel.Scope("customers:read"),
	CustomerByDocument:     kernel.Scope("customers:read"),
	CreateCustomer:         kernel.Scope("customers:write"),
	ReplaceCustomer:        kernel.Scope("customers:write"),
	PatchCustomer:          kernel.Scope("customers:write"),
	StartCustomerImport:    kernel.Scope("customers:write"),
	CustomerImport:         kernel.Scope("customers:read"),
	CustomerImportProblems: kernel.Scope("customers:read"),
	ListSegments:           kernel.Scope("customers:read"),
	Segment:                kernel.Scope("customers:read"),
	CreateSegment:          kernel.Scope("customers:write"),
	UpdateSegment:          kernel.Scope("customers:write"),
	AddSegmentCustomers:    kernel.Scope("customers:write"),
	RemoveSegmentCustomers: kernel.Scope("customers:write"),
	ImportSegmentCPFs:      kernel.Scope("customers:write"),
	ImportCustomers:        kernel.System, // the import job, the CLI, the demo
	RunCustomerImport:      kernel.System,

	// The GraphQL connections (connections.go).
	CustomerConnection: kernel.Scope("customers:read"),
	SegmentConnection:  kernel.Scope("customers:read"),
})
