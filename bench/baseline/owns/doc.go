// Command owns is the benchmark baseline: an OAM Application controller
// built the conventional way, to measure Steward against the design users
// would otherwise pick. It renders Applications with Steward's own render
// package (so both controllers deliver identical objects), then:
//
//   - sets an owner reference to the Application on every object it applies;
//   - calls .Owns() for Deployments, Services and ConfigMaps, and adds a
//     watch at run time for any other kind it renders, so every object of
//     those kinds in the cluster sits in its informer cache;
//   - repairs drift when an owned object changes or is deleted (the owner
//     reference maps the event back to the Application);
//   - applies with server-side apply, every object on every reconcile;
//   - re-applies on the app.oam.dev/reconcile-interval annotation when an
//     Application has one, and otherwise only on events.
//
// It has no resource trackers, no garbage collection of dropped objects
// (owner references leave that to the cluster's garbage collector) and no
// events. Flags share Steward's names where they mean the same thing.
//
// Usage (make bench-binaries builds bin/owns; stewardbench starts it
// against its control plane):
//
//	owns --metrics-addr=:8080 --concurrent-reconciles=4
//
// Files:
//
//	main.go        flags, the manager and its scheme
//	reconciler.go  the reconciler: render, apply with owner references, a watch per kind it renders
package main
