// Package logging builds the controller's logger from controller-runtime's
// zap flags (--zap-log-level, --zap-encoder, ...), as controller-runtime
// does, with one difference: its production logger samples (of lines with
// the same message and level, 100 a second, then 1 in 100), which at
// verbosity 1 drops decision lines (a fleet created at 133 objects a second
// logs "Created" for 100 of them). Whenever verbosity 1 is on, the logger
// here does not sample, so that every create, patch, delete and skip has
// its line (docs/flags.md#decision-logs). At the default level (info) it
// samples as controller-runtime's does.
//
// Usage:
//
//	ctrl.SetLogger(logging.New(&zapOpts))
//
// Files:
//
//	logging.go  New: controller-runtime's logger, its sampler left out at verbosity 1
package logging
