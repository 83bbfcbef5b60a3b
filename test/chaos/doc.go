/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package chaos holds the chaos suite: a seeded random sequence of
// Application changes against a real kube-apiserver and etcd, while the
// controller runs as a separate process that is killed with SIGKILL and
// restarted, and the API server itself is restarted. After every quiet
// period the suite checks that what exists is exactly what the specs and
// policies say should exist.
//
// Usage:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -count=1 -v ./test/chaos/
//	CHAOS_SEED=1234 CHAOS_ITERATIONS=200 make chaos
//	CHAOS_DRIFT_DETECTION=timer make chaos    # the controller in timer mode (default: watch)
//
// Implementation notes: the suite keeps a model of every Application (its
// spec, publishVersion and the spec each publishVersion rendered) and of
// every object any version rendered, with an expected state per object:
// present with known content, present with any content (kept by a policy),
// absent, or undetermined where the documentation does not say. The model
// is updated after each step from the documented semantics only
// (docs/concepts.md, docs/policies.md); it never reads the controller's
// code. Steps, faults and their order come from the seed alone, so a
// failure replays with CHAOS_SEED; the timing of kills does not replay
// exactly. docs/chaos.md lists the invariants.
package chaos
