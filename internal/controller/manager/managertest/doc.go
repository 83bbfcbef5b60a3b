// Package managertest runs the whole controller, as internal/controller/
// manager assembles it, in the story tests of the packages whose behaviour
// the stories tell (external test packages such as internal/sandbox's
// sandbox_test): the test options every story starts from, the manager
// started and stopped, a spoke cluster joined. It imports testing and
// belongs in tests only.
//
// Usage (a story, beside controllertest's helpers; its package's
// suite_test.go holds TestMain):
//
//	func TestMain(m *testing.M) { controllertest.Main(m) }
//
//	ns := controllertest.NewNamespace(t)
//	opts := managertest.Options()
//	opts.NoCrossNamespaceObjects = true
//	stop := managertest.Start(t, nil, opts) // the suite's control plane; stopped when the test ends, or by stop()
//
// Implementation notes: internal/controller/controllertest holds the
// control plane and the helpers that need no controller, because the
// Application reconciler's own (internal) tests use it: it cannot import
// the manager, which imports the reconciler. This package can, and no
// internal test imports it.
//
// Files:
//
//	managertest.go  Options, Start and JoinedSpoke
package managertest
