// Package ent holds the generated data model; its source is ent/schema.
package ent

//go:generate go run -mod=mod entc.go
