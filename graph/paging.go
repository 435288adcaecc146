package graph

import "fmt"

// Page sizes of every connection: unbounded pages would let one query read a
// whole table.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// pageBounds applies the default page size when neither first nor last is
// given and refuses sizes outside 1..maxPageSize.
func pageBounds(first, last *int) (*int, *int, error) {
	if first == nil && last == nil {
		n := defaultPageSize
		return &n, nil, nil
	}
	for _, n := range []*int{first, last} {
		if n != nil && (*n < 1 || *n > maxPageSize) {
			return nil, nil, fmt.Errorf("page size must be between 1 and %d, got %d", maxPageSize, *n)
		}
	}
	return first, last, nil
}
