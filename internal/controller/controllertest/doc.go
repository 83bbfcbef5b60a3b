// Package controllertest is the envtest suite the reconcilers' tests
// share: one real kube-apiserver and etcd per test binary (started by the
// first test that needs it), a namespace per test with its own copy of the
// test definitions, and the helpers the stories are written with. It
// imports testing and belongs in tests only.
//
// Usage (a package's suite_test.go holds TestMain; the stories call the
// helpers directly, so they read the same in every package):
//
//	func TestMain(m *testing.M) { controllertest.Main(m) }
//
//	ns := controllertest.NewNamespace(t)            // starts the control plane once
//	app := controllertest.CreateApp(t, ns, appYAML) // deleted when the test ends
//	admin := controllertest.Client(t)               // the suite's client, as its admin
//	controllertest.Eventually(t, 10*time.Second, "running", func() error { ... })
//
// Implementation notes: internal tests import this package
// (internal/controller/application's and internal/apply's), so it imports
// none of the packages they test or anything that imports them: not the
// reconciler, the manager, internal/apply or internal/cli. Stories that
// run the whole controller start it with internal/controller/manager/
// managertest, which can.
//
// Files:
//
//	controllertest.go  the control plane (its Client and Config), namespaces, Applications created and read, polling
//	apps.go            the stories' Applications (WebApp, V1Spec, ObjectsApp), spec changes and deletes, an object made client-side applied
//	observe.go         what the stories wait for and read: conditions, events, trackers, objects, passes
//	install.go         what the stories install: built-in, published and versioned definitions, tenants' RBAC, admission policies
//	testdata/definitions/  the definitions each test namespace gets
package controllertest
