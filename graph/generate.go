package graph

//go:generate go run -C .. github.com/99designs/gqlgen generate
