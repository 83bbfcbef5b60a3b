package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/steward-oam/steward/internal/version"
)

// PrintVersion writes the build of the running binary: a short layout, or
// yaml or json with format.
func PrintVersion(out io.Writer, format string) error {
	v := version.Get()
	if format != "" {
		return printStructured(out, format, v)
	}
	w := tabwriter.NewWriter(out, 0, 4, 1, ' ', 0)
	commit := v.Commit
	if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(w, "Version:\t%s\n", v.Version)
	fmt.Fprintf(w, "Commit:\t%s\n", commit)
	fmt.Fprintf(w, "Go version:\t%s\n", v.GoVersion)
	fmt.Fprintf(w, "Platform:\t%s\n", v.Platform)
	return w.Flush()
}
