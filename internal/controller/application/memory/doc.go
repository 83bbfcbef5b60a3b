// Package memory is what the Application reconciler remembers of each
// Application between passes: warnings already emitted, unhealthy
// streaks, each component's last health, what PostDispatch traits last
// rendered from, the Applications whose trackers this replica adopted, and
// a digest of each one's stored status.
// Every part is a cache or a de-duplication, so a restart loses nothing
// that matters; Memory.Forget drops all of one Application's at once.
//
// Usage:
//
//	var m memory.Memory                 // embedded in the reconciler
//	if m.Warned.FirstTime(key, msg) { /* emit the warning */ }
//	m.Forget(app)                       // the Application is gone
//
// Files:
//
//	memory.go Memory and Forget; warnings, unhealthy streaks, PostDispatch digests, adopted Applications
//	status.go a digest of each Application's stored status, by resourceVersion
//	health.go the health cache and the fingerprint it is keyed on
package memory
