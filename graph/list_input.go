package graph

// givenList is a nullable list argument as an operation takes it: nil when
// absent or null (left as it is), else the list, [] included.
func givenList[T any](l []T) *[]T {
	if l == nil {
		return nil
	}
	return &l
}
