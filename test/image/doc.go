// Package image tests the container image `make image` builds: it runs the
// target into a temporary tarball, reads the tarball with nothing but the
// standard library (the `docker save` layout: manifest.json, the config
// blob, gzip-compressed layers), checks the configuration a runtime acts on
// (entrypoint, arguments, a non-root user, the OCI labels, the tag the chart
// installs) and that the binary in the layer runs.
//
// Without make, git or go on PATH the test skips, except in CI (CI set),
// where it fails.
//
// Usage:
//
//	go test ./test/image/
package image
