// Package treecheck holds tests of the repository itself, run with the core
// module's tests (and so by CI): documentation links that lead nowhere, API
// documentation that names source files, sleeps in tests without a reason.
// It has no code.
package treecheck
