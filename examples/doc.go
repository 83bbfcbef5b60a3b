// Package examples checks the example Applications a new user applies after
// `make run`, so that they never rot: each renders with the built-in
// definitions through the same code path as `steward render`, and holds up
// on a cluster (valid policies, known dependencies, distinct objects).
//
// Usage:
//
//	go test ./examples
//
// The package has no product code: examples_test.go checks every *.yaml
// here.
package examples
