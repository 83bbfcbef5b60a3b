// Package manager assembles Steward's controller: the flags (KubeVela's
// names where vela-core has the same setting), the controller-runtime
// manager with its cache of Steward's own kinds, the Application
// reconciler, the definition reconcilers, the validating admission
// webhook with its certificates, and sharding's Lease and scheduler.
//
// Usage:
//
//	opts := manager.NewOptions()
//	opts.BindFlags(pflag.CommandLine)
//	err := manager.Run(ctx, restConfig, opts)
//
// Files:
//
//	options.go    Options (the reconciler's embedded), flags, defaults, validation
//	manager.go    NewManager and Run: what is registered, in which order; sharding
//	admission.go  the webhook server, its checks and its certificates
package manager
