// Package layout has no code of its own: its tests hold the hand-written Go
// code of the repository to a readable shape (no file over MaxLines lines,
// no exported type with over MaxMethods methods).
package layout
