// Package lazylog is a logr sink that keeps the values a logger is given
// (WithValues) and hands them to the sink below only with a line it
// writes. zapr encodes values the moment they are added: the Application
// controller's logger for each reconcile (the request's name, namespace
// and reconcile ID) cost a clone of zap's encoder on every pass, about 7%
// of a steady watch-mode pass's CPU, although at the default verbosity no
// line of the pass is written. With this sink a logger whose lines are off
// costs a slice of values, and a line written carries the same values in
// the same order.
//
// Usage:
//
//	builder.WithLogConstructor(lazylog.RequestLogger(mgr.GetLogger(), "application", gvk))
//
// Files:
//
//	lazylog.go  the sink (Wrap) and the controller-runtime log constructor (RequestLogger)
package lazylog
