//go:build !unix

package enginetest

// fdLimit is unknown here: the suite holds the smaller count of connections.
func fdLimit() (uint64, bool) { return 0, false }
